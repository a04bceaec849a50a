"""GPU memory per kernel, and the note under a cell that ran out of it, with
two real guarded kernels on mocked GPUs.

There is no GPU here: the kernels run under bin/guardctl-nvmlmock, guardctl
built with the nvmlmock tag, whose NVML is go-nvml's dgxa100 mock reading
its processes from a JSON file (JUPYTER_GUARD_NVMLMOCK) that the test
writes with the kernels' real pids. Everything else is the production code:
the proxy, the sampler, the control sockets, guardctl status.

The cells raise exceptions whose texts are the frameworks' own
(guard/gpuerr/testdata/errors.json)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import KERNEL_ENVS, REPO, Kernel
from support import cmdline, collect, missing, proxy_argv, read_until_stream, wait_until
from test_guardctl import Guardctl, table

GiB = 1 << 30
K7 = KERNEL_ENVS[0]
ERRORS = json.loads((REPO / "guard" / "gpuerr" / "testdata" / "errors.json").read_text())


def framework_error(framework: str) -> dict:
    """The first real error text of a framework in the testdata."""
    return next(e for e in ERRORS if e["framework"] == framework)


@pytest.fixture(scope="module")
def mock_guardctl(guardctl, tmp_path_factory) -> Path:
    """guardctl built with the nvmlmock tag: next to the guardctl under test
    (make test builds both), else built here."""
    path = guardctl.with_name("guardctl-nvmlmock")
    if not path.exists():
        path = tmp_path_factory.mktemp("bin") / "guardctl-nvmlmock"
        subprocess.run(["go", "build", "-tags", "nvmlmock", "-o", str(path), "./cmd/guardctl"], cwd=REPO, check=True)
    return path


@pytest.fixture(scope="module")
def gpu_state(tmp_path_factory) -> Path:
    """The mocked GPUs' file; every GPU is idle until a test writes it."""
    return tmp_path_factory.mktemp("nvmlmock") / "gpus.json"


def mock_spec(kernelspecs, jupyter_dirs, mock_guardctl: Path, state: Path, name: str, notebook: str,
              wrap: list[str] | None = None, env: dict | None = None) -> str:
    """A guarded ipykernel spec run by the mock guardctl (optionally under
    the wrap command), for notebook."""
    spec = json.loads((kernelspecs[K7.guarded] / "kernel.json").read_text())
    # Not a guard of ipykernel7 to guardctl: `guardctl run --kernel
    # ipykernel7` in a later test must still find ipykernel7-guarded.
    del spec["metadata"]["jupyter_guard"]
    spec["argv"] = [*(wrap or []), str(mock_guardctl), *proxy_argv(spec["argv"])[1:]]
    spec["env"] = {"JUPYTER_GUARD_NVMLMOCK": str(state), "JPY_SESSION_NAME": notebook, **(env or {})}
    d = jupyter_dirs["JUPYTER_DATA_DIR"] / "kernels" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.json").write_text(json.dumps(spec))
    return name


def write_gpus(state: Path, gpus: list[dict]) -> None:
    tmp = state.with_suffix(".tmp")
    tmp.write_text(json.dumps({"gpus": gpus}))
    tmp.replace(state)  # the proxies read it at any time


def measured(k: Kernel, gctl: Guardctl, check) -> dict:
    """The kernel's status once a measurement satisfies check: the guard
    measures GPUs when a cell ends, so each try runs one."""
    def seen():
        k.ok("pass")
        st = gctl.state_of(k)
        return st if check(st) else None
    return wait_until(seen, 30, f"guardctl status of {k.kernel_id} to show its GPU memory", interval=0.3)


def held(st: dict) -> dict[int, int]:
    return {g["index"]: g["used_bytes"] for g in st.get("gpu", []) if g["used_bytes"]}


