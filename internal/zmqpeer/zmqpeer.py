"""A libzmq peer for the Go interop tests.

Usage: python zmqpeer.py MODE ENDPOINT [curve SERVERKEY PUBLICKEY SECRETKEY]

With curve (keys in Z85) the socket speaks CurveZMQ: a binding mode's as
the server with its own pair (PUBLICKEY, SECRETKEY), as a kernel does; a
connecting mode's as a client of SERVERKEY with the pair, as
jupyter_client's sockets do.

Binding modes print the endpoint they bound, one line, once ready. Modes
that check something print "ok" and exit 0 once every check passed; any
failure raises and exits non-zero. The Go side is internal/zmqpeer, which
embeds this file.
"""
import sys
import time

import zmq

CURVE = None  # (server, public, secret), from the command line


def socket(ctx, kind, binds):
    """A socket of kind, a CurveZMQ server or client if CURVE is set."""
    s = ctx.socket(kind)
    if CURVE:
        server, public, secret = CURVE
        s.curve_publickey, s.curve_secretkey = public, secret
        if binds:
            s.curve_server = True
        else:
            s.curve_serverkey = server
    return s


def messages():
    """Frame layouts the Go side also sends: Jupyter-shaped, empty frames,
    the 255/256-byte size switch, and a 20 MB frame."""
    return [
        [b"<IDS|MSG>", b"f" * 64, b'{"msg_type":"execute_request"}', b"{}", b"{}", b'{"code":"pass"}'],
        [b""],
        [b"", b"", b"x", b""],
        [b"a" * 255, b"b" * 256],
        [b"<IDS|MSG>", bytes(range(256)) * (20 * 4096), b"tail"],
    ]


def ready(sock):
    print(sock.getsockopt(zmq.LAST_ENDPOINT).decode(), flush=True)


def router_echo(ctx, ep):
    """Echo every message to its sender, like a kernel's shell or
    heartbeat ROUTER; "whoami" answers with the sender's routing id."""
    s = socket(ctx, zmq.ROUTER, binds=True)
    s.bind(ep)
    ready(s)
    while True:
        frames = s.recv_multipart()
        body = frames[1:]
        if body == [b"quit"]:
            return
        if body == [b"whoami"]:
            s.send_multipart([frames[0], frames[0]])
            continue
        s.send_multipart(frames)


def router_sends(ctx, ep):
    """Send every message to the first DEALER that says hello with its own
    routing id, and check that each comes back unchanged: the DEALER under
    test reads and writes libzmq's framing."""
    s = socket(ctx, zmq.ROUTER, binds=True)
    s.bind(ep)
    ready(s)
    peer, hello = s.recv_multipart()
    assert peer == hello, "routing id %r, the dealer says it is %r" % (peer, hello)
    for msg in messages():
        s.send_multipart([peer] + msg)
        back = s.recv_multipart()
        assert back == [peer] + msg, "echo differs for a %d-frame message" % len(msg)


def dealer(ctx, ep):
    s = socket(ctx, zmq.DEALER, binds=False)
    s.setsockopt(zmq.IDENTITY, b"py-dealer")
    s.connect(ep)
    for msg in messages():
        s.send_multipart(msg)
        back = s.recv_multipart()
        assert back == msg, "echo differs for a %d-frame message" % len(msg)


def heartbeats(ctx, ep):
    """A DEALER that sends ZMTP PINGs every 10 ms and drops the connection
    if a PONG is 50 ms late (Jupyter sets no heartbeats; libzmq may): under
    CURVE both travel as commands inside MESSAGE boxes. It echoes for
    half a second and checks it never reconnected."""
    s = socket(ctx, zmq.DEALER, binds=False)
    s.heartbeat_ivl, s.heartbeat_timeout = 10, 50
    monitor = s.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
    s.connect(ep)
    for i in range(10):
        s.send(b"%d" % i)
        assert s.poll(2000) and s.recv() == b"%d" % i, "no echo of %d" % i
        time.sleep(0.05)
    handshakes = 0
    while monitor.poll(0):
        monitor.recv_multipart()
        handshakes += 1
    assert handshakes == 1, "%d handshakes: the connection dropped" % handshakes


def refused(ctx, ep):
    """A DEALER the server under test must refuse at the handshake: what
    it sends is never answered."""
    s = socket(ctx, zmq.DEALER, binds=False)
    s.linger = 0
    s.connect(ep)
    s.send(b"let me in")
    assert not s.poll(500), "the server answered a peer it should refuse"


def req(ctx, ep):
    """Jupyter's heartbeat; under CurveZMQ jupyter_client makes up a new
    key pair for it, which the server knows nothing of."""
    s = socket(ctx, zmq.REQ, binds=False)
    if CURVE:
        s.curve_publickey, s.curve_secretkey = zmq.curve_keypair()
    s.connect(ep)
    for i in range(100):
        ping = b"ping %d" % i
        s.send(ping)
        pong = s.recv()
        assert pong == ping, "pong %r for ping %r" % (pong, ping)


def sub(ctx, ep):
    """Jupyter's IOPub subscriber. libzmq's SUB also filters what arrives,
    so this shows the subscription works, not that the PUB filters."""
    s = socket(ctx, zmq.SUB, binds=False)
    s.setsockopt(zmq.SUBSCRIBE, b"iopub.")
    s.connect(ep)
    expect_iopub(s)


def xsub(ctx, ep):
    """A subscriber that filters nothing itself: whatever the PUB should
    have kept back shows."""
    s = socket(ctx, zmq.XSUB, binds=False)
    s.connect(ep)
    s.send(b"\x01iopub.")
    expect_iopub(s)


def expect_iopub(s):
    for _ in range(5):
        frames = s.recv_multipart()
        assert frames[0].startswith(b"iopub."), "unsubscribed topic %r" % frames[0]


def xpub(ctx, ep):
    """Like ipykernel's IOPub: wait for a subscription, then publish to it
    until stdin closes."""
    s = socket(ctx, zmq.XPUB, binds=True)
    s.bind(ep)
    ready(s)
    subscription = s.recv()
    assert subscription[:1] == b"\x01", "not a subscription: %r" % subscription
    topic = subscription[1:]
    for i in range(5):
        s.send_multipart([b"other.status", b"filtered"])
        s.send_multipart([topic + b"status", b"%d" % i])
    sys.stdin.read()


MODES = {
    "router-echo": router_echo,
    "router-sends": router_sends,
    "dealer": dealer,
    "refused": refused,
    "heartbeats": heartbeats,
    "req": req,
    "sub": sub,
    "xsub": xsub,
    "xpub": xpub,
}
CHECKS = {"router-sends", "dealer", "heartbeats", "refused", "req", "sub", "xsub"}


def main():
    global CURVE
    mode, ep = sys.argv[1], sys.argv[2]
    if sys.argv[3:4] == ["curve"]:
        CURVE = [k.encode() for k in sys.argv[4:7]]
    ctx = zmq.Context()
    MODES[mode](ctx, ep)
    if mode in CHECKS:
        print("ok", flush=True)
    ctx.destroy(linger=1000)


if __name__ == "__main__":
    main()
