"""When the kernel dies, the notebook says why: each cause of death, caused
for real in the real ipykernel and watched through the real jupyter_client,
ends the running cell with a KernelDied error whose text names the cause,
and the kernel runs the next cell. The deaths are also in the death log, and
a notebook executed headlessly keeps the diagnosis in the crashing cell.

One guarded kernel per environment takes the single deaths in turn (a death
and its restart cost about two seconds); the OOM kill, the death loop and
the notebooks start kernels of their own."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import KERNEL_ENVS, REPO, Kernel, Kernels, write_spec
from support import EXEC_TIMEOUT, Run, children_of, request, wait_until

CRASH_NOTEBOOK = REPO / "testdata" / "notebooks" / "crash" / "crash.ipynb"


# ------------------------------------------------------------- environment


@contextmanager
def as_jupyter_starts_it(**settings):
    """The environment a kernel gets from Jupyter rather than from pytest,
    plus the guard's settings. pytest's PYTEST_CURRENT_TEST makes ipykernel
    leave fds 1 and 2 alone (OutStream's watchfd); in users' kernels they are
    pipes read by a thread inside the kernel, which dies with it. What a
    crash leaves behind must reach the proxy in that setting."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PYTEST_CURRENT_TEST", raising=False)
        for name, value in settings.items():
            mp.setenv(name, str(value))
        yield


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
    """Prints what the cell received: pytest shows it with a failure (and
    with -rP)."""
    print(f"--- {what}\nevalue: {err['evalue']}\ntraceback:\n" + "\n".join(err["traceback"]))


# An OOM kill claimed: the summary's words, or the message's title.
OOM_CLAIM = re.compile(r"out-of-memory killer(?! is not ruled out)|\(out of memory\)|ran out of memory")


# --------------------------------------------------------- the shared kernel


@dataclass
class Witness:
    """A guarded kernel that dies again and again, and what each death
    showed the cell: the death log must have one record for each."""

    k: Kernel
    deaths: list[dict] = field(default_factory=list)  # {cause, evalue, pid}

    def dies(self, code: str, cause: str, what: str) -> tuple[Run, dict]:
        """Runs a cell that kills the kernel. The cell ends as any failed
        cell does (busy, one error output, the error reply, idle) with
        KernelDied; the next cell runs on a fresh kernel, and is not told
        about the death again."""
        pid = self.k.pid()
        r = self.k.run(code)
        err = r.error
        assert err is not None, f"no error output for {code!r}: {r.iopub}\n--- log:\n{self.k.output()}"
        show(what, err)
        assert r.status == "error", r.reply["content"]
        assert err["ename"] == "KernelDied", err
        assert r.reply["content"]["ename"] == "KernelDied"
        assert r.reply["content"]["evalue"] == err["evalue"]
        assert not pid.running()
        self.deaths.append({"cause": cause, "evalue": err["evalue"], "pid": pid.pid})
        self.usable()
        return r, err

    @staticmethod
    def busy_then_idle(r: Run):
        """The cell's status went busy, then idle, as for any request, even
        when the kernel died before its own busy left it. Checked last, so
        the text is checked whatever this says."""
        assert r.states() == ["busy", "idle"], [(m["msg_type"], m["content"]) for m in r.iopub]

    def usable(self):
        r = self.k.ok("print('alive', 6 * 7)")
        assert r.stdout == "alive 42\n", r.stdout
        assert r.stderr == "", f"the death was told again: {r.stderr}"


@pytest.fixture(scope="module")
def witness(module_kernels, kenv) -> Witness:
    # No death loop here: these deaths come fast on purpose.
    with as_jupyter_starts_it(JUPYTER_GUARD_MAX_RESTARTS=1000):
        k = module_kernels.start(kenv.guarded)
    check_fd2_is_captured(k)
    return Witness(k)


# ------------------------------------------------------------- the causes


def test_segfault(witness):
    code = "import ctypes\nreached = True\nctypes.string_at(0)\nprint('not reached')\n"
    r, err = witness.dies(code, "segfault", "segfault")
    text = text_of(err)
    assert re.search(r"segmentation fault", err["evalue"], re.I), err["evalue"]
    assert "SIGSEGV" in text
    # faulthandler's Python stack, through the proxy's pipe: the line.
    assert "line 3" in err["evalue"] and "ctypes.string_at(0)" in err["evalue"], err["evalue"]
    assert re.search(r"cell \[\d+\], line 3, in <module>\n\s+ctypes\.string_at\(0\)", text), text
    assert not OOM_CLAIM.search(text), text
    assert r.stdout == ""
    witness.busy_then_idle(r)


