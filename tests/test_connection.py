"""Connection files other than jupyter_client's default (tcp, a random key)
that Jupyter writes when configured to: the proxy binds and checks what the
file says, like the kernel would."""

from __future__ import annotations

import os

import pytest


def ipc(km):
    # ipykernel itself recommends IPC over unencrypted TCP on every start.
    km.transport = "ipc"
    km.ip = os.path.join(os.environ["JUPYTER_RUNTIME_DIR"], "ipc-kernel")


def no_key(km):
    # An empty key means unsigned messages, accepted as such (Session docs).
    km.session.key = b""


@pytest.mark.parametrize("configure", [ipc, no_key], ids=["ipc", "empty-key"])
def test_connection_variants(kernels, kenv, configure):
    plain = kernels.start(kenv.id, configure=configure)
    guarded = kernels.start(kenv.guarded, configure=configure)
    info = guarded.km.get_connection_info()
    if configure is ipc:
        assert info["transport"] == "ipc"
        # The proxy, not the kernel, listens where the file says.
        assert os.path.exists(f"{info['ip']}-{info['shell_port']}")
    else:
        assert info["key"] == b""
    p = plain.ok("print('via', 6 * 7)\ninput('name? ')", allow_stdin=True,
                 stdin_hook=lambda m: plain.kc.input("stdin works"))
    g = guarded.ok("print('via', 6 * 7)\ninput('name? ')", allow_stdin=True,
                   stdin_hook=lambda m: guarded.kc.input("stdin works"))
    assert g.normalized() == p.normalized()
    assert g.stdout == "via 42\n"
    assert g.of_type("execute_result")[0]["content"]["data"]["text/plain"] == "'stdin works'"