@pytest.fixture(scope="module")
def two_kernels(module_kernels, kernelspecs, jupyter_dirs, mock_guardctl, gpu_state):
    """Two guarded kernels on the mocked GPUs: the first "holds" 70 GiB of
    GPU 0 (the mock's are 80 GiB A100s), the second 2 GiB there and 1 GiB on GPU 3, and a
    process that is no guarded kernel (this test) holds 5 GiB of GPU 0."""
    first = module_kernels.start(mock_spec(kernelspecs, jupyter_dirs, mock_guardctl, gpu_state, "gpu-first", "train-big.ipynb"))
    second = module_kernels.start(mock_spec(kernelspecs, jupyter_dirs, mock_guardctl, gpu_state, "gpu-second", "small.ipynb"))
    p1, p2 = first.pid().pid, second.pid().pid
    write_gpus(gpu_state, [
        {"index": 0, "processes": [
            {"pid": p1, "used_bytes": 70 * GiB}, {"pid": p2, "used_bytes": 2 * GiB},
            {"pid": os.getpid(), "used_bytes": 5 * GiB}]},
        {"index": 3, "processes": [{"pid": p2, "used_bytes": 1 * GiB}]},
    ])
    return first, second


def test_status_shows_each_kernels_gpu_memory(two_kernels, guardctl):
    gctl = Guardctl(guardctl)
    first, second = two_kernels
    s1 = measured(first, gctl, lambda st: held(st) == {0: 70 * GiB})
    s2 = measured(second, gctl, lambda st: held(st) == {0: 2 * GiB, 3: 1 * GiB})
    gpu0 = next(g for g in s1["gpu"] if g["index"] == 0)
    assert gpu0["in_use_bytes"] == 77 * GiB and gpu0["total_bytes"] == 80 * GiB, gpu0
    assert gpu0["pids"] == [first.pid().pid], gpu0
    assert len(s2["gpu"]) == 8 and "gpu_unknown" not in s2, s2

    out = gctl.ok("status").stdout
    print(f"--- guardctl status:\n{out}")
    rows = {r["KERNEL"]: r for r in table(out)}
    assert rows[first.kernel_id[:8]]["GPU"] == "70 GiB on GPU 0", rows
    assert rows[second.kernel_id[:8]]["GPU"] == "3 GiB on GPUs 0,3", rows
    # The ledger has it per cell: the cell that measured it peaked there.
    cells = table(gctl.ok("cells", first.kernel_id).stdout)
    assert "70 GiB" in [c["GPU PEAK"] for c in cells], cells


def raise_cell(e: dict) -> str:
    """A cell that ends with the framework's exception: its class name and
    its message, as the framework raises it."""
    return f"class {e['ename']}(RuntimeError): pass\nraise {e['ename']}({e['evalue']!r})"


@pytest.mark.parametrize("framework", ["PyTorch", "TensorFlow"])
def test_note_under_a_cell_out_of_gpu_memory(two_kernels, guardctl, framework):
    gctl = Guardctl(guardctl)
    first, second = two_kernels
    measured(first, gctl, lambda st: held(st) == {0: 70 * GiB})  # the first kernel's pids are known
    e = framework_error(framework)
    r = second.run(raise_cell(e))
    assert r.status == "error" and r.error["ename"] == e["ename"], r.reply
    note = r.stderr
    print(f"--- the note under the {framework} cell:\n{note}")
    assert f"jupyter-guard: the GPU ran out of memory ({framework})." in note, note
    assert "GPU 0 (Mock NVIDIA A100-SXM4-80GB): 77 GiB of 80 GiB in use:" in note, note
    lines = [line.strip() for line in note.splitlines()]
    assert lines.index("2 GiB: this kernel") < lines.index(f"70 GiB: the guarded kernel {first.kernel_id[:8]} of train-big.ipynb") \
        < lines.index(f"5 GiB: process {os.getpid()} (not a guarded kernel)"), note
    assert f"in train-big.ipynb" in note and f"guardctl restart {first.kernel_id[:8]}" in note, note
    assert "TF_FORCE_GPU_ALLOW_GROWTH=true" in note and "smaller batch size" in note, note
    # The note comes once, before the cell's idle, and only for such errors.
    assert note.count("jupyter-guard: the GPU ran out of memory") == 1, note
    other = second.run("raise RuntimeError('CUDA error: device-side assert triggered')")
    assert other.status == "error" and "jupyter-guard" not in other.stderr, other.stderr