def test_sigkill_from_the_cell(witness):
    code = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    r, err = witness.dies(code, "outside-kill", "SIGKILL")
    text = text_of(err)
    assert re.search(r"killed by (a )?SIGKILL", err["evalue"]), err["evalue"]
    assert not OOM_CLAIM.search(text), text
    # The evidence that rules the OOM killer out is given, not assumed.
    assert "nothing shows that memory ran out" in err["evalue"], err["evalue"]
    assert re.search(r"OOM kills in the kernel's cgroup while it ran: 0\b", text), text
    witness.busy_then_idle(r)


def test_abort(witness):
    code = "import os\nos.abort()\n"
    r, err = witness.dies(code, "abort", "os.abort()")
    text = text_of(err)
    assert re.search(r"abort", err["evalue"], re.I) and "SIGABRT" in err["evalue"], err["evalue"]
    assert "os.abort()" in text and "line 2" in err["evalue"], text
    assert not OOM_CLAIM.search(text), text
    witness.busy_then_idle(r)


def test_exit_code(witness):
    code = "import os\nos._exit(3)\n"
    r, err = witness.dies(code, "exit", "os._exit(3)")
    text = text_of(err)
    assert re.search(r"exited with code 3\b", err["evalue"]), err["evalue"]
    assert not OOM_CLAIM.search(text), text
    assert "SIG" not in err["evalue"], err["evalue"]
    witness.busy_then_idle(r)


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


def test_cuda_error(witness):
    """A test double for the GPU: the cell prints a CUDA crash's last words
    where native code prints them, the stderr the proxy gave the kernel (ipykernel keeps it as
    sys.stderr._original_stdstream_copy), then aborts."""
    code = ("import os, sys\n"
            f"os.write(sys.stderr._original_stdstream_copy, {CUDA_LAST_WORDS.encode()!r})\n"
            "os.abort()\n")
    r, err = witness.dies(code, "cuda-error", "CUDA error (test double)")
    text = text_of(err)
    assert "CUDA error" in err["evalue"] and "device-side assert triggered" in err["evalue"], err["evalue"]
    assert "terminate called after throwing an instance of 'c10::Error'" in text, text
    assert "CUDA_LAUNCH_BLOCKING" in text, text  # the advice
    assert not OOM_CLAIM.search(text), text
    witness.busy_then_idle(r)


def test_native_last_words_on_fd2(witness):
    """What libstdc++ really does before abort(): write to fd 2, which in an
    ipykernel is a pipe read by a thread of the dying process."""
    code = ("import os\n"
            f"os.write(2, {CUDA_LAST_WORDS.encode()!r})\n"
            "os.abort()\n")
    r, err = witness.dies(code, "cuda-error", "CUDA error written to fd 2")
    text = text_of(err)
    assert "CUDA error" in err["evalue"] and "device-side assert triggered" in err["evalue"], err["evalue"]
    assert "terminate called after throwing an instance of 'c10::Error'" in text, text
    witness.busy_then_idle(r)


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
    print(f"--- death while idle\nstderr of the next cell:\n{told}")
    assert r.status == "ok", r.reply["content"]
    assert r.stdout == "after the death\n"
    assert re.search(r"killed by (a )?SIGKILL", told) and "while no cell was running" in flat(told), told
    assert not OOM_CLAIM.search(told), told
    streams = [(m["content"]["name"], m["content"]["text"]) for m in r.of_type("stream")]
    first_out = next(i for i, (name, _) in enumerate(streams) if name == "stdout")
    assert streams[0][0] == "stderr" and "died" in streams[0][1] and 0 < first_out, streams
    witness.deaths.append({"cause": "outside-kill", "evalue": None, "pid": old.pid})
    witness.usable()


def test_death_log(witness, jupyter_dirs):
    """One JSON line per death in the runtime dir, with the cause and the
    summary the cell showed."""
    witness.dies("import os\nos._exit(5)\n", "exit", "os._exit(5) for the log")
    log = jupyter_dirs["JUPYTER_RUNTIME_DIR"] / "jupyter-guard-deaths.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    mine = [r for r in records if r["kernel_id"] == witness.k.kernel_id]
    got = [(r["cause"], r["pid"]) for r in mine]
    want = [(d["cause"], d["pid"]) for d in witness.deaths]
    assert got == want, [(r["cause"], r["pid"], r["summary"]) for r in mine]
    for rec, death in zip(mine, witness.deaths):
        if death["evalue"] is not None:
            assert rec["summary"] == death["evalue"]
    assert log.stat().st_mode & 0o077 == 0, oct(log.stat().st_mode)
