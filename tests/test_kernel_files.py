"""The kernel's files. Issue 13's planted files: in a runtime dir others can write (a shared
JUPYTER_RUNTIME_DIR), what another local user puts where the proxy used to
write, or writes, gets nothing: no key, no code on the kernel's PYTHONPATH,
no death record through a symlink. The proxy keeps the kernel's files in a
private 0700 directory of its own and says once that the runtime dir is open.
What proxies killed with SIGKILL leave there is swept by guardctl status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from support import as_jupyter_starts_it, children_of, missing, wait_until


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
    for planted in (tmp_conn, shared_runtime / f"guard-py-{kid}"):
        said = [line for line in out.splitlines() if f"left alone: {planted}," in line]
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


@pytest.fixture
def small_runtime(tmp_path, monkeypatch):
    """A runtime dir on a tmpfs of its own, 512 KiB, to be filled."""
    d = tmp_path / "small-runtime"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", str(d)], capture_output=True, text=True)
    if r.returncode != 0:
        missing(f"a tmpfs of its own for a full runtime dir (root): {r.stderr.strip()}")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(d))
    yield d
    subprocess.run(["umount", "-l", str(d)], capture_output=True)


def fill(d: Path, leave: int) -> None:
    """Fills d's filesystem, then gives back leave bytes (whole pages)."""
    fd = os.open(d / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: full
        pass
    finally:
        os.close(fd)
    size = (d / "filler").stat().st_size
    os.truncate(d / "filler", max(0, size - leave))


def test_deaths_with_a_full_runtime_dir(kernels, kenv, small_runtime):
    """A runtime dir that fills up while the kernel runs: every death is
    followed by a working restart (the child's files are in the proxy's
    private directory, written once), and of 20 death records on a disk
    with room for a few, every one that was written whole parses: one cut
    short by the full disk does not swallow the next."""
    with as_jupyter_starts_it(JUPYTER_GUARD_MAX_RESTARTS=100):
        k = kernels.start(kenv.guarded)
    fill(small_runtime, 8192)  # room for a few records, then one cut short
    for death in range(20):
        old = k.pid()
        os.kill(old.pid, signal.SIGKILL)
        # Between cells: the next cell goes to the next kernel.
        wait_until(lambda: [p for p in children_of(k.proc.pid) if p != old.pid], 60, "the proxy to start the next kernel")
        r = k.run(f"print('back', {death})", timeout=60)
        assert r.status == "ok" and r.stdout == f"back {death}\n", (death, r.iopub, k.output()[-3000:])
    lines = (small_runtime / "jupyter-guard-deaths.jsonl").read_bytes().split(b"\n")
    parsed, cut = [], []
    for line in filter(None, lines):
        try:
            parsed.append(json.loads(line))
        except ValueError:
            cut.append(line)
    assert parsed and len(cut) <= 1, (len(parsed), cut)
    assert all(r["kernel_id"] == k.kernel_id for r in parsed)
    assert "record the death" in k.output(), "the disk never ran full: the test proves nothing"
