"""Bounds before trust, through a real guarded ipykernel: what a local peer
without the key (anyone on the machine can reach the kernel's tcp ports)
can make the proxy hold, and what a key holder still gets. Each test is a
line of issue 30's "Done when"; docs/security.md has the bounds and why.

The proxy's memory is read from /proc: its VmRSS, and its peak (VmHWM)
since the test reset it through /proc/PID/clear_refs. The attackers are raw
sockets (tests/idle_peers.py for the idle connections, in a process of its
own), the key holders pyzmq and jupyter_client."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import resource
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
import zmq
from jupyter_client import BlockingKernelClient

from conftest import KERNEL_ENVS, TESTS, write_spec
from memory_driver import PAUSED, STEADY
from support import (EXEC_TIMEOUT, ZMTP_GREETING, MemoryCgroup, as_jupyter_starts_it, execute, signed_frames,
                     zmtp_ready)

ENV = KERNEL_ENVS[0]
MiB = 1 << 20
GiB = 1 << 30

# How many idle connections the suite opens: the 20,000, about 10 s
# to open here (20,000 descriptors in the attackers, who are given 10,000
# each, or what the hard limit lets a process have). 1,280 would fill the
# proxy's slots (5 sockets of 256); past that it closes the oldest unproven
# peer for each newcomer, so more only take longer.
IDLE_PEERS = int(os.environ.get("JUPYTER_GUARD_TEST_IDLE_PEERS", "20000"))
PER_ATTACKER = min(10_000, resource.getrlimit(resource.RLIMIT_NOFILE)[1] - 256)
PORTS = [("shell_port", "DEALER"), ("control_port", "DEALER"), ("stdin_port", "DEALER"), ("iopub_port", "SUB"),
         ("hb_port", "DEALER")]


# ------------------------------------------------------------ measuring


def memory(pid: int) -> dict[str, int]:
    """The process's resident memory now (VmRSS) and at its peak since the
    last reset_peak (VmHWM), in bytes."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out["rss" if name == "VmRSS" else "peak"] = int(value.split()[0]) * 1024
    return out


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def status(guardctl: Path) -> tuple[float, subprocess.CompletedProcess]:
    """`guardctl status --json` as a user runs it, and how long it took."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    started = time.monotonic()
    r = subprocess.run([str(guardctl), "status", "--json"], capture_output=True, text=True, timeout=60, env=env)
    return time.monotonic() - started, r


def goroutines(guardctl: Path, kernel_id: str) -> int:
    _, r = status(guardctl)
    assert r.returncode == 0, r.stderr
    return next(s["proxy"]["goroutines"] for s in json.loads(r.stdout) if s["kernel_id"] == kernel_id)


@contextmanager
def wrapped_spec(kernelspecs, jupyter_dirs, name: str, wrap):
    """The guarded kernelspec with its argv wrapped (wrap(argv)), installed
    as name for the test and removed after it: a spec left behind would be
    one more for `guardctl run` and the other tests to choose from."""
    spec = json.loads((kernelspecs[ENV.guarded] / "kernel.json").read_text())
    spec["argv"] = wrap(spec["argv"])
    spec["display_name"] = name
    d = write_spec(jupyter_dirs["JUPYTER_DATA_DIR"] / "kernels", name, spec)
    try:
        yield name
    finally:
        shutil.rmtree(d)


def new_client_runs(k) -> str:
    """A client connecting now (new connections on every port, a session
    of its own) runs a cell; returns its stdout."""
    kc = BlockingKernelClient()
    kc.load_connection_info(k.km.get_connection_info())
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=EXEC_TIMEOUT)
        r = execute(kc, "print('new client', 6 * 7)")
        assert r.status == "ok", r.reply["content"]
        return r.stdout
    finally:
        kc.stop_channels()


class Executing:
    """A thread that runs cells on the kernel's client again and again,
    while an attack goes on in the test's thread."""

    def __init__(self, k):
        self.k, self.ran, self.failed = k, 0, None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            try:
                r = execute(self.k.kc, "print('alive')")
                assert r.status == "ok" and r.stdout == "alive\n", (r.status, r.stdout)
                self.ran += 1
            except Exception as e:  # noqa: BLE001 — reported by end()
                self.failed = e
                return

    def end(self) -> int:
        self.stop.set()
        self.thread.join(EXEC_TIMEOUT)
        assert self.failed is None and self.ran > 0, f"cells during the attack: {self.ran} ran, then {self.failed!r}"
        return self.ran


