"""Interrupting a running cell through the proxy, in each way a guarded
kernelspec can ask for it, delivers exactly one SIGINT to the kernel;
through a wrapped kernelspec and through the provisioner alike."""

from __future__ import annotations

import pytest

from support import cmdline, collect, read_until_stream
from support import request as request_reply

# The cell counts the SIGINTs it receives with a handler of its own (raising
# KeyboardInterrupt like Python's default one), says it is ready, and sleeps.
ARM_AND_SLEEP = """
import signal, sys, time
intr_count = 0
def _count(signum, frame):
    global intr_count
    intr_count += 1
    raise KeyboardInterrupt
signal.signal(signal.SIGINT, _count)
print("armed", flush=True)
for _ in range(300):  # naps: a SIGINT just before one long sleep waits it out
    time.sleep(0.1)
print("not interrupted")
"""

# mode → (the wrapped spec's suffix, the plain spec's that the provisioner
# guards), and what happens on km.interrupt_kernel():
MODES = {
    # jupyter_client killpg(SIGINT)s the proxy's group; the proxy relays the
    # signal to the child's own process group.
    "signal": ("-guarded", ""),
    # jupyter_client sends interrupt_request on control; the wrapped kernel
    # takes interrupts as messages too, so the proxy forwards the request.
    "message": ("-msg-guarded", "-msg"),
    # interrupt_request on control, but the wrapped kernel takes signals:
    # the proxy answers the request and sends SIGINT itself. Only a wrapped
    # spec edited by hand asks for it: the provisioner gives the proxy the
    # spec's own mode.
    "message-to-signal": ("-guarded-msgfront", None),
}
LAUNCHES = [(mode, launch) for mode in MODES for launch in ("wrapped", "provisioner")
            if launch == "wrapped" or MODES[mode][1] is not None]


def start(request, kernels, kenv, mode: str, launch: str):
    """The kernel for the mode, through its wrapped spec or the provisioner."""
    wrapped, plain = MODES[mode]
    if launch == "wrapped":
        return kernels.start(kenv.id + wrapped)
    request.getfixturevalue("provisioned")
    k = kernels.start(kenv.id + plain)
    assert cmdline(k.proc.pid)[1:2] == ["kernel"], f"not started under the guard: {cmdline(k.proc.pid)}"
    return k


@pytest.mark.parametrize("mode,launch", LAUNCHES)
def test_interrupt_ends_the_cell_with_one_sigint(request, kernels, kenv, kernelspecs, mode, launch):
    k = start(request, kernels, kenv, mode, launch)
    child = k.pid()

    msg_id = k.kc.execute(ARM_AND_SLEEP)
    # Interrupt only once the handler is in place: before that a SIGINT
    # would hit ipykernel's own handler and prove nothing about the count.
    seen = read_until_stream(k.kc, msg_id, "armed")
    k.km.interrupt_kernel()

    r = collect(k.kc, msg_id, iopub=seen)
    assert r.status == "error"
    assert r.reply["content"]["ename"] == "KeyboardInterrupt"
    assert r.error["ename"] == "KeyboardInterrupt"
    assert r.stdout == "armed\n"

    # A second SIGINT arriving late would interrupt this cell instead.
    r = k.ok("print(intr_count)")
    assert r.stdout == "1\n"
    # Interrupted, not restarted: same proxy, same kernel process, state kept.
    assert k.proc.running() and child.running()
    assert k.pid() == child
    assert k.ok("6 * 7").of_type("execute_result")[0]["content"]["data"]["text/plain"] == "42"


@pytest.mark.parametrize("mode,launch", [ml for ml in LAUNCHES if ml[0] != "signal"])
def test_interrupt_request_is_answered(request, kernels, kenv, kernelspecs, mode, launch):
    """An interrupt_request gets its interrupt_reply on control, whoever
    writes it (the kernel, or the proxy that turned it into a signal), and
    an interrupt while idle harms nothing."""
    k = start(request, kernels, kenv, mode, launch)
    child = k.pid()
    reply = request_reply(k.kc, "control", "interrupt_request", {})
    assert reply["content"]["status"] == "ok"
    assert k.ok("print('still here')").stdout == "still here\n"
    assert k.pid() == child


# After the cell's code has returned, before its reply is sent: ipykernel's
# finish_metadata, slowed down for the next cell. A SIGINT there reaches
# ipykernel's handler, which says "KeyboardInterrupt caught in kernel" and
# never sends the cell's execute_reply, only its idle.
NAP_AFTER_THE_CELL = """
import time
_kernel = get_ipython().kernel
_finish = _kernel.finish_metadata
_cells_seen = 0
def _nap_then_finish(*args):  # after the next cell, not this one
    global _cells_seen
    _cells_seen += 1
    if _cells_seen == 2:
        _kernel.finish_metadata = _finish
        print("code done", flush=True)
        time.sleep(5)
    return _finish(*args)
_kernel.finish_metadata = _nap_then_finish
"""


def test_an_interrupt_after_the_code_still_gets_the_cell_a_reply(kernels, kenv, kernelspecs):
    """The guard's interrupt can land as a cell ends (a one-step fill seen
    only when done): the kernel must not leave nbclient or guardctl run
    waiting for ever for a reply it dropped. The proxy answers it, and the
    kernel goes on."""
    k = kernels.start(kenv.id + "-guarded")
    child = k.pid()
    k.ok(NAP_AFTER_THE_CELL)
    msg_id = k.kc.execute("kept = 41")
    seen = read_until_stream(k.kc, msg_id, "code done")
    k.km.interrupt_kernel()
    r = collect(k.kc, msg_id, iopub=seen, timeout=20)
    assert r.status == "error" and r.reply["content"]["ename"] == "KeyboardInterrupt", r.reply
    assert "jupyter-guard: the interrupt reached the kernel as this cell was ending" in r.reply["content"]["traceback"][0]
    assert k.ok("print(kept + 1)").stdout == "42\n"
    assert k.pid() == child
