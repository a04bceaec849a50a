"""The wheel as a user gets it (issues #14 and #15): the manylinux x86_64
wheel, built as `python -m build` builds it, from the sdist, where npm must
not run (the sdist carries the built lab extension), then installed with
pip into a fresh venv with JupyterLab and ipykernel, on a PATH with no Go.
There Jupyter lists its lab extension and its server extension as enabled
and OK, a `jupyter server` serves /jupyter-guard/kernels through the
wheel's guardctl, guardctl wraps the venv's kernel and runs the demo
notebook under the guard, the wheel's kernel provisioner guards the plain
python3 and `guardctl install --all` makes it the default, and `pip
uninstall` takes it all away again.
(`make wheel` builds the other wheels; this builds one, to keep the suite
short.)"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from support import check_grow_demo, jupyter_server, proxy_argv

PLATFORM = "manylinux_2_17_x86_64"
WHEEL_PYTHON = REPO / ".venv-wheel" / "bin" / "python"
LABEXTENSION = REPO / "labextension" / "prebuilt" / "jupyter-guard"


def sh(*args, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout)
    print(f"--- {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    assert r.returncode == 0, f"{args} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


def path_without(*commands: str) -> str:
    """The user's PATH, minus every directory with one of commands in it."""
    return os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if d and not any((Path(d) / c).exists() for c in commands))


def listed_under(header: Path | str, r: subprocess.CompletedProcess) -> str:
    """The indented lines under the line header in a Jupyter listing (its
    output without colours)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)
    m = re.search(rf"^{re.escape(str(header))}\n((?:[ \t]+\S.*\n?)*)", text, re.M)
    assert m, f"no {header} in\n{text}"
    return m[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if not WHEEL_PYTHON.exists():
        pytest.fail(f"{WHEEL_PYTHON} is missing: run scripts/test-venvs .venv-wheel")
    if not (LABEXTENSION / "package.json").exists():
        pytest.fail(f"{LABEXTENSION} is missing: run make labextension (make test does)")
    out = tmp_path_factory.mktemp("dist")
    # An npm and a node that fail, ahead on PATH: the build finds neither, as
    # on a machine without Node.js.
    no_node = tmp_path_factory.mktemp("no-node")
    for name in ("npm", "node"):
        (no_node / name).write_text(f"#!/bin/sh\necho '{name} ran: the sdist must carry the built lab extension' >&2\nexit 1\n")
        (no_node / name).chmod(0o755)
    sh(WHEEL_PYTHON, "-m", "build", "-o", out, REPO, timeout=600,
       env={**os.environ, "JUPYTER_GUARD_PLATFORM": PLATFORM, "PATH": f"{no_node}{os.pathsep}{os.environ['PATH']}"})
    wheels = list(out.glob(f"jupyter_guard-*-py3-none-{PLATFORM}.whl"))
    assert len(wheels) == 1, list(out.iterdir())
    return wheels[0]


@dataclass(frozen=True)
class Venv:
    prefix: Path
    env: dict[str, str]  # the user's, with the venv's bin first on a PATH with no Go

    @property
    def bin(self) -> Path:
        return self.prefix / "bin"


@pytest.fixture(scope="module")
def venv(wheel, jupyter_dirs, tmp_path_factory) -> Venv:
    """A fresh venv with the wheel, and JupyterLab and ipykernel at the
    suite's pins, as a user's Jupyter environment has them."""
    prefix = tmp_path_factory.mktemp("wheel-venv") / "venv"
    sh(sys.executable, "-m", "venv", prefix)
    path = os.pathsep.join([str(prefix / "bin"), path_without("go")])
    assert shutil.which("go", path=path) is None
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_CURRENT_TEST")}
    env["PATH"] = path
    sh(prefix / "bin" / "pip", "install", "-q", "--disable-pip-version-check", wheel, "jupyterlab", "ipykernel",
       "-c", REPO / "requirements" / "test.txt", env=env)
    return Venv(prefix, env)


def test_the_wheel_passes_its_checks(wheel):
    """auditwheel accepts the tag, guardctl is x86_64, the Jupyter files are
    there, the wheel is small."""
    sh(WHEEL_PYTHON, REPO / "packaging" / "check_wheel.py", wheel)


def test_jupyterlab_lists_the_lab_extension_enabled_and_ok(venv):
    r = sh(venv.bin / "jupyter", "labextension", "list", env=venv.env)
    listed = listed_under(venv.prefix / "share" / "jupyter" / "labextensions", r)
    # "(python, jupyter-guard)" is from install.json: pip installed it.
    assert re.search(r"^\s+jupyter-guard v\S+ enabled OK \(python, jupyter-guard\)$", listed, re.M), listed


def test_jupyter_server_lists_the_server_extension_enabled_and_ok(venv):
    r = sh(venv.bin / "jupyter", "server", "extension", "list", env=venv.env)
    # Enabled by the config file the wheel put in the venv's etc/jupyter.
    listed = listed_under(f"Config dir: {venv.prefix / 'etc' / 'jupyter'}", r)
    assert re.search(r"^\s+jupyter_guard enabled$", listed, re.M), listed
    assert re.search(r"^\s+jupyter_guard +(\S+ +)?OK$", listed, re.M), listed


def test_jupyter_server_serves_the_guard_through_the_wheels_guardctl(venv, tmp_path):
    """With JUPYTER_GUARD_GUARDCTL unset and no guardctl on PATH, the server
    extension finds the one pip put beside the server's Python."""
    env = {k: v for k, v in venv.env.items() if k != "JUPYTER_GUARD_GUARDCTL"}
    env["PATH"] = path_without("go", "guardctl")
    root = tmp_path / "root"
    root.mkdir()
    with jupyter_server([venv.bin / "jupyter", "server"], root, env, tmp_path / "server.log") as server:
        status, kernels = server.call("GET", "/jupyter-guard/kernels")
        assert status == 200 and isinstance(kernels, list), (status, kernels)
        assert f"figures from {venv.bin / 'guardctl'}" in server.log.read_text()


