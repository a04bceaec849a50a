"""Whatever arrives on the kernel's ports, the proxy survives it: malformed
and unsigned messages are dropped with one clear line in guardctl's log, raw
garbage on a TCP connection is shrugged off, and afterwards the kernel still
runs code for the clients already connected and for new ones.

These run against the ipykernel 7 environment only: nothing here may reach
the kernel, and the proxy's frontend side is the same whatever it wraps."""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import uuid

import pytest
import zmq
from jupyter_client import BlockingKernelClient
from zmq.utils.monitor import recv_monitor_message

from conftest import KERNEL_ENVS
from support import EXEC_TIMEOUT, ZMTP_GREETING, collect, sign, signed_frames, wait_until, zmtp_ready

ENV = KERNEL_ENVS[0]
CHANNELS = ["shell", "control", "stdin"]


@pytest.fixture(scope="module")
def shared(module_kernels):
    """One guarded kernel for the module; a test that kills it gets the next
    test a new one (see `victim`), so one failure does not fail them all."""
    return {"kernel": module_kernels.start(ENV.guarded), "kernels": module_kernels}


@pytest.fixture
def victim(shared):
    k = shared["kernel"]
    if not k.proc.running():
        k = shared["kernel"] = shared["kernels"].start(ENV.guarded)
    return k


@pytest.fixture
def zctx():
    ctx = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


def endpoint(k, channel: str) -> tuple[str, int]:
    info = k.km.get_connection_info()
    return info["ip"], info[f"{channel}_port"]


def dealer(zctx, k, channel: str) -> zmq.Socket:
    s = zctx.socket(zmq.DEALER)
    s.setsockopt(zmq.IDENTITY, uuid.uuid4().hex.encode())
    s.setsockopt(zmq.LINGER, 0)
    ip, port = endpoint(k, channel)
    s.connect(f"tcp://{ip}:{port}")
    return s


def key_of(k) -> bytes:
    return k.km.get_connection_info()["key"]


def dropped_lines(k, channel: str) -> list[str]:
    return re.findall(rf"^.*dropped a message on {channel}\b.*$", k.output(), re.M)


