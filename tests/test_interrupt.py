"""Interrupting a running cell through the proxy, in each way a guarded
kernelspec can ask for it, delivers exactly one SIGINT to the kernel."""

from __future__ import annotations

import pytest

from support import collect, read_until_stream, request

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

# spec suffix → what happens on km.interrupt_kernel():
MODES = {
    # jupyter_client killpg(SIGINT)s the proxy's group; the proxy relays the
    # signal to the child's own process group.
    "signal": "-guarded",
    # jupyter_client sends interrupt_request on control; the wrapped kernel
    # takes interrupts as messages too, so the proxy forwards the request.
    "message": "-msg-guarded",
    # interrupt_request on control, but the wrapped kernel takes signals:
    # the proxy answers the request and sends SIGINT itself.
    "message-to-signal": "-guarded-msgfront",
}


@pytest.mark.parametrize("mode", MODES)
def test_interrupt_ends_the_cell_with_one_sigint(kernels, kenv, kernelspecs, mode):
    spec = kenv.id + MODES[mode]
    k = kernels.start(spec)
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


@pytest.mark.parametrize("mode", ["message", "message-to-signal"])
def test_interrupt_request_is_answered(kernels, kenv, kernelspecs, mode):
    """An interrupt_request gets its interrupt_reply on control, whoever
    writes it (the kernel, or the proxy that turned it into a signal), and
    an interrupt while idle harms nothing."""
    k = kernels.start(kenv.id + MODES[mode])
    child = k.pid()
    reply = request(k.kc, "control", "interrupt_request", {})
    assert reply["content"]["status"] == "ok"
    assert k.ok("print('still here')").stdout == "still here\n"
    assert k.pid() == child