# A kernel started by the venv's jupyter_client, as nbclient starts one.
START_PYTHON3 = """import json
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name="python3")
print(type(km.provisioner).__name__, json.dumps(km.provisioner.process.args))
kc.stop_channels()
km.shutdown_kernel()
"""


def test_the_wheels_provisioner_guards_python3_and_install_all_makes_it_the_default(venv):
    """The wheel registers the kernel provisioner: with it the default, the
    venv's python3 starts under the wheel's guardctl. install --all makes it
    the default in the venv's own Jupyter config; uninstall --all takes it
    out again."""
    r = sh(venv.bin / "python", "-c", START_PYTHON3, env={**venv.env, "JUPYTER_DEFAULT_PROVISIONER_NAME": "jupyter-guard"})
    name, args = r.stdout.split(" ", 1)
    assert name == "GuardProvisioner" and proxy_argv(json.loads(args))[0] == str((venv.bin / "guardctl").resolve()), r.stdout
    config = venv.prefix / "etc" / "jupyter" / "jupyter_config.json"
    assert not config.exists()
    sh(venv.bin / "guardctl", "install", "--all", env=venv.env)
    assert json.loads(config.read_text()) == {"KernelProvisionerFactory": {"default_provisioner_name": "jupyter-guard"}}
    listed = sh(venv.bin / "guardctl", "kernelspecs", env=venv.env).stdout
    assert re.search(r"^python3 .* yes, by the default provisioner ", listed, re.M), listed
    sh(venv.bin / "guardctl", "uninstall", "--all", env=venv.env)
    assert not config.exists()


