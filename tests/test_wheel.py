"""The wheel as a user gets it (issue #14): the manylinux x86_64 wheel,
built as `make wheel` builds it, installed with pip into a fresh venv on a
PATH with no Go; its guardctl wraps that venv's kernel and runs the demo
notebook under the guard, and `pip uninstall` takes it away again.
(`make wheel` builds the other wheels and the sdist; this builds one, to
keep the suite short.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from support import check_grow_demo

PLATFORM = "manylinux_2_17_x86_64"
WHEEL_PYTHON = REPO / ".venv-wheel" / "bin" / "python"


def sh(*args, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout)
    print(f"--- {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    assert r.returncode == 0, f"{args} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if not WHEEL_PYTHON.exists():
        pytest.fail(f"{WHEEL_PYTHON} is missing: run scripts/test-venvs .venv-wheel")
    out = tmp_path_factory.mktemp("dist")
    sh(WHEEL_PYTHON, "-m", "build", "--wheel", "-o", out, REPO,
       env={**os.environ, "JUPYTER_GUARD_PLATFORM": PLATFORM}, timeout=600)
    wheels = list(out.glob(f"jupyter_guard-*-py3-none-{PLATFORM}.whl"))
    assert len(wheels) == 1, list(out.iterdir())
    return wheels[0]


def test_the_wheel_passes_its_checks(wheel):
    """auditwheel accepts the tag, guardctl is x86_64, the wheel is small."""
    sh(WHEEL_PYTHON, REPO / "packaging" / "check_wheel.py", wheel)


def test_install_guard_run_uninstall_without_go(wheel, jupyter_dirs, tmp_path):
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", venv)
    bin = venv / "bin"
    # The user's PATH, minus every directory with a go in it.
    path = os.pathsep.join([str(bin)] + [d for d in os.environ["PATH"].split(os.pathsep)
                                         if d and not (Path(d) / "go").exists()])
    assert shutil.which("go", path=path) is None
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_CURRENT_TEST")}
    env["PATH"] = path

    # The kernel, as a user's environment has it: ipykernel at the suite's pins.
    sh(bin / "pip", "install", "-q", "--disable-pip-version-check", wheel, "ipykernel",
       "-c", REPO / "requirements" / "test.txt", env=env)
    assert sh(bin / "guardctl", "--version", env=env).stdout.startswith("guardctl ")

    # Run from the venv's bin, not activated: it must guard this venv's kernel.
    installed = sh(bin / "guardctl", "install", env=env).stdout
    kernels = jupyter_dirs["JUPYTER_DATA_DIR"] / "kernels"
    assert f"installed python3-guarded (guards python3) in {kernels / 'python3-guarded'}" in installed
    listed = sh(bin / "jupyter", "guard", "kernelspecs", env=env).stdout
    assert f"as seen by Jupyter on {bin / 'python'}" in listed, listed

    out = tmp_path / "grow.out.ipynb"
    r = sh(bin / "guardctl", "run", "--limit", "1GiB", "-o", out, REPO / "testdata" / "demo" / "grow.ipynb", env=env)
    assert "starting python3-guarded for" in r.stderr
    check_grow_demo(nbformat.read(out, as_version=4))

    sh(bin / "guardctl", "uninstall", env=env)
    assert not (kernels / "python3-guarded").exists()
    sh(bin / "pip", "uninstall", "-y", "-q", "jupyter-guard", env=env)
    assert not (bin / "guardctl").exists() and not (bin / "jupyter-guard").exists()
