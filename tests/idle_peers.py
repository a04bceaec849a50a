"""Peers that shake hands on a kernel's ports and then say nothing, as a
hostile local user needs no key to do: the attacker of
tests/test_bounds.py, in a process of its own (its descriptors are its own,
and it is outside the memory cgroup of the kernel it attacks).

    python idle_peers.py '{"ports": [[port, "DEALER"], ...], "n": 20000}'

Opens n tcp connections to 127.0.0.1, round-robin over the ports, each
with a ZMTP 3.0 NULL greeting and READY of its socket type, and reads the
proxy's greeting and READY before the next one. A connection the proxy
closes later stays open on this side, as an attacker's would. Prints one
JSON line when done ({"handshaked": ..., "refused": ..., "seconds": ...}),
then holds them until its stdin closes. Raises its own descriptor limit to
fit n when it may, else stops short and says so ("fit")."""

from __future__ import annotations

import json
import resource
import socket
import sys
import time

from support import ZMTP_GREETING, zmtp_ready


def raise_nofile(n: int) -> int:
    """Makes room for n descriptors and some; returns how many fit."""
    want = n + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
        except (ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 256


def handshake(port: int, kind: str) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(ZMTP_GREETING + zmtp_ready(kind.encode()))
    got = b""
    # The greeting (64 bytes), then READY: flags, size, body.
    while len(got) < 66 or len(got) < 66 + got[65]:
        chunk = s.recv(4096)
        if not chunk:
            s.close()
            raise ConnectionError("closed during the handshake")
        got += chunk
    return s


def main(cfg: dict) -> None:
    n = min(cfg["n"], raise_nofile(cfg["n"]))
    ports = cfg["ports"]
    held, refused = [], 0
    started = time.monotonic()
    for i in range(n):
        port, kind = ports[i % len(ports)]
        try:
            held.append(handshake(port, kind))
        except OSError:
            refused += 1
    print(json.dumps({"handshaked": len(held), "refused": refused, "asked": cfg["n"], "fit": n,
                      "seconds": round(time.monotonic() - started, 2)}), flush=True)
    sys.stdin.read()
    for s in held:
        s.close()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
