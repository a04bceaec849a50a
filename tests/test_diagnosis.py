"""When the kernel dies, the notebook says why: each cause of death, caused
for real in the real ipykernel and watched through the real jupyter_client,
ends the running cell with a KernelDied error whose text names the cause,
and the kernel runs the next cell. Every death is in the death log; a death
loop stops the restarts; a notebook executed headlessly keeps the diagnosis
in the crashing cell.

One guarded kernel per environment takes the single deaths in turn (each
death and restart costs about two seconds); the OOM kill, the death loop
and the notebooks start kernels of their own."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError

from conftest import REPO, Kernel, Kernels, write_spec
from support import (EXEC_TIMEOUT, MemoryCgroup, Run, as_jupyter_starts_it, children_of, collect_all, execute,
                     read_until_stream, request, wait_until)

CRASH_NOTEBOOK = REPO / "testdata" / "notebooks" / "crash" / "crash.ipynb"
MiB = 1 << 20


# ------------------------------------------------------------- environment


def check_fd2_is_captured(k: Kernel):
    """The kernel's fd 2 is ipykernel's pipe, not the proxy's, as for users."""
    r = k.ok("import os, sys\n"
             "print(os.readlink('/proc/self/fd/2'))\n"
             "print(os.readlink(f'/proc/self/fd/{sys.stderr._original_stdstream_copy}'))")
    captured, original = r.stdout.split()
    assert captured != original, f"ipykernel does not capture fd 2 in {k.spec}: {r.stdout}"


# ----------------------------------------------------------------- reading


def text_of(err: dict) -> str:
    """An error's evalue and traceback, checked against the message spec."""
    assert isinstance(err.get("evalue"), str), err
    tb = err.get("traceback")
    assert isinstance(tb, list) and all(isinstance(line, str) for line in tb), err
    return "\n".join([err["evalue"], *tb])


def flat(text: str) -> str:
    """text with its lines joined: the message wraps long sentences."""
    return " ".join(text.split())


def show(what: str, err: dict):
    """Prints what the cell received; pytest shows it with a failure (and
    with -rP)."""
    print(f"--- {what}\nevalue: {err['evalue']}\ntraceback:\n" + "\n".join(err["traceback"]))


# An OOM kill claimed: the summary's words or the message's title. The
# SIGKILL message may say that nothing shows memory ran out; that is no claim.
# Match on the text with its line wrapping undone.
OOM_CLAIM = re.compile(r"out-of-memory killer(?! is not ruled out)|\(out of memory\)|(?<!nothing shows that )memory ran out")

# The cause the death log names, from the title the cell showed:
# "jupyter-guard: kernel died (<title>)".
CAUSE_OF_TITLE = {"out of memory": "oom-kill-cgroup", "killed by SIGKILL": "outside-kill",
                  "CUDA error": "cuda-error", "crash": "segfault", "abort": "abort", "exited": "exit",
                  "fatal Python error": "python-fatal-error", "signal": "signal",
                  "the machine ran out of memory": "oom-kill-host"}

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def earlier_cells(text: str) -> dict[str, float]:
    """The Memory section's "earlier cells that grew the most": code → bytes."""
    cells = {}
    for m in re.finditer(r"^    \[\d+\] ([+-]?[\d.]+) (\w+)  (.*)$", text, re.M):
        cells[m[3]] = float(m[1]) * UNITS[m[2]]
    return cells


def cause_shown(text: str) -> str:
    m = re.match(r"jupyter-guard: kernel died \((.*)\)\n", text)
    assert m, f"no title line: {text}"
    return CAUSE_OF_TITLE[m[1]]


# -------------------------------------------------------- the shared kernel


@dataclass
class Death:
    pid: int
    cause: str  # as the cell's title showed it
    evalue: str | None  # None for a death told in the next cell
    states: list[str]