def marker_code(marker) -> dict:
    """An execute_request whose running would leave a file behind: proof,
    if it exists, that a message that should have been dropped ran."""
    return {"code": f"open({str(marker)!r}, 'w').close()", "silent": False, "store_history": False,
            "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}


def still_works(k, label: str):
    """The proxy is alive and the already connected client runs code."""
    try:
        r = collect(k.kc, k.kc.execute("print('alive', 6 * 7)"), alive=k.proc.running)
    except (AssertionError, TimeoutError) as e:
        state = "running" if k.proc.running() else "dead"
        raise AssertionError(f"no answer after {label} ({e}); the proxy is {state}; its log:\n{k.output()}") from e
    assert r.status == "ok" and r.stdout == "alive 42\n", (label, r.reply["content"], k.output())


# ------------------------------------------------------------ bad messages

WRONG_TYPE = {"shell": "input_reply", "control": "comm_open", "stdin": "execute_request"}


def bad_message(case: str, channel: str, key: bytes, session: str, marker) -> tuple[list[bytes], str]:
    """The frames of one kind of bad message, and the words the log line
    about it must contain."""
    good = signed_frames(key, "execute_request", marker_code(marker), session)
    h, p, md, c = good[2:6]
    if case == "one_empty_frame":
        return [b""], "delimiter"
    if case == "too_few_frames":
        return good[:4], "frames"
    if case == "no_delimiter":
        return good[1:], "delimiter"
    if case == "unsigned":
        return [b"<IDS|MSG>", b"", h, p, md, c], "signature"
    if case == "wrongly_signed":
        return [b"<IDS|MSG>", sign(b"not-the-key", h, p, md, c), h, p, md, c], "signature"
    if case == "signature_of_other_frames":
        return [b"<IDS|MSG>", sign(key, h, p, md, b"{}"), h, p, md, c], "signature"
    if case == "bad_json":
        broken = b'{"code": "print(1)", '
        return [b"<IDS|MSG>", sign(key, h, p, md, broken), h, p, md, broken], "JSON"
    if case == "bad_json_header":
        broken = b'{"msg_id": '
        return [b"<IDS|MSG>", sign(key, broken, p, md, c), broken, p, md, c], "JSON"
    if case == "wrong_channel":
        msg_type = WRONG_TYPE[channel]
        content = marker_code(marker) if msg_type == "execute_request" else {"value": "x", "comm_id": "c", "target_name": "t", "data": {}}
        return signed_frames(key, msg_type, content, session), msg_type
    raise ValueError(case)


BAD_CASES = ["one_empty_frame", "too_few_frames", "no_delimiter", "unsigned", "wrongly_signed",
             "signature_of_other_frames", "bad_json", "bad_json_header", "wrong_channel"]


def test_raw_dealer_is_answered(victim, zctx):
    """The raw-socket helpers speak the protocol: a good message gets its
    reply. Without this, the drops below could be the helpers' fault."""
    s = dealer(zctx, victim, "shell")
    key = key_of(victim)
    s.send_multipart(signed_frames(key, "kernel_info_request", {}, "raw-session"))
    assert s.poll(EXEC_TIMEOUT * 1000), "no kernel_info_reply"
    frames = s.recv_multipart()
    d = frames.index(b"<IDS|MSG>")
    sig, h, p, md, c = frames[d + 1:d + 6]
    assert sig == sign(key, h, p, md, c)
    assert json.loads(h)["msg_type"] == "kernel_info_reply"
    # The frames are ipykernel's own bytes (Python's json.dumps layout, with
    # ", " and ": "), not a re-encoding by the proxy.
    for frame in (h, p, c):
        assert frame == json.dumps(json.loads(frame), ensure_ascii=False).encode(), frame[:200]
    assert json.loads(c)["language_info"]["name"] == "python"


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_message_is_dropped(victim, zctx, tmp_path, channel, case):
    """Dropped, never run, and said in the log: each kind of trouble is
    logged at most once per 10 s, so the line may be an earlier case's of
    the same kind (their count shows on the next line)."""
    marker = tmp_path / "ran"
    frames, reason = bad_message(case, channel, key_of(victim), "bad-session", marker)
    # Kept open until the end: zmq connects in the background, and closing
    # the socket at once could discard the message before it is sent.
    s = dealer(zctx, victim, channel)
    s.send_multipart(frames)

    def said():
        return [line for line in dropped_lines(victim, channel) if reason.lower() in line.lower()]

    wait_until(said, 30, f"guardctl to log a dropped message on {channel} for {reason}")
    still_works(victim, f"{case} on {channel}")
    assert not marker.exists(), "the dropped message was executed"
    s.close()


def test_many_bad_messages_in_a_row(victim, zctx):
    """20,000 unsigned messages in a row on one connection (no key is
    needed to connect): the log gets a line now and then, not one each
    (one connection once wrote 5.4 million lines in 10 s), and the same
    connection then carries a good request."""
    s = dealer(zctx, victim, "shell")
    key = key_of(victim)
    before = len(dropped_lines(victim, "shell"))
    for _ in range(20000):
        s.send_multipart([b"<IDS|MSG>", b"", b"{}", b"{}", b"{}", b"{}"])
    s.send_multipart(signed_frames(key, "kernel_info_request", {}, "raw-session"))
    assert s.poll(EXEC_TIMEOUT * 1000), "no reply after the bad messages"
    assert b"kernel_info_reply" in b"".join(s.recv_multipart())
    lines = dropped_lines(victim, "shell")[before:]
    # The requests on one connection are handled in order: by the reply,
    # every drop has been counted. At most one line per 10 s, and the
    # first of a kind not seen in the last 10 s is logged at once.
    assert len(lines) <= 2, lines


# ------------------------------------------------------------- raw garbage

PEER_TYPE = {"shell": b"DEALER", "control": b"DEALER", "stdin": b"DEALER", "iopub": b"SUB", "hb": b"REQ"}

GARBAGE = {
    "connect_and_close": lambda ch: b"",
    "random_bytes": lambda ch: os.urandom(4096),
    "http_request": lambda ch: b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "greeting_then_garbage": lambda ch: ZMTP_GREETING + b"\x04\xffNOT A COMMAND" + os.urandom(512),
    # A valid handshake, then a frame that claims to be 2**62 bytes long:
    # the proxy must not try to allocate it.
    "huge_frame_length": lambda ch: ZMTP_GREETING + zmtp_ready(PEER_TYPE[ch]) + b"\x02" + struct.pack(">Q", 1 << 62),
    "mechanism_curve": lambda ch: ZMTP_GREETING.replace(b"NULL".ljust(20, b"\x00"), b"CURVE".ljust(20, b"\x00")) + os.urandom(64),
}


def fresh_client_works(k):
    """A client connecting now (new TCP connections on every port) can run
    code, answer input() on stdin, get the output on iopub, and ping hb."""
    # Not k.km.client(): that shares the manager's session, and so its zmq
    # identity, with the client already connected; a ROUTER refuses a
    # second peer with an identity in use.
    kc = BlockingKernelClient()
    kc.load_connection_info(k.km.get_connection_info())
    kc.start_channels(hb=False)
    try:
        kc.wait_for_ready(timeout=EXEC_TIMEOUT)
        out = []
        reply = kc.execute_interactive("print('fresh', input('? '))", allow_stdin=True, timeout=EXEC_TIMEOUT,
                                       stdin_hook=lambda m: kc.input("client"), output_hook=out.append)
        assert reply["content"]["status"] == "ok", reply["content"]
        text = "".join(m["content"]["text"] for m in out if m["msg_type"] == "stream")
        assert text == "fresh client\n"
    finally:
        kc.stop_channels()
    ctx = zmq.Context()
    try:
        hb = ctx.socket(zmq.REQ)
        hb.setsockopt(zmq.LINGER, 0)
        ip, port = endpoint(k, "hb")
        hb.connect(f"tcp://{ip}:{port}")
        hb.send(b"ping after garbage")
        assert hb.poll(EXEC_TIMEOUT * 1000), "no heartbeat echo"
        assert hb.recv() == b"ping after garbage"
    finally:
        ctx.destroy(linger=0)


@pytest.mark.parametrize("channel", ["shell", "control", "stdin", "iopub", "hb"])
@pytest.mark.parametrize("garbage", list(GARBAGE))
def test_garbage_on_a_port(victim, channel, garbage):
    data = GARBAGE[garbage](channel)
    with socket.create_connection(endpoint(victim, channel), timeout=10) as s:
        if data:
            try:
                s.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the proxy may hang up on us first: that is fine
        # Read whatever the proxy answers (its greeting) until it hangs up
        # or goes quiet, so the garbage is processed before we look.
        s.settimeout(0.5)
        try:
            while s.recv(65536):
                pass
        except (socket.timeout, ConnectionResetError):
            pass
    still_works(victim, f"{garbage} on {channel}")
    fresh_client_works(victim)


def test_subscribers_that_never_read_cost_only_themselves(victim, zctx):
    """Five raw SUBs on iopub (no key is needed to subscribe) that never
    read, with the smallest buffers libzmq and the kernel allow, so they
    stall within the first few hundred kB: a cell printing 20,000 lines of
    1 KB (20 MB) still reaches the reading client whole, then idle: the
    proxy queues what the stuck ones do not take instead of waiting on them
    (before, it waited up to 30 s on each, then cut it off). None of them is
    disconnected: as with libzmq, a slow subscriber is behind, not gone."""
    ip, port = endpoint(victim, "iopub")
    stuck = []  # kept: a collected pyzmq socket closes itself
    for _ in range(5):
        s = zctx.socket(zmq.SUB)
        stuck.append(s)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.RCVHWM, 1)
        s.setsockopt(zmq.RCVBUF, 4096)
        s.setsockopt(zmq.SUBSCRIBE, b"")
        monitor = s.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
        s.connect(f"tcp://{ip}:{port}")
        # The subscription follows the handshake on the same connection.
        assert monitor.poll(EXEC_TIMEOUT * 1000), "a SUB never connected"
        recv_monitor_message(monitor)
    r = victim.run("for i in range(20000):\n    print(f'{i:05d}' + 'x' * 1017)\n")
    assert r.status == "ok", r.reply["content"]
    lines = r.stdout.splitlines()
    assert len(lines) == 20000 and lines[-1].startswith("19999"), (len(lines), lines[-1:])
    assert r.states()[-1] == "idle"
    # A stuck SUB does not read, so it would not notice being cut off:
    # count the proxy's side, the reading client's connection and five.
    assert established_to(port) == 6, "the proxy disconnected subscribers that were only slow"
    assert victim.ok("print('still here')").stdout == "still here\n"


def established_to(port: int) -> int:
    """How many TCP connections to this machine's port are established,
    counted on the listening side (/proc/net/tcp: local port, state 01)."""
    n = 0
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        n += int(local.split(":")[1], 16) == port and state == "01"
    return n
