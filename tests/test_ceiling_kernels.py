"""Issue 28: kernels other than ipykernel at the allocation ceiling, as
users run them, under a 512 MiB budget on the kernel's processes
(JUPYTER_GUARD_LIMIT), with nobody to answer a pause.

- xeus-python and IRkernel raise their memory error (MemoryError, R's
  "cannot allocate vector") and go on with their variables.
- bash_kernel: a program a cell runs fails on its own (its MemoryError is
  the program's output, with no note of the guard's); bash itself cannot
  grow past its line, and bash_kernel then restarts bash without its
  variables: the guard's warning says so beforehand, the note after.
- Deno: a typed array it cannot allocate is a RangeError it lives
  through; its JavaScript heap that cannot grow ends it (V8's "Fatal
  process out of memory"): the warning says so beforehand, and the death
  is put down to the ceiling. An interrupt ends it too (SIGINT, as its
  kernelspec has it), so the ceiling is what stops its cell."""

from __future__ import annotations

import json
import re
import os
import subprocess
from pathlib import Path

import pytest

from conftest import Kernels, write_spec
from support import NEAR, REFUSED, WARNING, headless
from test_other_kernels_guarded import KERNELS, KERNELS_VENV, need
from test_other_kernels import DENO

LIMIT = "512MiB"


@pytest.fixture(scope="module")
def specs(jupyter_dirs, guardctl):
    """The plain kernelspecs as their installers write them, and their
    guarded wrappers, installed the users' way."""
    if not (KERNELS_VENV / "bin" / "python").exists():
        pytest.fail(f"{KERNELS_VENV} is missing (scripts/test-venvs makes it from requirements/kernels.txt)")
    kernels_dir = jupyter_dirs["JUPYTER_PATH"] / "kernels"
    for name, (spec, *_) in KERNELS.items():
        write_spec(kernels_dir, name, spec)
    write_spec(kernels_dir, "deno", {"argv": [str(DENO), "jupyter", "--kernel", "--conn", "{connection_file}"],
                                     "display_name": "Deno", "language": "typescript"})
    for name in [*KERNELS, "deno"]:
        subprocess.run([str(guardctl), "install", "--user", "--kernel", name], check=True, capture_output=True)


@pytest.fixture
def start(specs, tmp_path):
    ks = Kernels(tmp_path)

    def start(name: str, **settings):
        with headless(JUPYTER_GUARD_LIMIT=LIMIT, **settings):
            return ks.start(name + "-guarded")

    yield start
    ks.shutdown_all()


def noted(r) -> bool:
    return REFUSED in r.stderr or NEAR in r.stderr


def test_xeus_python_lives_on(start):
    k = start("xpython")
    k.ok("keep = 42")
    for code in ["big = bytearray(2 << 30)", "d = {}\ni = 0\nwhile True:\n    d[i] = (i, str(i))\n    i += 1"]:
        r = k.run(code)
        assert r.status == "error" and "MemoryError" in r.error["ename"], \
            f"{r.reply['content']}\n--- the note:\n{r.stderr}\n--- the proxy and the kernel:\n{k.output()[-5000:]}"
        assert noted(r), r.stderr
        assert k.ok("print('kept', keep)").stdout == "kept 42\n"
        k.ok("d = big = None")
    assert k.ok("after = bytearray(64 << 20)\nprint(len(after) >> 20)").stdout == "64\n"


def test_irkernel_lives_on(start):
    need("ir")
    k = start("ir")
    k.ok("keep <- 42")
    r = k.run("x <- rep(1.5, 1e9)")  # 7.5 GiB
    assert r.status == "error" and "cannot allocate vector of size 7.5 Gb" in r.error["evalue"], r.reply["content"]
    assert REFUSED + " of 7.5 GiB" in r.stderr, r.stderr
    assert k.ok("cat('kept', keep)").stdout == "kept 42"
    assert k.ok("y <- rep(1.5, 8e6); cat(length(y))").stdout == "8000000"


def test_bash_kernel_says_beforehand_what_bash_loses(start):
    """Under action=warn, so that the cell reaches the ceiling (where nobody
    can answer a pause, the guard interrupts bash_kernel at the pause line
    instead: a refusal would cost bash its variables)."""
    k = start("bash", JUPYTER_GUARD_ACTION="warn")
    k.ok("keep=42")
    r = k.run("python3 -c 'bytearray(2 << 30)'; echo exit $?")
    assert "MemoryError" in r.stdout and "exit 1" in r.stdout, r.stdout
    assert k.ok("echo kept $keep").stdout.strip() == "kept 42"
    # bash itself: a variable that grows past the line.
    r = k.run("x=$(head -c 1G /dev/zero | tr '\\0' x); echo ${#x}")
    assert "cannot allocate" in r.stdout and "Restarting Bash" in r.stdout, r.stdout
    warned = r.stderr[r.stderr.index(WARNING):] if WARNING in r.stderr else ""
    assert "bash_kernel (bash_kernel 0.10.0) restarts bash if bash itself cannot grow: its variables are lost" in warned, r.stderr
    assert "bash_kernel restarted bash: the kernel is kept, but bash's variables are lost." in r.stderr, r.stderr
    assert k.ok("echo kept $keep; echo alive").stdout.split() == ["kept", "alive"]


def test_deno_typed_arrays_live_on_and_its_heap_dies_of_the_ceiling(start):
    """Nobody to answer a pause, and Deno (its kernelspec's SIGINT) does
    not survive an interrupt either: the ceiling stops the cell, and the
    warning says beforehand what that costs."""
    k = start("deno")
    k.ok("var keep = 42")
    r = k.run("var big = new Uint8Array(2 ** 31)")
    assert r.status == "error" and r.error["evalue"] == "Array buffer allocation failed", r.reply["content"]
    assert k.ok("console.log(keep)").stdout == "42\n"
    r = k.run("var o = []; while (true) o.push({i: o.length, s: String(o.length)})", timeout=120)
    assert WARNING in r.stderr and "this kernel (Deno kernel " in r.stderr and \
        "ends when its JavaScript heap cannot grow: its variables are lost" in r.stderr, r.stderr
    assert r.status == "error" and r.error["ename"] == "KernelDied", r.reply["content"]
    text = "\n".join(r.error["traceback"])
    print(text)
    assert r.error["traceback"][0] == "jupyter-guard: kernel died (out of memory at the ceiling)", text
    assert re.search(r"Fatal (process|JavaScript) out of memory", r.error["evalue"]), r.error["evalue"]
    assert "does not survive an allocation that fails" in text, text
    log = Path(os.environ["JUPYTER_RUNTIME_DIR"]) / "jupyter-guard-deaths.jsonl"
    mine = [rec for rec in map(json.loads, log.read_text().splitlines()) if rec["kernel_id"] == k.kernel_id]
    assert [rec["cause"] for rec in mine] == ["ceiling"], mine