# ------------------------------------------------------------ raw peers


def raw_peer(port: int, kind: bytes) -> socket.socket:
    """A tcp connection that has shaken hands as a peer of kind."""
    s = socket.create_connection(("127.0.0.1", port), timeout=EXEC_TIMEOUT)
    s.sendall(ZMTP_GREETING + zmtp_ready(kind))
    got = b""
    while len(got) < 66 or len(got) < 66 + got[65]:
        chunk = s.recv(4096)
        assert chunk, "the proxy closed a new connection during its handshake"
        got += chunk
    return s


def long_frame(size: int, more: bool = False) -> bytes:
    return bytes([0x02 | (0x01 if more else 0)]) + struct.pack(">Q", size)


def encode(frames: list[bytes]) -> bytes:
    """A message as ZMTP frames on the wire."""
    out = b""
    for i, f in enumerate(frames):
        more = 0x01 if i < len(frames) - 1 else 0
        out += (bytes([more, len(f)]) if len(f) < 256 else long_frame(len(f), more=bool(more))) + f
    return out


def send(s: socket.socket, data: bytes) -> bool:
    """Sends data; False once the proxy has hung up on it."""
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def four_gib_frame(info: dict):
    """A frame announced at 4 GiB on shell, and 256 MiB of it sent."""
    chunk = bytes(MiB)
    s = raw_peer(info["shell_port"], b"DEALER")
    sent = send(s, long_frame(4 * GiB))
    for _ in range(256):
        sent = sent and send(s, chunk)
    s.close()


def big_topics(info: dict):
    """1,024 subscriptions to different 1 MiB topics on iopub, connecting
    again whenever the proxy hangs up."""
    rest = bytes(MiB - 4)
    s = raw_peer(info["iopub_port"], b"SUB")
    for i in range(1024):
        sub = long_frame(MiB + 1) + b"\x01" + struct.pack(">I", i) + rest
        while not send(s, sub):
            s.close()
            s = raw_peer(info["iopub_port"], b"SUB")
    s.close()


def unterminated(info: dict):
    """1,000 frames of 256 KiB on shell, each with MORE, none last."""
    frame = long_frame(256 << 10, more=True) + bytes(256 << 10)
    s = raw_peer(info["shell_port"], b"DEALER")
    for _ in range(1000):
        if not send(s, frame):
            break
    s.close()


def wrongly_signed(info: dict):
    """200 execute_requests with 32 MiB of code, signed with another key,
    each on a connection of its own."""
    frames = signed_frames(b"not-the-key", "execute_request", {"code": "x" * (32 * MiB)}, "attacker")
    wire = encode(frames)
    for _ in range(200):
        s = raw_peer(info["shell_port"], b"DEALER")
        send(s, wire)
        s.close()


ATTACKS = {"four_gib_frame": four_gib_frame, "big_topics": big_topics, "unterminated": unterminated,
           "wrongly_signed": wrongly_signed}