def test_a_container_without_host_pids_says_so(kernels, kernelspecs, jupyter_dirs, mock_guardctl, gpu_state, guardctl):
    """A proxy in a pid namespace of its own, with its own /proc (a
    container without --pid=host): the driver's host pids name none of its
    processes, so status says the share is unknown instead of showing 0."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True).returncode != 0:
        missing("a pid namespace with its own /proc (unshare as root)")
    gctl = Guardctl(guardctl)
    k = kernels.start(mock_spec(kernelspecs, jupyter_dirs, mock_guardctl, gpu_state, "gpu-container", "boxed.ipynb",
                                wrap=["unshare", "--pid", "--fork", "--mount-proc"]))
    st = measured(k, gctl, lambda st: len(st.get("gpu", [])) == 8)
    assert "cannot see the host's pids" in st["gpu_unknown"], st
    assert held(st) == {}, st
    out = gctl.ok("status").stdout
    print(f"--- guardctl status of a kernel in a container:\n{out}")
    row = next(line for line in out.splitlines() if line.startswith(k.kernel_id[:8]))
    assert "unknown ?" in row, out
    assert f"GPU of {k.kernel_id[:8]}: the kernel's share is unknown: this container cannot see the host's pids" in out, out


def wait_cell(flag: Path) -> str:
    """A cell that runs until the test creates flag, so the guard measures
    the GPUs while it runs."""
    return f"import os, time\nwhile not os.path.exists({str(flag)!r}): time.sleep(0.02)"


def test_warning_past_the_gpu_line(two_kernels, gpu_state, tmp_path):
    """The first kernel comes to hold 75 GiB of GPU 5's 80 while a cell
    runs: past the default line (90%), the cell is warned, once."""
    first, second = two_kernels
    p1, p2 = first.pid().pid, second.pid().pid
    state = json.loads(gpu_state.read_text())
    flag = tmp_path / "done"
    msg_id = first.kc.execute(wait_cell(flag))
    write_gpus(gpu_state, [*state["gpus"], {"index": 5, "processes": [{"pid": p1, "used_bytes": 75 * GiB}]}])
    try:
        seen = read_until_stream(first.kc, msg_id, "GPU memory warning")
    finally:
        flag.touch()
        write_gpus(gpu_state, state["gpus"])
    r = collect(first.kc, msg_id, iopub=seen)
    print(f"--- the GPU warning:\n{r.stderr}")
    assert r.status == "ok", r.reply
    assert "the kernel's processes hold 75 GiB of GPU 5 (Mock NVIDIA A100-SXM4-80GB), 94% of its 80 GiB " \
           "(the warning line is 90%, JUPYTER_GUARD_GPU_WARN);" in r.stderr, r.stderr
    assert r.stderr.count("GPU memory warning") == 1, r.stderr


def test_no_warning_for_a_framework_that_preallocates(two_kernels, gpu_state, tmp_path):
    """A kernel that has loaded TensorFlow's library (here a copy of libm
    under its name: what the guard reads is the process's maps) holds the
    GPU whatever it needs: crossing the line says nothing, and the log says
    why."""
    first, _ = two_kernels
    libm = next(Path(p) for p in ["/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                  "/lib64/libm.so.6"] if Path(p).exists())
    fake_tf = tmp_path / "libtensorflow_framework.so.2"
    shutil.copy(libm, fake_tf)
    first.ok(f"import ctypes; _tf = ctypes.CDLL({str(fake_tf)!r})")
    p1 = first.pid().pid
    state = json.loads(gpu_state.read_text())
    flag = tmp_path / "done"
    msg_id = first.kc.execute(wait_cell(flag))
    write_gpus(gpu_state, [*state["gpus"], {"index": 5, "processes": [{"pid": p1, "used_bytes": 78 * GiB}]}])
    try:
        wait_until(lambda: f"pid {p1} runs TensorFlow, which reserves the GPU" in first.output(), 30,
                   "the proxy's log to say why it does not warn")
    finally:
        flag.touch()
        write_gpus(gpu_state, state["gpus"])
    r = collect(first.kc, msg_id)
    assert r.status == "ok" and "GPU memory warning" not in r.stderr, r.stderr


def test_a_container_given_the_hosts_proc(kernels, kernelspecs, jupyter_dirs, mock_guardctl, gpu_state, guardctl, tmp_path):
    """The same container with the host's /proc mounted inside and named by
    JUPYTER_GUARD_HOST_PROC: the NSpid lines there map the driver's host
    pids to the container's, and status shows what the kernel holds."""
    host_proc = tmp_path / "host-proc"
    host_proc.mkdir()
    # In new pid and mount namespaces: the host's /proc kept at host_proc,
    # a /proc of the container's own mounted over /proc.
    boxed = ["unshare", "--pid", "--fork", "--mount", "sh", "-c",
             f"mount --bind /proc {host_proc} && mount -t proc proc /proc && exec \"$@\"", "sh"]
    if subprocess.run([*boxed, "true"], capture_output=True).returncode != 0:
        missing("pid and mount namespaces (unshare as root)")
    gctl = Guardctl(guardctl)
    k = kernels.start(mock_spec(kernelspecs, jupyter_dirs, mock_guardctl, gpu_state, "gpu-hostproc", "boxed.ipynb",
                                wrap=boxed, env={"JUPYTER_GUARD_HOST_PROC": str(host_proc)}))
    # The kernel's own pid, in the container: not a pid of this /proc
    # (k.pid() looks it up here, and passed only while some host process
    # had the same number).
    inside = int(k.ok("import os; print(os.getpid())").stdout)
    # The wrappers' and the proxy's argv name ipykernel_launcher too.
    host_pid = next(p for p in k.processes() if cmdline(p)[1:3] == ["-m", "ipykernel_launcher"])
    assert inside != host_pid, "the kernel is not in a pid namespace of its own"
    state = json.loads(gpu_state.read_text()) if gpu_state.exists() else {"gpus": []}
    write_gpus(gpu_state, [*state["gpus"], {"index": 2, "processes": [{"pid": host_pid, "used_bytes": 4 * GiB}]}])
    try:
        st = measured(k, gctl, lambda st: held(st) == {2: 4 * GiB})
    finally:
        write_gpus(gpu_state, state["gpus"])
    assert "gpu_unknown" not in st, st
    assert next(g for g in st["gpu"] if g["index"] == 2)["pids"] == [host_pid], st


def test_note_under_a_cell_whose_cuda_would_not_start(two_kernels):
    """PyTorch built for a newer CUDA than the driver's raises a RuntimeError
    and the kernel lives on: the note names the mismatch and the driver
    NVML reports (the dgxa100 mock's)."""
    _, second = two_kernels
    text = json.loads((REPO / "guard" / "gpuerr" / "testdata" / "setup.json").read_text())[2]["lines"][0]
    ename, evalue = text.split(": ", 1)
    r = second.run(f"raise {ename}({evalue!r})")
    assert r.status == "error" and r.error["ename"] == "RuntimeError", r.reply
    print(f"--- the note under a cell whose CUDA would not start:\n{r.stderr}")
    assert "jupyter-guard: this is a driver/library version mismatch, not an error in the notebook's code." in r.stderr
    assert "the error: NVIDIA driver on your system is too old (found version 11040)" in r.stderr, r.stderr
    assert "NVML reports NVIDIA driver 550.54.15 (CUDA 12.4)." in r.stderr, r.stderr
