"""Kernels other than ipykernel, held to a memory budget by the guard, as
users run them: bash_kernel and xeus-python from PyPI (.venv-kernels),
IRkernel from Debian (r-cran-irkernel).

bash_kernel and IRkernel survive an interrupt: a growing cell is stopped
within the budget and the next cell still has the variables. xeus-python
exits on SIGINT (the plain kernel too): the notices must say so before the
guard or the user interrupts it, and its death must be put down to the
interrupt, not to the user's code."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import pytest
import zmq
from jupyter_client.manager import KernelManager

from conftest import REPO, write_spec
from support import EXEC_TIMEOUT, START_TIMEOUT, missing

KERNELS_VENV = REPO / ".venv-kernels"
BUDGET_MIB = 512

# A cell that grows by 16 MiB every 20 ms up to 1.5 GiB, then sleeps: past
# any budget here, yet bounded if the guard failed to stop it.
PY_GROW = ("import time\nb = []\nfor i in range(96):\n"
           "    b.append(bytearray(16 << 20)); time.sleep(0.02)\ntime.sleep(120)")
BASH_GROW = f"python3 -c '{PY_GROW}'"
R_GROW = "x <- list()\nfor (i in 1:96) { x[[i]] <- rep(1.5, 2e6); Sys.sleep(0.02) }\nSys.sleep(120)"

# name: (spec, set a variable, grow, print the variable, what it prints)
KERNELS = {
    "bash": ({"argv": [str(KERNELS_VENV / "bin" / "python"), "-m", "bash_kernel", "-f", "{connection_file}"],
              "display_name": "Bash", "language": "bash", "env": {"PS1": "$"}},
             "keep=42", BASH_GROW, "echo kept $keep", "kept 42"),
    "ir": ({"argv": ["R", "--slave", "-e", "IRkernel::main()", "--args", "{connection_file}"],
            "display_name": "R", "language": "R"},
           "keep <- 42", R_GROW, "cat('kept', keep)", "kept 42"),
    "xpython": ({"argv": [str(KERNELS_VENV / "bin" / "python"), "-m", "xpython_launcher", "-f", "{connection_file}"],
                 "display_name": "Python (XPython)", "language": "python"},
                "keep = 42", PY_GROW, "print('kept', keep)", "kept 42"),
}


@pytest.fixture(scope="module")
def other_kernels(jupyter_dirs) -> Path:
    """The plain kernelspecs, as their installers write them, in the suite's
    own Jupyter path: guardctl guards them on the fly."""
    if not (KERNELS_VENV / "bin" / "python").exists():
        missing(f"{KERNELS_VENV} (scripts/test-venvs makes it from requirements/kernels.txt)")
    kernels_dir = jupyter_dirs["JUPYTER_PATH"] / "kernels"
    for name, (spec, *_) in KERNELS.items():
        write_spec(kernels_dir, name, spec)
    return kernels_dir


def need(name: str):
    if name == "ir" and not (shutil.which("R") and Path("/usr/lib/R/site-library/IRkernel").is_dir()):
        missing("IRkernel: Debian's r-cran-irkernel (.ci/run installs it)")


def outputs(cell) -> str:
    return "".join(o.get("text", "") or "\n".join(o.get("traceback", [])) + "\n" for o in cell.outputs)


def run(guardctl: Path, name: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, list]:
    """guardctl run of a three-cell notebook in kernel name, under a budget
    the second cell outgrows."""
    _, keep, grow, use, _ = KERNELS[name]
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": name, "display_name": name}})
    nb.cells = [nbformat.v4.new_code_cell(c) for c in (keep, grow, use)]
    src, out = tmp_path / f"{name}.ipynb", tmp_path / f"{name}.out.ipynb"
    nbformat.write(nb, src)
    r = subprocess.run([str(guardctl), "run", "--kernel", name, "--limit", f"{BUDGET_MIB}MiB", "--allow-errors",
                        "--timeout", "90s", "-o", str(out), str(src)],
                       capture_output=True, text=True, timeout=300)
    print(f"--- guardctl run {name}: exit {r.returncode}\nstdout:\n{r.stdout}stderr:\n{r.stderr}")
    return r, nbformat.read(out, as_version=4).cells


def used_mib(notice: str) -> float:
    m = re.search(r"use ([\d.]+) MiB of its (\d+) MiB budget", notice)
    assert m and int(m[2]) == BUDGET_MIB, notice
    return float(m[1])


# The interrupt's path, as with the allocation ceiling off; with it, these
# kernels at the ceiling are tests/test_ceiling_kernels.py's.
@pytest.mark.parametrize("name", ["bash", "ir"])
def test_a_growing_cell_is_stopped_within_the_budget_and_the_kernel_goes_on(guardctl, other_kernels, tmp_path, monkeypatch, name):
    need(name)
    monkeypatch.setenv("JUPYTER_GUARD_CEILING", "off")
    r, cells = run(guardctl, name, tmp_path)
    grown = outputs(cells[1])
    assert "jupyter-guard interrupted this cell" in grown, grown
    assert "The kernel and its variables are kept" in grown, grown
    assert used_mib(grown.split("jupyter-guard interrupted")[1]) < BUDGET_MIB
    assert KERNELS[name][4] in outputs(cells[2]), (outputs(cells[2]), r.stderr)
    assert "died" not in r.stderr, r.stderr


def test_xeus_python_is_told_before_that_an_interrupt_ends_it(guardctl, other_kernels, tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_GUARD_CEILING", "off")
    r, cells = run(guardctl, "xpython", tmp_path)
    grown = outputs(cells[1])
    warning = grown.split("jupyter-guard interrupted this cell")[0]
    assert "memory warning" in warning, grown
    assert "ends this kernel (xeus-python 0.19.0)" in warning, warning
    assert "kept" not in warning and "survive" not in warning, warning
    death = grown.split("jupyter-guard: kernel died")[1]
    assert death.startswith(" (ended on an interrupt)"), death
    assert "on the interrupt jupyter-guard sent" in death, death
    assert "exit(), quit()" not in death, death


def test_bash_kernel_paused_then_interrupted_keeps_its_variables(guardctl, other_kernels, tmp_path, monkeypatch):
    """The user's way: the guard pauses the cell, the user presses ■. bash
    must not see its job stop (it would put it in the background and end
    the cell while the job grows on), and the job must get the interrupt."""
    subprocess.run([str(guardctl), "install", "--user", "--kernel", "bash"], check=True, capture_output=True)
    monkeypatch.setenv("JUPYTER_GUARD_LIMIT", f"{BUDGET_MIB}MiB")
    monkeypatch.setenv("JUPYTER_GUARD_ACTION", "pause")
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "bash.ipynb"))  # a notebook's: a person can answer
    km = KernelManager(kernel_name="bash-guarded")
    km.start_kernel(stdout=open(tmp_path / "kernel.log", "w"), stderr=subprocess.STDOUT)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=START_TIMEOUT)
        assert kc.execute_interactive("keep=42", timeout=EXEC_TIMEOUT)["content"]["status"] == "ok"
        msg_id = kc.execute(BASH_GROW)
        text = ""
        while "paused the kernel" not in text:
            m = kc.get_iopub_msg(timeout=EXEC_TIMEOUT)
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
                text += m["content"]["text"]
            assert not (m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                        and m["parent_header"].get("msg_id") == msg_id), f"the cell ended unpaused: {text}"
        km.interrupt_kernel()
        deadline = time.monotonic() + EXEC_TIMEOUT
        while True:
            reply = kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.1))
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        assert reply["content"]["status"] in ("abort", "error"), reply["content"]
        seen = []
        r = kc.execute_interactive("echo kept $keep", timeout=EXEC_TIMEOUT,
                                   output_hook=lambda m: seen.append(m["content"].get("text", "")))
        assert r["content"]["status"] == "ok" and "kept 42" in "".join(seen), (r["content"], seen)
        assert "Stopped" not in text + "".join(seen)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    print((tmp_path / "kernel.log").read_text())


def late_subscriber_hears(km: KernelManager) -> list[tuple[str, dict]]:
    """What a SUB that joins an idle kernel's iopub hears within 3 s."""
    ci = km.get_connection_info()
    sock = zmq.Context.instance().socket(zmq.SUB)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"{ci['transport']}://{ci['ip']}:{ci['iopub_port']}")
    heard = []
    try:
        deadline = time.monotonic() + 3
        while (left := deadline - time.monotonic()) > 0:
            if sock.poll(int(left * 1000)):
                frames = sock.recv_multipart()
                i = frames.index(b"<IDS|MSG>")
                heard.append((json.loads(frames[i + 2])["msg_type"], json.loads(frames[i + 5])))
    finally:
        sock.close()
    return heard


def test_xeus_python_greets_a_late_subscriber_through_the_proxy(guardctl, other_kernels):
    """JEP 65: xeus-python's iopub is an XPUB and greets each subscription
    with an iopub_welcome. Behind the proxy the kernel sees only the proxy's
    subscription: the proxy greets each frontend's itself, as the plain
    kernel would."""
    subprocess.run([str(guardctl), "install", "--user", "--kernel", "xpython"], check=True, capture_output=True)
    heard = {}
    for spec in ("xpython", "xpython-guarded"):
        km = KernelManager(kernel_name=spec)
        km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=START_TIMEOUT)
            heard[spec] = late_subscriber_hears(km)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    assert heard["xpython"] == [("iopub_welcome", {"subscription": ""})], heard
    assert heard["xpython-guarded"] == heard["xpython"], heard
