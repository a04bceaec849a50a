"""The kernel's files. Issue 13's planted files: in a runtime dir others can write (a shared
JUPYTER_RUNTIME_DIR), what another local user puts where the proxy used to
write, or writes, gets nothing: no key, no code on the kernel's PYTHONPATH,
no death record through a symlink. The proxy keeps the kernel's files in a
private 0700 directory of its own and says once that the runtime dir is open.
What proxies killed with SIGKILL leave there is swept by guardctl status."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from support import wait_until


@pytest.fixture
def shared_runtime(tmp_path, monkeypatch):
    """A runtime dir everyone can write, as a careless shared setup has."""
    d = tmp_path / "shared-runtime"
    d.mkdir()
    d.chmod(0o777)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(d))
    return d


def test_planted_files_get_nothing(kernels, kenv, shared_runtime, tmp_path):
    kid = "planted-0123"
    # What an attacker prepares before the kernel starts.
    tmp_conn = shared_runtime / f"guard-child-{kid}.json.tmp"
    tmp_conn.touch()
    tmp_conn.chmod(0o666)
    theirs = tmp_path / "attacker"
    theirs.mkdir()
    (shared_runtime / f"guard-py-{kid}").symlink_to(theirs)
    deaths_target = theirs / "deaths"
    deaths_target.touch()
    (shared_runtime / "jupyter-guard-deaths.jsonl").symlink_to(deaths_target)

    def configure(km):
        km.connection_file = str(shared_runtime / f"kernel-{kid}.json")

    k = kernels.start(kenv.guarded, configure=configure)
    key = k.km.session.key.decode()
    assert k.ok("print(6 * 7)").stdout == "42\n"
    # A death: the record must not go through the symlink.
    child = k.pid()
    os.kill(child.pid, signal.SIGKILL)
    wait_until(lambda: "record the death" in k.output(), 30, "the proxy to say it could not record the death")

    assert tmp_conn.read_bytes() == b"", "the planted .tmp file got the connection file"
    assert list(theirs.iterdir()) == [deaths_target], "the proxy wrote into the attacker's directory"
    assert deaths_target.read_bytes() == b"", "the death record went through the symlink"
    out = k.output()
    lines = [line for line in out.splitlines() if "death log" in line]
    assert len(lines) == 1 and "is a symlink: not followed, nothing written" in lines[0], out
    said = [line for line in out.splitlines() if f"the runtime dir {shared_runtime} has mode 0777" in line]
    assert len(said) == 1, out
    # Nothing in the shared dir holds the key but Jupyter's own connection file.
    holding = [p.name for p in shared_runtime.iterdir()
               if p.is_file() and not p.is_symlink() and key in p.read_text(errors="replace")]
    assert holding == [f"kernel-{kid}.json"], holding


def files_holding(key: str, *dirs: Path) -> list[Path]:
    """Files under dirs whose text holds key."""
    found = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in files:
                p = Path(root) / f
                try:
                    if key in p.read_text(errors="replace"):
                        found.append(p)
                except OSError:
                    pass
    return found


def test_killed_proxies_leave_no_key_after_guardctl_status(kernels, kenv, guardctl):
    """jupyter_client's shutdown_kernel(now=True) SIGKILLs the proxy: ten
    such kernels, then one guardctl status, and no file left by them holds
    a key (Jupyter's own connection files aside, which it removes itself)."""
    ks = [kernels.start(kenv.guarded) for _ in range(10)]
    keys = [k.km.session.key.decode() for k in ks]
    for k in ks:
        os.kill(k.proc.pid, signal.SIGKILL)
        k.km.provisioner.process.wait(timeout=10)
    # The proxies' private directories (jg-…) are in the temporary directory.
    private = list(Path(tempfile.gettempdir()).glob("jg-*"))
    left = [p for key in keys for p in files_holding(key, *private)]
    assert left, "the killed proxies left nothing to sweep: the test proves nothing"
    r = subprocess.run([str(guardctl), "status"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    runtime = Path(os.environ["JUPYTER_RUNTIME_DIR"])
    private = list(Path(tempfile.gettempdir()).glob("jg-*"))
    left = [p for key in keys for p in files_holding(key, *private, runtime)
            if p.parent != runtime or not p.name.startswith("kernel-")]
    assert left == [], left