def test_install_guard_run_uninstall_without_go(venv, jupyter_dirs, tmp_path):
    """Last: it uninstalls the wheel."""
    bin, env = venv.bin, venv.env
    assert sh(bin / "guardctl", "--version", env=env).stdout.startswith("guardctl ")

    # Run from the venv's bin, not activated: it must guard this venv's kernel.
    installed = sh(bin / "guardctl", "install", env=env).stdout
    kernels = jupyter_dirs["JUPYTER_DATA_DIR"] / "kernels"
    assert f"installed python3-guarded (guards python3) in {kernels / 'python3-guarded'}" in installed
    listed = sh(bin / "jupyter", "guard", "kernelspecs", env=env).stdout
    assert f"as seen by Jupyter on {bin / 'python'}" in listed, listed

    out = tmp_path / "grow.out.ipynb"
    # As on a fresh machine (the README's first command): no runtime dir yet.
    fresh = {**env, "JUPYTER_RUNTIME_DIR": str(tmp_path / "fresh" / "runtime")}
    r = sh(bin / "guardctl", "run", "--limit", "1GiB", "-o", out, REPO / "testdata" / "demo" / "grow.ipynb", env=fresh)
    assert "starting python3-guarded for" in r.stderr
    check_grow_demo(nbformat.read(out, as_version=4))

    # As `python -m ipykernel install` with the same options, guarded.
    opts = ["--name", "py-8g", "--display-name", "Python (8 GiB)", "--env", "JUPYTER_GUARD_LIMIT", "8GiB"]
    said = sh(bin / "guardctl", "install", "--sys-prefix", *opts, env=env).stdout
    ours = venv.prefix / "share" / "jupyter" / "kernels" / "py-8g"
    assert f"installed py-8g (guards python3) in {ours}" in said and "guardctl uninstall --sys-prefix py-8g" in said, said
    sh(bin / "python", "-m", "ipykernel", "install", "--prefix", tmp_path / "plain", *opts, env=env)
    plain = json.loads((tmp_path / "plain" / "share" / "jupyter" / "kernels" / "py-8g" / "kernel.json").read_text())
    guarded = json.loads((ours / "kernel.json").read_text())
    for key in ("display_name", "language", "env"):
        assert guarded[key] == plain[key], (key, guarded, plain)
    assert guarded["argv"][guarded["argv"].index("--") + 1:] == plain["argv"], (guarded["argv"], plain["argv"])
    assert proxy_argv(guarded["argv"])[0] == str(bin / "guardctl")
    assert sorted(p.name for p in ours.iterdir()) == sorted(p.name for p in (tmp_path / "plain" / "share" / "jupyter" / "kernels" / "py-8g").iterdir())

    sh(bin / "guardctl", "uninstall", env=env)
    assert not (kernels / "python3-guarded").exists()
    sh(bin / "pip", "uninstall", "-y", "-q", "jupyter-guard", env=env)
    # The spec --sys-prefix wrote is still there (pip removes only what it
    # installed): it fails to start with one line that names the fix, not
    # a stack trace.
    assert "py-8g" in sh(bin / "jupyter", "kernelspec", "list", env=env).stdout
    start = ("from jupyter_client.manager import KernelManager\n"
             "km = KernelManager(kernel_name='py-8g'); km.start_kernel(); kc = km.client(); kc.start_channels()\n"
             "try:\n    kc.wait_for_ready(timeout=30)\nexcept RuntimeError as e:\n    print('not ready:', e)\n"
             "finally:\n    kc.stop_channels(); km.cleanup_resources()\n")
    r = sh(bin / "python", "-c", start, env=env, timeout=60)
    assert "not ready:" in r.stdout, r.stdout
    said = [line for line in r.stderr.splitlines() if "jupyter-guard" in line]
    assert len(said) == 1 and "jupyter kernelspec remove py-8g" in said[0], r.stderr
    assert not (bin / "guardctl").exists() and not (bin / "jupyter-guard").exists()
    assert not (venv.prefix / "share" / "jupyter" / "labextensions" / "jupyter-guard").exists()
    assert not (venv.prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "jupyter_guard.json").exists()
    # Not from the checkout's jupyter_guard/: the current directory is not it.
    assert subprocess.run([bin / "python", "-c", "import jupyter_guard"], cwd=tmp_path, env=env).returncode != 0
    providers = "from importlib.metadata import entry_points; print(entry_points(group='jupyter_client.kernel_provisioners').names)"
    assert "jupyter-guard" not in sh(bin / "python", "-c", providers, env=env).stdout
