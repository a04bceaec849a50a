"""Transport encryption as jupyter_client 8.9+ asks for it
(KernelManager.transport_encryption): the proxy is the CurveZMQ server on
every port Jupyter connects to, with the keys of Jupyter's connection file,
and its child kernel gets none of them. Every kind of message through an
encrypted proxy is checked in test_messaging.py (its guarded kernel runs in
clear and encrypted); here: interrupt and shutdown, that no port answers in
clear, "auto", and connection files whose keys cannot be used."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
import zmq
from jupyter_client.connect import write_connection_file

from support import (ZMTP_GREETING, collect, endpoint, raw_socket, read_all, read_until_stream, request,
                     signed_frames, transport_encryption, wait_until, zmtp_ready)

# Each port Jupyter connects to, and the socket a client has there.
PORTS = {"shell_port": zmq.DEALER, "control_port": zmq.DEALER, "stdin_port": zmq.DEALER,
         "iopub_port": zmq.SUB, "hb_port": zmq.REQ}
PEER_TYPE = {zmq.DEALER: b"DEALER", zmq.SUB: b"SUB", zmq.REQ: b"REQ"}


encrypted = transport_encryption("required")


def ipc_encrypted(km):
    encrypted(km)
    km.transport = "ipc"
    km.ip = os.path.join(os.environ["JUPYTER_RUNTIME_DIR"], "ipc-curve")


def child_connection(k) -> dict:
    """The connection file the proxy gave its child, read from the child's
    argv (-f FILE, as the wrapped spec passes it)."""
    with open(f"/proc/{k.pid().pid}/cmdline", "rb") as f:
        argv = f.read().decode().split("\0")
    with open(argv[argv.index("-f") + 1]) as f:
        return json.load(f)


def raw_connect(info: dict, port: str) -> socket.socket:
    if info["transport"] == "ipc":
        s = socket.socket(socket.AF_UNIX)
        s.connect(endpoint(info, port).removeprefix("ipc://"))
    else:
        s = socket.create_connection((info["ip"], info[port]))
    s.settimeout(10)
    return s


def offer(sock, frames: list[bytes], curve: bool) -> None:
    """Sends frames on a raw socket. One in clear may have nowhere to queue
    them (libzmq drops the pipe of a failed handshake until it reconnects),
    which answers nothing either."""
    try:
        sock.send_multipart(frames, flags=0 if curve else zmq.NOBLOCK)
    except zmq.Again:
        pass


@pytest.mark.parametrize("configure", [encrypted, ipc_encrypted], ids=["tcp", "ipc"])
def test_no_port_answers_in_clear(kernels, kenv, configure):
    """Under transport_encryption="required" each of the five ports greets
    as a CURVE server and hangs up on a peer in clear; a pyzmq socket
    without keys gets no answer where one with keys (any key pair) does."""
    k = kernels.start(kenv.guarded, configure=configure)
    info = k.km.get_connection_info()
    assert info["curve_publickey"] and info["curve_secretkey"]
    assert info["transport"] == ("ipc" if configure is ipc_encrypted else "tcp")
    # The child gets no keys: it is the proxy's, not Jupyter's, to reach.
    assert not {"curve_publickey", "curve_secretkey"} & child_connection(k).keys()

    for port, kind in PORTS.items():
        with raw_connect(info, port) as s:
            greeting = s.recv(64, socket.MSG_WAITALL)
            assert greeting[12:32] == b"CURVE".ljust(20, b"\0") and greeting[32] == 1, (port, greeting)
            # A NULL handshake and an empty message in clear: the proxy
            # hangs up without a byte more.
            s.sendall(ZMTP_GREETING + zmtp_ready(PEER_TYPE[kind]) + b"\x00\x00")
            assert read_all(s) == b"", port

    key = info["key"]
    ctx = zmq.Context()
    try:
        answered = {}
        for curve in (False, True):
            socks = {port: raw_socket(ctx, kind, info, port, curve) for port, kind in PORTS.items()}
            socks["iopub_port"].subscribe(b"")
            for port in ("shell_port", "control_port"):
                offer(socks[port], signed_frames(key, "kernel_info_request", {}, "raw-" + port), curve)
            offer(socks["hb_port"], [b"ping"], curve)
            # The subscription takes a moment to reach the proxy once the
            # handshake is done: print until iopub hears it, or a while.
            deadline = time.monotonic() + (10 if curve else 3)
            while time.monotonic() < deadline and not socks["iopub_port"].poll(100):
                k.ok("print('for iopub')")
            answered[curve] = {port: bool(s.poll(1000 if curve else 300)) for port, s in socks.items()}
            for s in socks.values():
                s.close()
    finally:
        ctx.destroy(linger=0)
    assert answered[False] == dict.fromkeys(PORTS, False)
    # stdin speaks only when a cell asks for input: the encrypted stdin
    # port is run by jupyter_client's own client, in the test below.
    assert answered[True] == {**dict.fromkeys(PORTS, True), "stdin_port": False}
    assert k.ok("print('still fine')").stdout == "still fine\n"


def test_interrupt_input_and_shutdown(kernels, kenv):
    """The frontend's whole round, encrypted: input() over stdin, an
    interrupt_request over control (the -msgfront spec turns it into
    SIGINT), and a shutdown_request the proxy answers and ends on."""
    k = kernels.start(kenv.guarded + "-msgfront", configure=encrypted)
    assert "curve_publickey" in k.km.get_connection_info()
    # jupyter_client's heartbeat makes up a key pair of its own. It counts
    # as beating until a ping goes unanswered for time_to_dead: give it
    # three pings.
    hb = k.kc.hb_channel
    time.sleep(3 * hb.time_to_dead)
    assert hb.is_beating()

    r = k.ok("name = input('who? ')\nprint('hello', name)", allow_stdin=True,
             stdin_hook=lambda m: k.kc.input("Ada"))
    assert r.stdout == "hello Ada\n"

    msg_id = k.kc.execute("import time\nprint('armed', flush=True)\nfor _ in range(300): time.sleep(0.1)")
    seen = read_until_stream(k.kc, msg_id, "armed")
    k.km.interrupt_kernel()
    r = collect(k.kc, msg_id, iopub=seen)
    assert r.status == "error" and r.reply["content"]["ename"] == "KeyboardInterrupt"
    assert k.ok("print(name)").stdout == "Ada\n"

    proxy, child, popen = k.proc, k.pid(), k.km.provisioner.process
    reply = request(k.kc, "control", "shutdown_request", {"restart": False})
    assert reply["content"]["status"] == "ok"
    assert popen.wait(timeout=30) == 0, k.output()
    wait_until(lambda: not child.running() and not proxy.running(), 10, "the kernel to end")
    assert k.processes() == []


def test_auto_encrypts_guarded_whenever_plain_is(kernels, kenv):
    """Under "auto" Jupyter gives keys to a kernelspec that offers CURVE:
    ipykernel 7.4's does, and so does every guarded one, whatever its
    kernel offers (ipykernel 6 offers nothing)."""
    plain = kernels.start(kenv.id, configure=transport_encryption("auto"))
    guarded = kernels.start(kenv.guarded, configure=transport_encryption("auto"))
    assert ("curve_publickey" in plain.km.get_connection_info()) == (kenv.major >= 7)
    assert "curve_publickey" in guarded.km.get_connection_info()
    assert guarded.ok("print(6 * 7)").stdout == plain.ok("print(6 * 7)").stdout == "42\n"


# Keys Jupyter would never write, each as (curve_publickey, curve_secretkey).
PUBLIC, SECRET = (k.decode() for k in zmq.curve_keypair())
OTHER_PUBLIC, _ = zmq.curve_keypair()
BAD_KEYS = {
    "short": ({"curve_publickey": PUBLIC[:-1], "curve_secretkey": SECRET}, "curve_publickey: a Z85 key has 40 characters, not 39"),
    "not Z85": ({"curve_publickey": PUBLIC, "curve_secretkey": "~" * 40}, "curve_secretkey: character 1 of the key is not Z85"),
    "not a pair": ({"curve_publickey": OTHER_PUBLIC.decode(), "curve_secretkey": SECRET}, "the CURVE public key is not the secret key's"),
    "secret only": ({"curve_secretkey": SECRET}, "curve_publickey: a Z85 key has 40 characters, not 0"),
}


@pytest.mark.parametrize("case", BAD_KEYS)
def test_unusable_keys_stop_the_kernel(guardctl, jupyter_dirs, tmp_path, case):
    """Jupyter asked for encryption: keys that cannot be used stop guardctl
    kernel with one line saying why, before it listens or starts a kernel."""
    conn = tmp_path / "kernel-bad.json"
    fname, cfg = write_connection_file(str(conn), ip="127.0.0.1", key=b"k")
    keys, says = BAD_KEYS[case]
    conn.write_text(json.dumps({**cfg, **keys}))
    argv = [str(guardctl), "kernel", "-f", fname, "--", sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and says in lines[0] and "not starting the kernel in clear" in lines[0], done.stderr
    assert SECRET not in done.stderr