@dataclass
class Witness:
    """A guarded kernel that dies again and again, and what each death
    showed: the death log must have one record for each."""

    k: Kernel
    deaths: list[Death] = field(default_factory=list)

    def dies(self, code: str, what: str, gate: tuple[str, Path] | None = None) -> tuple[Run, dict]:
        """Runs a cell that kills the kernel. The cell ends with one error
        output, KernelDied, the same in the error reply; the next cell runs
        on a fresh kernel and is not told about the death again. With gate
        (text, path), path is created once the cell's output shows text,
        for a cell that dies only then."""
        pid = self.k.pid()
        if gate is None:
            r = self.k.run(code)
        else:
            msg_id = self.k.kc.execute(code)
            seen = read_until_stream(self.k.kc, msg_id, gate[0])
            gate[1].touch()
            r = collect_all(self.k.kc, {msg_id: seen})[msg_id]
        err = r.error
        assert err is not None, f"no error output for {code!r}: {r.iopub}\n--- log:\n{self.k.output()}"
        show(what, err)
        assert r.status == "error", r.reply["content"]
        assert err["ename"] == "KernelDied", err
        assert r.reply["content"]["ename"] == "KernelDied"
        assert r.reply["content"]["evalue"] == err["evalue"]
        assert r.reply["content"]["traceback"] == err["traceback"]
        assert "\n".join(err["traceback"]).startswith("jupyter-guard: kernel died ("), err["traceback"]
        assert not pid.running()
        self.deaths.append(Death(pid.pid, cause_shown("\n".join(err["traceback"])), err["evalue"], r.states()))
        self.usable()
        return r, err

    def usable(self):
        r = self.k.ok("print('alive', 6 * 7)")
        assert r.stdout == "alive 42\n", r.stdout
        assert r.stderr == "", f"the death was told again: {r.stderr}"


@pytest.fixture(scope="module")
def witness(module_kernels, kenv) -> Witness:
    # These deaths come fast on purpose: no death loop here.
    with as_jupyter_starts_it(JUPYTER_GUARD_MAX_RESTARTS=1000):
        k = module_kernels.start(kenv.guarded)
    check_fd2_is_captured(k)
    return Witness(k)


# --------------------------------------------------------------- the causes


def test_segfault(witness):
    code = "import ctypes\nreached = True\nctypes.string_at(0)\nprint('not reached')\n"
    r, err = witness.dies(code, "segfault")
    text = text_of(err)
    assert re.search(r"segmentation fault", err["evalue"], re.I) and "SIGSEGV" in err["evalue"], err["evalue"]
    # faulthandler's Python stack, through the proxy's own pipe: the line.
    assert re.search(r"cell \[\d+\], at line 3: ctypes\.string_at\(0\)", err["evalue"]), err["evalue"]
    assert re.search(r"cell \[\d+\], line 3, in <module>\n\s+ctypes\.string_at\(0\)\n", text), text
    assert "killed by SIGSEGV (signal 11)" in text, text
    assert not OOM_CLAIM.search(" ".join(text.split())), text
    assert r.stdout == ""


def test_sigkill_from_the_cell(witness):
    code = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    _, err = witness.dies(code, "SIGKILL")
    text = text_of(err)
    assert re.search(r"killed by (a )?SIGKILL", err["evalue"]), err["evalue"]
    assert not OOM_CLAIM.search(" ".join(text.split())), text
    # What rules the OOM killer out is shown, not assumed.
    assert "nothing shows that memory ran out" in err["evalue"], err["evalue"]
    assert re.search(r"OOM kills in the kernel's cgroup while it ran: 0\b", text), text


def test_abort(witness):
    _, err = witness.dies("import os\nos.abort()\n", "os.abort()")
    text = text_of(err)
    assert re.search(r"\babort", err["evalue"], re.I) and "SIGABRT" in err["evalue"], err["evalue"]
    assert re.search(r"at line 2: os\.abort\(\)", err["evalue"]), err["evalue"]
    assert not OOM_CLAIM.search(" ".join(text.split())), text


