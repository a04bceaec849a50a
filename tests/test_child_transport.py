"""How the proxy reaches its child: over unix sockets in a private 0700
directory of its own, whatever transport Jupyter uses, so that no kernel
port is open on loopback tcp to other local users (issue #13). Only the
proxy's own ports, when Jupyter asked for tcp, listen on tcp; ipykernel 7
no longer warns that it runs over tcp without encryption. The directory
is kept across restarts and removed when the proxy ends; one someone
planted is refused, never followed."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import Kernel
from support import EXEC_TIMEOUT, START_TIMEOUT, tree, wait_until
from test_connection import ipc
from test_other_kernels import deno_specs  # noqa: F401 (a fixture)
from test_other_kernels_guarded import need, other_kernels  # noqa: F401 (a fixture)

UNENCRYPTED = "without encryption"
REFUSED = "refusing the kernel's socket directory"


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return inodes
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:["):-1])
    return inodes


def tcp_listening(pids: list[int]) -> dict[int, set[int]]:
    """The tcp ports each of pids listens on (those that listen on any)."""
    ports = {}  # inode -> port
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A":  # TCP_LISTEN
                ports[f[9]] = int(f[1].rsplit(":", 1)[1], 16)
    out = {}
    for pid in pids:
        mine = {ports[i] for i in socket_inodes(pid) if i in ports}
        if mine:
            out[pid] = mine
    return out


def unix_listening(pids: list[int]) -> set[str]:
    """The paths of the unix sockets pids listen on."""
    paths = {}  # inode -> path
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        f = line.split()
        if len(f) == 8 and int(f[3], 16) & 0x10000:  # __SO_ACCEPTCON
            paths[f[6]] = f[7]
    return {paths[i] for pid in pids for i in socket_inodes(pid) if i in paths}


def child_socket_dir(k: Kernel) -> Path:
    """The one directory the child's sockets are in, checked private."""
    proxy = k.proc.pid
    socks = wait_until(lambda: unix_listening([p for p in tree(proxy) if p != proxy]), START_TIMEOUT,
                       "the child's unix sockets")
    dirs = {Path(s).parent for s in socks}
    assert len(dirs) == 1, socks
    d = dirs.pop()
    st = d.lstat()
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid(), oct(st.st_mode)
    assert d != Path(os.environ["JUPYTER_RUNTIME_DIR"])
    return d


def child_pids(k: Kernel) -> list[int]:
    return [p for p in tree(k.proc.pid) if p != k.proc.pid]


@pytest.mark.parametrize("configure", [None, ipc], ids=["jupyter-tcp", "jupyter-ipc"])
def test_only_the_proxy_listens_on_tcp(kernels, kenv, configure):
    k = kernels.start(kenv.guarded, configure=configure)
    assert k.ok("print(6 * 7)").stdout == "42\n"
    info = k.km.get_connection_info()
    own = {info[f"{c}_port"] for c in ("shell", "control", "stdin", "iopub", "hb")}
    listening = tcp_listening(tree(k.proc.pid))
    print(f"--- tcp listeners of the kernel's tree: {listening}; Jupyter's transport {info['transport']}")
    assert listening == ({k.proc.pid: own} if info["transport"] == "tcp" else {}), listening
    d = child_socket_dir(k)
    socks = unix_listening(child_pids(k))
    print(f"--- the child's sockets: {sorted(socks)}")
    assert max(len(s) for s in socks) <= 107
    # ipykernel's IOPub pipe, moved off tcp, still carries a fork's output.
    assert str(d / "pipe") in socks
    fork = "import multiprocessing as mp\np = mp.get_context('fork').Process(target=print, args=('forked',))\np.start(); p.join()"
    assert k.ok(fork).stdout == "forked\n"
    assert UNENCRYPTED not in k.output(), k.output()


def test_the_plain_ipykernel_7_warns_on_tcp(kernels):
    """What the test above rules out does happen without the proxy, so its
    absence there means something."""
    k = kernels.start("ipykernel7")
    k.ok("pass")
    assert UNENCRYPTED in k.output(), k.output()


def test_the_socket_dir_is_kept_across_restarts_and_removed_at_the_end(kernels, guardctl):
    k = kernels.start("ipykernel7-guarded")
    d = child_socket_dir(k)

    # A restart of the child under the same proxy (the proxy's own restart).
    old = child_pids(k)
    subprocess.run([str(guardctl), "restart", k.kernel_id[:8]], check=True, capture_output=True)
    wait_until(lambda: child_pids(k) and not set(child_pids(k)) & set(old), START_TIMEOUT, "a new child")
    k.flush_shell()
    assert k.ok("print('again')").stdout == "again\n"
    assert child_socket_dir(k) == d

    # A child killed outright leaves its socket files: the next one binds anew.
    os.kill(child_pids(k)[0], signal.SIGKILL)
    wait_until(lambda: k.run("1").status == "ok", START_TIMEOUT, "the kernel back after a kill", interval=0.5)
    assert child_socket_dir(k) == d

    # Jupyter's restart: a new proxy on the same connection file takes it back.
    proxy = k.proc
    k.km.restart_kernel(now=False)
    k.proc = k.proc.of(k.km.provisioner.process.pid)
    assert k.proc != proxy
    wait_until(lambda: k.run("1").status == "ok", START_TIMEOUT, "the kernel back after Jupyter's restart", interval=0.5)
    assert child_socket_dir(k) == d

    k.kc.stop_channels()
    k.kc = None
    k.km.shutdown_kernel(now=False)
    assert not d.exists(), sorted(os.listdir(d))