# ------------------------------------------------------------------ tests


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_unverified_peers_cannot_grow_the_proxy(kernels, attack):
    """Each attack from a peer without the key leaves the proxy within
    64 MiB of its start, at its peak and after, while the kernel's client
    keeps running cells. On d220bc3: 1,077 MiB for the 4 GiB frame, 1,034
    MiB for 256 of the 1 MiB topics, 264 MiB for the unterminated frames,
    a 157 MiB peak for the wrongly signed messages."""
    k = kernels.start(ENV.guarded)
    pid = k.proc.pid
    info = k.km.get_connection_info()
    cells = Executing(k)
    reset_peak(pid)
    start = memory(pid)["rss"]
    ATTACKS[attack](info)
    time.sleep(0.5)  # what was sent last is read
    m = memory(pid)
    ran = cells.end()
    print(f"{attack}: proxy RSS {start / MiB:.1f} MiB, peak {m['peak'] / MiB:.1f}, after {m['rss'] / MiB:.1f}; {ran} cells meanwhile")
    assert m["peak"] - start < 64 * MiB and m["rss"] - start < 64 * MiB, (attack, start, m, k.output()[-3000:])


def test_usage_requests_from_a_client_that_never_reads(kernels, guardctl):
    """50,000 usage_requests in about a second on control from a key
    holder that never reads: the proxy stays under 100 goroutines and grows
    by less than 32 MiB (on d220bc3: 25,215 goroutines, 427 MiB, 21,694
    still alive 3 s later). A client that reads gets an answer to every
    one of another 50,000, sent 500 at a time: a measurement, or a Busy
    error when 64 wait already."""
    k = kernels.start(ENV.guarded)
    pid = k.proc.pid
    info = k.km.get_connection_info()
    key = info["key"]  # bytes, as jupyter_client keeps it
    n = 50_000
    # Encoded ahead, so that they leave at the speed of the socket: a raw
    # DEALER (pyzmq's sends about 14,000 a second here).
    flood = b"".join(encode(signed_frames(key, "usage_request", {}, "flood")) for _ in range(n))
    ctx = zmq.Context()
    try:
        deaf = raw_peer(info["control_port"], b"DEALER")
        reset_peak(pid)
        start = memory(pid)["rss"]
        began = time.monotonic()
        deaf.sendall(flood)
        sending = time.monotonic() - began
        # The proxy is still reading them: its goroutines, as often as
        # guardctl status can say, for 3 s.
        sampled = []
        while time.monotonic() - began < sending + 3:
            sampled.append(goroutines(guardctl, k.kernel_id))
        m = memory(pid)
        print(f"{n} usage_requests sent in {sending:.2f} s; proxy goroutines {min(sampled)}-{max(sampled)} "
              f"in {len(sampled)} samples; RSS {start / MiB:.1f} MiB, peak {m['peak'] / MiB:.1f}, after {m['rss'] / MiB:.1f}")
        assert max(sampled) < 100, sampled
        assert m["peak"] - start < 32 * MiB, (start, m)

        reader = ctx.socket(zmq.DEALER)
        reader.setsockopt(zmq.LINGER, 0)
        reader.setsockopt(zmq.SNDHWM, 0)
        reader.setsockopt(zmq.RCVHWM, 0)
        reader.connect(f"tcp://{info['ip']}:{info['control_port']}")
        # In windows of 500 outstanding: a client that lets more than
        # 1,000 answers wait in the proxy loses the rest at its high-water
        # mark, as with libzmq (and a loaded machine reads slowly).
        answers = {"ok": 0, "busy": 0}
        for _ in range(n // 500):
            asked = [signed_frames(key, "usage_request", {}, "reader") for _ in range(500)]
            wanted = {json.loads(f[2])["msg_id"] for f in asked}
            for frames in asked:
                reader.send_multipart(frames)
            while wanted:
                assert reader.poll(EXEC_TIMEOUT * 1000), f"{len(wanted)} usage_requests of 500 not answered"
                reply = reader.recv_multipart()
                d = reply.index(b"<IDS|MSG>")
                header, parent, content = (json.loads(f) for f in (reply[d + 2], reply[d + 3], reply[d + 5]))
                assert header["msg_type"] == "usage_reply", header
                wanted.discard(parent["msg_id"])
                answers["busy" if content.get("ename") == "Busy" else "ok"] += 1
        print(f"a reading client's {n} usage_requests: {answers}")
        assert k.ok("print('still here')").stdout == "still here\n"
        deaf.close()
    finally:
        ctx.destroy(linger=0)


def test_a_key_holders_large_comm_reaches_the_kernel(kernels):
    """A 300 MiB comm message from a client with the key (an upload)
    reaches the kernel intact, and the proxy holds it once: its peak is
    less than the message and 64 MiB above its start (d220bc3 grew the
    frame as it came, to about twice that)."""
    k = kernels.start(ENV.guarded)
    pid = k.proc.pid
    k.ok("import hashlib\nfrom comm import get_comm_manager\ngot = {}\n"
         "def target(comm, msg):\n"
         "    @comm.on_msg\n"
         "    def _(m):\n"
         "        got['size'] = len(m['buffers'][0])\n"
         "        got['sha256'] = hashlib.sha256(m['buffers'][0]).hexdigest()\n"
         "get_comm_manager().register_target('upload', target)\n")
    size = 300 * MiB
    upload = bytes(range(256)) * (size // 256)
    digest = hashlib.sha256(upload).hexdigest()
    comm_id = uuid.uuid4().hex
    kc = k.kc
    kc.session.send(kc.shell_channel.socket, "comm_open", {"comm_id": comm_id, "target_name": "upload", "data": {}})
    reset_peak(pid)
    start = memory(pid)["rss"]
    kc.session.send(kc.shell_channel.socket, "comm_msg", {"comm_id": comm_id, "data": {}}, buffers=[upload])
    del upload
    # Shell messages are handled in order: the comm's first.
    got = json.loads(k.ok("import json\nprint(json.dumps(got))", timeout=120).stdout)
    m = memory(pid)
    print(f"300 MiB comm: proxy RSS {start / MiB:.1f} MiB, peak {m['peak'] / MiB:.1f}, after {m['rss'] / MiB:.1f}")
    assert got == {"size": size, "sha256": digest}
    assert m["peak"] - start < size + 64 * MiB, (start, m)


def attack_with_idle_peers(info: dict, n: int, attackers: list) -> None:
    """Starts attackers (tests/idle_peers.py) until n idle peers are held,
    each attacker with PER_ATTACKER descriptors at most."""
    ports = [[info[port], kind] for port, kind in PORTS]
    for share in [PER_ATTACKER] * (n // PER_ATTACKER) + [n % PER_ATTACKER]:
        if share:
            attackers.append(subprocess.Popen([sys.executable, str(TESTS / "idle_peers.py"), json.dumps({"ports": ports, "n": share})],
                                              cwd=TESTS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
            flood = json.loads(attackers[-1].stdout.readline())
            print(f"idle peers: {flood}")
            assert flood["handshaked"] == share, flood


def release(attackers: list) -> None:
    for a in attackers:
        a.stdin.close()
        a.wait(EXEC_TIMEOUT)


def test_idle_connections_within_a_low_descriptor_limit(kernels, kernelspecs, jupyter_dirs, guardctl):
    """The peers' slots follow the descriptor limit the proxy is given: a
    container's `ulimit -n 256` leaves the proxy about 24 slots a socket,
    and 3,000 idle peers leave the guard its own descriptors: guardctl
    status reads the kernel, the sampler measures a cell's 200 MiB, a new
    client runs a cell, and nothing in the log says a descriptor was
    missing."""
    with (wrapped_spec(kernelspecs, jupyter_dirs, "bounds-256-fds",
                       lambda argv: ["/bin/sh", "-c", 'ulimit -n 256 && exec "$@"', "sh", *argv]) as name,
          as_jupyter_starts_it()):
        k = kernels.start(name)
    attackers = []
    try:
        attack_with_idle_peers(k.km.get_connection_info(), 3000, attackers)
        k.ok("held = bytearray(200 << 20)")
        _, r = status(guardctl)
        assert r.returncode == 0 and "skipped" not in r.stderr, r.stderr
        state = next(s for s in json.loads(r.stdout) if s["kernel_id"] == k.kernel_id)
        print(f"open fds {state['proxy']['open_fds']}, tree RSS {state['memory']['tree_rss_bytes'] / MiB:.0f} MiB")
        assert state["proxy"]["open_fds"] < 256, state["proxy"]
        assert state["memory"]["tree_rss_bytes"] > 200 * MiB, state["memory"]
        assert new_client_runs(k) == "new client 42\n"
        assert "too many open files" not in k.output().lower(), k.output()[-3000:]
    finally:
        release(attackers)


def test_idle_connections_leave_the_guard_working(kernels, kernelspecs, jupyter_dirs, guardctl):
    """IDLE_PEERS connections that shake hands on the five ports and say
    nothing, from another process: `guardctl status` answers within 1 s, a
    new client connects and runs a cell, the proxy's log gets fewer than 100
    lines and its RSS grows by less than 64 MiB; and under a 1 GiB memory
    cgroup the guard still stops a growing cell without an OOM kill, the
    kernel and its variables kept. On d220bc3 the proxy's descriptors ran
    out (20,000), accept errors filled its log, status took 5 s and skipped
    the kernel, and the guard could not open /proc."""
    cg = MemoryCgroup.create(GiB, prefix="bounds-idle")
    attackers = []
    try:
        with wrapped_spec(kernelspecs, jupyter_dirs, "bounds-in-cgroup", cg.wrap) as name, as_jupyter_starts_it():
            k = kernels.start(name)
        pid = k.proc.pid
        assert pid in cg.procs()
        kernel_pid = k.pid().pid
        k.ok("kept = 42")
        info = k.km.get_connection_info()
        log_before = len(k.output().splitlines())
        reset_peak(pid)
        start = memory(pid)["rss"]

        attack_with_idle_peers(info, IDLE_PEERS, attackers)

        took, r = status(guardctl)
        print(f"guardctl status took {took:.2f} s")
        assert r.returncode == 0 and "skipped" not in r.stderr, r.stderr
        assert any(s["kernel_id"] == k.kernel_id for s in json.loads(r.stdout)), r.stdout
        assert took < 1, f"guardctl status took {took:.2f} s"
        assert new_client_runs(k) == "new client 42\n"
        flooded = memory(pid)

        # The guard's own files, sampler and freezer, with the peers held.
        oom_before = cg.oom_kills()
        msg_id = k.kc.execute(STEADY)
        stopped, errors, state = False, [], None
        deadline = time.monotonic() + 120
        while state != "idle":
            assert time.monotonic() < deadline, f"the growing cell never ended; the log:\n{k.output()[-5000:]}"
            try:
                m = k.kc.get_iopub_msg(timeout=10)
            except queue.Empty:
                continue
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            if m["msg_type"] == "stream" and PAUSED in m["content"]["text"]:
                stopped = True
                k.km.interrupt_kernel()  # ■, as a user would
            elif m["msg_type"] == "error":
                errors.append(m["content"]["ename"])
            elif m["msg_type"] == "status":
                state = m["content"]["execution_state"]
        # With an allocation ceiling on the kernel, the guard may stop the
        # cell with a MemoryError instead of a pause.
        assert stopped or "MemoryError" in errors, (errors, k.output()[-5000:])
        assert cg.oom_kills() == oom_before, "the OOM killer fired"
        assert k.ok("print(kept)").stdout == "42\n"
        assert k.pid().pid == kernel_pid, "the kernel was restarted"

        lines = k.output().splitlines()[log_before:]
        m = memory(pid)
        print(f"proxy RSS {start / MiB:.1f} MiB, {flooded['rss'] / MiB:.1f} with the peers held, "
              f"peak {m['peak'] / MiB:.1f}; {len(lines)} lines in its log:\n" + "\n".join(lines))
        assert len(lines) < 100
        assert m["peak"] - start < 64 * MiB, (start, flooded, m)
    finally:
        release(attackers)
        kernels.shutdown_all()
        cg.remove()