def test_exit_code(witness):
    _, err = witness.dies("import os\nos._exit(3)\n", "os._exit(3)")
    text = text_of(err)
    assert re.search(r"exited with code 3\b", err["evalue"]), err["evalue"]
    assert "SIG" not in err["evalue"], err["evalue"]
    assert not OOM_CLAIM.search(" ".join(text.split())), text


# What PyTorch prints when a CUDA kernel's assert fires and the error
# escapes into C++: libstdc++'s terminate handler, then abort().
CUDA_LAST_WORDS = (
    "terminate called after throwing an instance of 'c10::Error'\n"
    "  what():  CUDA error: device-side assert triggered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, "
    "so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 "
    "(most recent call first):\n"
)


def check_cuda(err: dict):
    text = text_of(err)
    assert "CUDA error" in err["evalue"] and "device-side assert triggered" in err["evalue"], err["evalue"]
    assert "terminate called after throwing an instance of 'c10::Error'" in text, text
    assert "CUDA_LAUNCH_BLOCKING" in text, text  # the advice
    assert not OOM_CLAIM.search(" ".join(text.split())), text


def test_cuda_error(witness):
    """A test double for the GPU: the cell writes a CUDA crash's last words
    to the stderr the proxy gave the kernel (ipykernel keeps it open as
    sys.stderr._original_stdstream_copy), then aborts."""
    code = ("import os, sys\n"
            f"os.write(sys.stderr._original_stdstream_copy, {CUDA_LAST_WORDS.encode()!r})\n"
            "os.abort()\n")
    _, err = witness.dies(code, "CUDA error (test double, written to the proxy's stderr)")
    check_cuda(err)


def test_cuda_error_written_to_fd2(witness, tmp_path):
    """The same last words where libstdc++ really writes them before
    abort(): fd 2, which in an ipykernel is a pipe read by a thread of the
    process that is dying. The proxy keeps what that thread forwarded as a
    stream and what it left in the pipe; text the thread had read but not
    yet sent when the process died is lost with the process, so the cell
    aborts only once its words have been forwarded (the frontend has them),
    as a library that logs before it aborts usually gives them time to be."""
    gate = tmp_path / "abort-now"
    code = (f"import os, time\nos.write(2, {CUDA_LAST_WORDS.encode()!r})\n"
            f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.01)\nos.abort()\n")
    _, err = witness.dies(code, "CUDA error (written to fd 2)", gate=("most recent call first", gate))
    check_cuda(err)


def test_death_while_idle(witness):
    """Killed from outside between cells: the next cell starts with why
    (before its own output), then runs."""
    k = witness.k
    old = k.pid()
    os.kill(old.pid, signal.SIGKILL)
    wait_until(lambda: [p for p in children_of(k.proc.pid) if p != old.pid], EXEC_TIMEOUT,
               "the proxy to start a new kernel")
    r = k.run("print('after the death')")
    told = r.stderr
    print(f"--- death while idle: the next cell's stderr\n{told}")
    assert r.status == "ok", r.reply["content"]
    assert r.stdout == "after the death\n"
    assert re.search(r"killed by (a )?SIGKILL", told) and "while no cell was running" in flat(told), told
    assert not OOM_CLAIM.search(" ".join(told.split())), told
    streams = [(m["content"]["name"], m["content"]["text"]) for m in r.of_type("stream")]
    assert streams[0][0] == "stderr" and streams[0][1].startswith("jupyter-guard: kernel died"), streams
    assert streams[-1] == ("stdout", "after the death\n"), streams
    witness.deaths.append(Death(old.pid, cause_shown(told), None, []))
    witness.usable()