def test_the_socket_dir_of_a_killed_proxy_goes_at_the_next_start(kernels):
    """A proxy killed with SIGKILL (jupyter_client's shutdown_kernel(now=True)
    does that) cannot remove its directory: the next proxy to start finds
    it unlocked and removes it."""
    killed = kernels.start("ipykernel7-guarded")
    d = child_socket_dir(killed)
    os.kill(killed.proc.pid, signal.SIGKILL)
    wait_until(lambda: not killed.proc.running(), START_TIMEOUT, "the proxy gone")
    assert d.is_dir()
    kernels.start("ipykernel7-guarded")
    assert not d.exists()


def plant_symlink(d: Path, elsewhere: Path):
    d.symlink_to(elsewhere)


def plant_open_mode(d: Path, elsewhere: Path):
    d.mkdir(mode=0o755)
    d.chmod(0o755)


def plant_other_owner(d: Path, elsewhere: Path):
    if os.getuid() != 0:
        pytest.skip("giving a directory to another user takes root")
    d.mkdir(mode=0o700)
    os.chown(d, 65534, 65534)


@pytest.mark.parametrize("plant", [plant_symlink, plant_open_mode, plant_other_owner],
                         ids=["symlink", "mode-0755", "other-owner"])
def test_a_planted_socket_dir_is_refused(kernels, tmp_path, plant):
    """The directory's name is known (the same for the same connection
    file): one planted before the proxy starts stops it, with one line
    saying why, and nothing is bound or written through it."""
    k = kernels.start("ipykernel7-guarded")
    d = child_socket_dir(k)
    k.kc.stop_channels()
    k.kc = None
    k.km.shutdown_kernel(now=False, restart=True)  # keeps the connection file, as for a restart
    assert not d.exists()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    plant(d, elsewhere)
    try:
        k.km.start_kernel(stdout=k._log_file, stderr=k._log_file)
        proxy = k.km.provisioner.process
        code = proxy.wait(timeout=START_TIMEOUT)
        refusals = [line for line in k.output().splitlines() if REFUSED in line]
        print(f"--- exit {code}: {refusals}")
        assert code != 0 and len(refusals) == 1, k.output()
        assert str(d) in refusals[0]
        assert os.listdir(elsewhere) == []
        assert d.is_symlink() or d.is_dir(), "the planted directory was not removed either"
    finally:
        if d.is_symlink():
            d.unlink()
        else:
            shutil.rmtree(d)


OTHER = {  # name: (a cell, what it prints)
    "bash": ("echo via $((6 * 7))", "via 42"),
    "ir": ("cat('via', 6 * 7)", "via 42"),
    "xpython": ("print('via', 6 * 7)", "via 42"),
}


@pytest.mark.parametrize("name", sorted(OTHER))
def test_other_kernels_run_over_ipc(kernels, guardctl, other_kernels, name):  # noqa: F811
    """bash_kernel, IRkernel and xeus-python listen on unix sockets only."""
    need(name)
    subprocess.run([str(guardctl), "install", "--user", "--kernel", name], check=True, capture_output=True)
    k = kernels.start(name + "-guarded", configure=ipc)
    code, printed = OTHER[name]
    assert k.ok(code).stdout.strip() == printed
    assert tcp_listening(tree(k.proc.pid)) == {}
    print(f"--- {name}: {sorted(unix_listening(child_pids(k)))}")
    assert "listens on loopback tcp ports" not in k.output()  # said only of a kernel that cannot speak ipc


def test_deno_keeps_tcp_and_says_so(kernels, deno_specs):  # noqa: F811
    """Deno's kernel listens only on tcp: the proxy gives it loopback ports,
    and its log says so, rather than failing the start or hiding it."""
    k = kernels.start(deno_specs[1], configure=ipc)
    # Deno, guarded or not, may publish a cell's output after its idle
    # (tests/test_other_kernels.py): read until the output is in.
    msg_id = k.kc.execute("console.log(6 * 7)")
    text = ""
    while text != "42\n":
        m = k.kc.get_iopub_msg(timeout=EXEC_TIMEOUT)
        if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
            text += m["content"]["text"]
    listening = tcp_listening(tree(k.proc.pid))
    assert k.proc.pid not in listening and len(listening) == 1, listening
    lines = [line for line in k.output().splitlines() if "listens on loopback tcp ports" in line]
    assert len(lines) == 1 and "Deno" in lines[0], k.output()