def test_memory_section_blames_the_cells_that_grew(witness):
    """A SIGKILL's message lists the earlier cells that grew the most: the
    cell that really grew, by what it grew, and not the cells that only
    printed (a fresh ipykernel grows by ~0.3 MiB in its first cell; the
    kernel's own start-up is no cell's doing)."""
    witness.k.ok("grown = b'x' * (64 << 20)")
    _, err = witness.dies("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "SIGKILL after a cell grew")
    cells = earlier_cells(text_of(err))
    assert 60 * MiB <= cells.get("grown = b'x' * (64 << 20)", 0) <= 72 * MiB, cells
    assert max(cells, key=cells.get) == "grown = b'x' * (64 << 20)", cells
    trivial = {"import os; print(os.getpid())", "print('alive', 6 * 7)"}
    blamed = {code: f"{grew / MiB:.1f} MiB" for code, grew in cells.items() if code in trivial and grew > 8 * MiB}
    assert not blamed, f"cells that only printed blamed for growth: {blamed}"


def test_dying_cells_go_busy_then_idle(witness):
    """Every cell that died went busy, then idle, as any request does, also
    when the kernel died before its own busy left it (ipykernel publishes
    from a thread; a fast death often beats it). A death at the cell's first
    statement, then all the deaths before."""
    witness.dies("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "SIGKILL at once")
    ran = [d for d in witness.deaths if d.evalue is not None]
    assert all(d.states == ["busy", "idle"] for d in ran), [(d.cause, d.states) for d in ran]


def test_death_log(witness, jupyter_dirs):
    """One JSON line per death in the runtime dir, with the cause and the
    summary the cell showed."""
    witness.dies("import os\nos._exit(5)\n", "os._exit(5)")
    log = jupyter_dirs["JUPYTER_RUNTIME_DIR"] / "jupyter-guard-deaths.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    mine = [r for r in records if r["kernel_id"] == witness.k.kernel_id]
    assert [(r["pid"], r["cause"]) for r in mine] == [(d.pid, d.cause) for d in witness.deaths], \
        [(r["pid"], r["cause"], r["summary"]) for r in mine]
    for rec, death in zip(mine, witness.deaths):
        if death.evalue is not None:
            assert rec["summary"] == death.evalue
    assert log.stat().st_mode & 0o077 == 0, oct(log.stat().st_mode)


# ------------------------------------------------------------- OOM kill


OOM_LIMIT = 512 * MiB


def kernel_log_readable() -> bool:
    """Whether this machine lets processes of the test's user read /dev/kmsg
    (containers usually do not), as guardctl does for its OOM evidence."""
    try:
        os.close(os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK))
        return True
    except OSError:
        return False


@pytest.fixture
def oom_kernel(kenv, kernelspecs, jupyter_dirs, tmp_path):
    """The guarded kernel, proxy and child both inside a fresh 512 MiB
    memory cgroup from birth, with the guard only warning and no allocation
    ceiling (it must not prevent the OOM kill). The kernel is shut down and
    the group removed afterwards, whatever the test did."""
    cg = MemoryCgroup.create(OOM_LIMIT)
    spec_dir = None
    ks = Kernels(tmp_path)
    try:
        spec = json.loads((kernelspecs[kenv.guarded] / "kernel.json").read_text())
        spec["argv"] = cg.wrap(spec["argv"])
        spec["display_name"] += " (in a 512 MiB cgroup)"
        spec_dir = write_spec(jupyter_dirs["JUPYTER_DATA_DIR"] / "kernels", f"{kenv.guarded}-{cg.dir.name}", spec)
        with as_jupyter_starts_it(JUPYTER_GUARD_ACTION="warn", JUPYTER_GUARD_CEILING="off"):
            k = ks.start(spec_dir.name)
        yield k, cg
    finally:
        try:
            ks.shutdown_all()
        finally:
            cg.remove()
            if spec_dir is not None:
                shutil.rmtree(spec_dir)


def test_oom_kill_in_a_memory_cgroup(oom_kernel, jupyter_dirs):
    k, cg = oom_kernel
    child = k.pid()
    assert {k.proc.pid, child.pid} <= set(cg.procs()), (k.proc.pid, child.pid, cg.procs())
    k.ok("import numpy as np\nblocks = []")
    r = k.run("while True:\n    blocks.append(np.ones(32 << 20, dtype=np.uint8))\n")
    err = r.error
    assert err is not None, f"no error output: {r.iopub}\n--- log:\n{k.output()}"
    show("OOM kill", err)
    text = text_of(err)
    assert r.status == "error" and err["ename"] == "KernelDied", err
    assert not child.running()
    assert cg.oom_kills() >= 1
    evalue = err["evalue"]
    assert re.search(r"out[- ]of[- ]memory", evalue), evalue
    assert text.startswith(evalue + "\njupyter-guard: kernel died (out of memory)\n"), text
    assert "the limit is 512 MiB" in evalue, evalue
    if kernel_log_readable():
        assert re.search(r"kernel log: Memory cgroup out of memory: Killed process %d\b" % child.pid, flat(text)), text
    # Usable again, in the same group; the death is in the log.
    r2 = k.ok("print('alive after the OOM kill')")
    assert r2.stdout == "alive after the OOM kill\n" and r2.stderr == "", (r2.stdout, r2.stderr)
    assert k.pid().pid in cg.procs()
    log = jupyter_dirs["JUPYTER_RUNTIME_DIR"] / "jupyter-guard-deaths.jsonl"
    mine = [rec for rec in map(json.loads, log.read_text().splitlines()) if rec["kernel_id"] == k.kernel_id]
    assert [(d["pid"], d["cause"], d["summary"]) for d in mine] == [(child.pid, "oom-kill-cgroup", evalue)]
    # The cell's growth, in MiB or GiB: it appended 32 MiB blocks up to the limit.
    grew = re.search(r"the cell had added (\d+(?:\.\d+)?) (MiB|GiB)", evalue)
    assert grew, evalue
    assert 64 <= float(grew[1]) * (1024 if grew[2] == "GiB" else 1) <= 512, evalue
    # Last, the earlier cells: the first one only printed a pid (the group's
    # usage grows by ~1 MiB in it); the kernel's start-up is not its doing.
    cells = earlier_cells(text)
    assert cells.get("import os; print(os.getpid())", 0) < 8 * MiB, cells


# ------------------------------------------------------------ death loop

MAX_RESTARTS = 2


def parentless(kc, seconds: float) -> list[dict]:
    """The iopub messages with no parent that come within seconds."""
    out, deadline = [], time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            m = kc.get_iopub_msg(timeout=left)
        except queue.Empty:
            break
        if not m["parent_header"]:
            out.append(m)
    return out


def test_death_loop_stops_the_restarts(kernels, kenv):
    """JUPYTER_GUARD_MAX_RESTARTS=2: the kernel is restarted twice; the next
    death stops the restarts, says so, and every request after it gets an
    error saying so instead of waiting for a kernel that will not come. A
    restart from the Kernel menu starts over."""
    with as_jupyter_starts_it(JUPYTER_GUARD_MAX_RESTARTS=MAX_RESTARTS):
        k = kernels.start(kenv.guarded)
    restarts = 0
    for death in range(1, MAX_RESTARTS + 2):
        r = k.run("import os\nos._exit(1)\n")
        err = r.error
        assert err is not None and err["ename"] == "KernelDied", r.iopub
        show(f"death {death} of a loop", err)
        text = flat(text_of(err))
        if "stopped restarting" in text:
            break
        assert "is restarting the kernel" in text, text
        assert k.ok(f"print('restart', {death})").stdout == f"restart {death}\n"
        restarts += 1
    else:
        pytest.fail(f"{MAX_RESTARTS + 1} deaths and the restarts did not stop")
    assert "is restarting" not in text, text
    assert re.search(r"stopped restarting the kernel after \d+ deaths", text), text
    # The frontend is told the kernel is dead, as jupyter_server tells it
    # when its own restarts stop: a status with no parent, after the cell.
    states = [m["content"]["execution_state"] for m in parentless(k.kc, 5) if m["msg_type"] == "status"]
    assert states[-1:] == ["dead"], states

    # No kernel comes: a cell gets the error at once (the timeout only
    # stops a hang), and so does any other request.
    r = k.run("print('anyone?')", timeout=30)
    err = r.error
    assert err is not None, r.iopub
    show("a cell after the restarts stopped", err)
    assert r.status == "error" and err["ename"] == "KernelDied" and r.stdout == ""
    assert "stopped restarting" in flat(text_of(err)), err
    assert r.states() == ["busy", "idle"]
    reply = request(k.kc, "shell", "complete_request", {"code": "pri", "cursor_pos": 3}, timeout=30)
    assert reply["content"]["status"] == "error" and "stopped restarting" in flat(text_of(reply["content"]))

    # What the message tells the user to do works.
    k.km.restart_kernel()
    k.kc.wait_for_ready(timeout=60)
    k.flush_shell()
    assert k.ok("print('back')").stdout == "back\n"
    assert restarts == MAX_RESTARTS, f"JUPYTER_GUARD_MAX_RESTARTS={MAX_RESTARTS} allowed {restarts} restarts"


# -------------------------------------------------------------- notebook


def executed_with_nbclient(kernel_name: str, out: Path, restart: str) -> str | None:
    """Runs the crash notebook with nbclient and allow_errors, as papermill
    does, and writes what it got to out; the exception's name, if any."""
    nb = nbformat.read(CRASH_NOTEBOOK, as_version=4)
    raised = None
    with as_jupyter_starts_it(JUPYTER_GUARD_RESTART=restart):
        try:
            NotebookClient(nb, kernel_name=kernel_name, timeout=120, startup_timeout=60, allow_errors=True).execute()
        except DeadKernelError as e:
            raised = type(e).__name__
    nbformat.write(nb, out / CRASH_NOTEBOOK.name)
    return raised


def executed_with_nbconvert(kernel_name: str, out: Path, restart: str) -> str | None:
    """`jupyter nbconvert --execute --allow-errors`: it writes the notebook
    only if the run ends; else the exception's name from its stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["JUPYTER_GUARD_RESTART"] = restart
    r = subprocess.run([str(REPO / ".venv" / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                        "--allow-errors", f"--ExecutePreprocessor.kernel_name={kernel_name}",
                        "--ExecutePreprocessor.timeout=120", "--output-dir", str(out), str(CRASH_NOTEBOOK)],
                       capture_output=True, text=True, timeout=300, env=env)
    if r.returncode == 0:
        return None
    assert "DeadKernelError: Kernel died" in r.stderr, r.stderr
    # The guard's diagnosis is in the log where the kernel's output goes.
    assert re.search(r"kernel pid \d+ died: The kernel crashed with a segmentation fault", r.stderr), r.stderr
    return "DeadKernelError"


def check_crash_cell(crash):
    assert len(crash.outputs) == 1, crash.outputs
    out = crash.outputs[0]
    assert out["output_type"] == "error" and out["ename"] == "KernelDied", out
    assert re.search(r"segmentation fault", out["evalue"], re.I), out["evalue"]
    assert "ctypes.string_at(0)" in out["evalue"], out["evalue"]
    assert "\n".join(out["traceback"]).startswith("jupyter-guard: kernel died (crash)")


@pytest.mark.parametrize("how", [
    pytest.param(executed_with_nbclient, id="nbclient"),
    pytest.param(executed_with_nbconvert, id="nbconvert"),
])
def test_a_headless_run_stops_as_jupyter_does_with_the_diagnosis_in_the_cell(kenv, kernelspecs, tmp_path, how):
    """nbclient and nbconvert restart no kernel. The proxy sees that no
    Jupyter server started it (`auto`): it tells the crashing cell why and
    ends with the kernel, so the client raises DeadKernelError, as it does
    for a plain kernel, and papermill's handling of a dead kernel works,
    rather than run the rest of the notebook in a kernel without its
    variables."""
    raised = how(kenv.guarded, tmp_path, "auto")
    assert raised == "DeadKernelError"
    if how is executed_with_nbconvert:
        return  # nbconvert writes no notebook when the run fails
    saved = nbformat.read(tmp_path / CRASH_NOTEBOOK.name, as_version=4)
    before, crash, after = [c for c in saved.cells if c.cell_type == "code"]
    assert [o.get("text") for o in before.outputs] == ["set before the crash\n"], before.outputs
    check_crash_cell(crash)
    assert after.outputs == [], after.outputs


@pytest.mark.parametrize("how", [
    pytest.param(executed_with_nbclient, id="nbclient"),
    pytest.param(executed_with_nbconvert, id="nbconvert"),
])
def test_a_headless_run_the_proxy_restarts_keeps_the_diagnosis(kenv, kernelspecs, tmp_path, how):
    """With JUPYTER_GUARD_RESTART=guard the proxy restarts the kernel in
    place: the crashing cell ends with the diagnosis and the run goes on."""
    assert how(kenv.guarded, tmp_path, "guard") is None
    saved = nbformat.read(tmp_path / CRASH_NOTEBOOK.name, as_version=4)
    nbformat.validate(saved)
    before, crash, after = [c for c in saved.cells if c.cell_type == "code"]
    assert [o.get("text") for o in before.outputs] == ["set before the crash\n"], before.outputs
    check_crash_cell(crash)
    # The cell after it ran on the new kernel, where `before` is gone.
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in after.outputs] == \
        [("stream", "stdout", "after the crash\nFalse\n")], after.outputs


def test_a_restart_after_the_restarts_stopped_starts_clean(kernels, kenv, guardctl):
    """JUPYTER_GUARD_MAX_RESTARTS=0 and a death between cells: the restarts
    stop at once. guardctl restart, as the notice says, brings a kernel
    back, and its first cell runs clean, without the stale notice that the
    restarts stopped."""
    with as_jupyter_starts_it(JUPYTER_GUARD_MAX_RESTARTS=0):
        k = kernels.start(kenv.guarded)
    os.kill(k.pid().pid, signal.SIGKILL)
    wait_until(lambda: "stopped restarting" in k.output() or "died" in k.output(), 30, "the proxy to see the death")
    subprocess.run([str(guardctl), "restart", k.kernel_id[:8]], check=True, capture_output=True, timeout=60)
    r = k.run("print('back')", timeout=60)
    assert r.status == "ok" and r.stdout == "back\n" and r.error is None, r.iopub
    assert "jupyter-guard" not in r.stderr, r.stderr


# A kernel that cannot start: one that says why on stderr and exits 3, one
# whose program is missing.
START_STDERR = "my-kernel: cannot read its configuration"


def failing_spec(how: str, jupyter_dirs, guardctl, kenv) -> str:
    """Installs a kernelspec that fails as it starts, and its guarded form;
    returns the guarded form's name."""
    argv = {"exits": [str(kenv.python), "-c", f"import sys; print({START_STDERR!r}, file=sys.stderr); sys.exit(3)"],
            "missing": [str(jupyter_dirs["JUPYTER_PATH"] / "no-such-kernel")]}[how]
    name = f"{how}-at-start"
    write_spec(jupyter_dirs["JUPYTER_PATH"] / "kernels", name, {
        "argv": [*argv, "-f", "{connection_file}"], "display_name": f"{how} at start", "language": "python"})
    subprocess.run([str(guardctl), "install", "--user", "--kernel", name], check=True, capture_output=True)
    return name + "-guarded"


def says_why(text: str, how: str, kenv) -> bool:
    """The exit code and the last line of stderr, or the missing program."""
    text = flat(text)
    if how == "exits":
        return "exited with code 3" in text and START_STDERR in text and str(kenv.python) in text
    return "no-such-kernel" in text and "could not be started" in text


def start_failures(kid: str) -> list[dict]:
    log = Path(os.environ["JUPYTER_RUNTIME_DIR"]) / "jupyter-guard-deaths.jsonl"
    return [r for r in map(json.loads, log.read_text().splitlines()) if r["kernel_id"] == kid]


@pytest.mark.parametrize("how", ["exits", "missing"])
def test_a_kernel_that_dies_at_every_start_gets_an_answer(kernelspecs, jupyter_dirs, guardctl, kenv, how):
    """Restarted in place (as under a Jupyter server): a client waiting for
    the kernel gets a kernel_info_reply it can read at once (jupyter_client
    raised KeyError: 'protocol_version'), and its first cell why: the exit
    code and the last line of stderr, or the missing program. The restarts
    back off and stop, every attempt is in the death log, and the notice
    that they stopped repeats the last death."""
    km = KernelManager(kernel_name=failing_spec(how, jupyter_dirs, guardctl, kenv))
    km.start_kernel()
    kid = Path(km.connection_file).stem.removeprefix("kernel-")
    kc = km.client()
    kc.start_channels()
    try:
        start = time.monotonic()
        kc.wait_for_ready(timeout=30)
        r = execute(kc, "print('anyone?')", timeout=30)
        took = time.monotonic() - start
        err = r.error
        assert err is not None, r.iopub
        show(f"the first cell, after {took:.1f} s", err)
        assert r.status == "error" and says_why(text_of(err), how, kenv), err
        assert took < 10, f"the first cell was told after {took:.1f} s"

        wait_until(lambda: len(start_failures(kid)) == 6, 30, "the first start and five restarts")
        records = start_failures(kid)
        assert {r["cause"] for r in records} == {"exit" if how == "exits" else "start-failed"}, records
        # Backed off: a quarter of a second, doubling (7.75 s in all).
        times = [datetime.fromisoformat(r["time"]) for r in records]
        assert (times[-1] - times[0]).total_seconds() >= 7, times
        reply = wait_until(lambda: (rep := kc.kernel_info(reply=True, timeout=30)["content"]) and
                           "stopped restarting" in rep["evalue"] and rep, 30, "the restarts to stop")
        print(reply)
        assert reply["status"] == "error" and reply["protocol_version"].startswith("5."), reply
        assert reply["language_info"]["name"] == "python", reply
        r = execute(kc, "print('anyone?')", timeout=30)
        assert "stopped restarting" in flat(text_of(r.error)) and says_why(text_of(r.error), how, kenv), r.error
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.parametrize("how", ["exits", "missing"])
def test_a_kernel_that_cannot_start_tells_nbclient_why(kernelspecs, jupyter_dirs, guardctl, kenv, how):
    """Headless (nbclient restarts no kernel): no restart, wait_for_ready
    returns, and nbclient fails at the first cell with why, where with a
    plain kernel it says only "Kernel died before replying to
    kernel_info"; within 10 s."""
    name = failing_spec(how, jupyter_dirs, guardctl, kenv)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('anyone?')")])
    start = time.monotonic()
    with as_jupyter_starts_it(JUPYTER_GUARD_RESTART="auto"), pytest.raises(CellExecutionError) as raised:
        NotebookClient(nb, kernel_name=name, timeout=60, startup_timeout=60).execute()
    took = time.monotonic() - start
    print(f"nbclient raised after {took:.1f} s:\n{raised.value}")
    assert says_why(str(raised.value), how, kenv), str(raised.value)
    assert took < 10
    assert "does not start it again" in flat(str(raised.value)) or "does not try again" in flat(str(raised.value))
