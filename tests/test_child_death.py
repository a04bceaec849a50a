"""The kernel dying under the proxy: the running cell ends with an error that
says what happened (instead of spinning forever), and the next cell runs on
a fresh kernel behind the same proxy and the same ports."""

from __future__ import annotations

import os
import queue
import re
import signal
import time

import pytest

from support import EXEC_TIMEOUT, children_of, collect, collect_all, read_until_stream, wait_until

# cell code → a pattern the death report must match (the cause, in words
# that may be rephrased but must name the exit code or the signal).
DEATHS = {
    "exit": ("os._exit(7)", r"exit\w* with (status|code) 7\b"),
    "sigkill": ("os.kill(os.getpid(), signal.SIGKILL)", r"\bSIGKILL\b"),
}


def doomed_cell(gate, death: str) -> str:
    """A cell that announces itself, then dies once the test creates gate.
    Waiting for the announcement makes the death truly mid-cell: the cell's
    busy status and output have reached the frontend before it dies."""
    return (f"import os, signal, time\nprint('about to die', flush=True)\n"
            f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.01)\n{death}\n")


def error_text(content: dict) -> str:
    """The text of an error output or reply, checked against the message
    spec first: frontends render traceback as a list of strings."""
    assert isinstance(content.get("ename"), str), content
    assert isinstance(content.get("evalue"), str), content
    tb = content.get("traceback")
    assert isinstance(tb, list) and all(isinstance(line, str) for line in tb), \
        f"traceback must be a list of strings: {content}"
    return "\n".join([content["evalue"], *tb])


@pytest.mark.parametrize("how", DEATHS)
def test_death_mid_cell(kernels, kenv, tmp_path, how):
    death, cause = DEATHS[how]
    k = kernels.start(kenv.guarded)
    k.ok("death_marker = 'old kernel'")
    old_child = k.pid()

    gate = tmp_path / "die-now"
    msg_id = k.kc.execute(doomed_cell(gate, death))
    seen = read_until_stream(k.kc, msg_id, "about to die")
    gate.touch()
    r = collect(k.kc, msg_id, iopub=seen)

    # The cell ends: an error reply, the error in its output, then idle.
    assert r.status == "error", r.reply["content"]
    assert r.states() == ["busy", "idle"]
    err = r.error
    assert err is not None, f"no error output in {r.iopub}"
    text = error_text(err)
    assert "died" in text and re.search(cause, text), text
    assert "restart" in text, text
    assert r.reply["content"]["ename"] == err["ename"]
    assert r.reply["content"]["evalue"] == err["evalue"]
    assert not old_child.running()

    # The next cell runs on a new kernel: same proxy, new process, no state.
    new_child = k.pid()
    assert new_child != old_child
    assert new_child.pid in children_of(k.proc.pid)
    assert k.proc.running() and k.km.is_alive()
    r = k.run("death_marker")
    assert r.status == "error" and r.reply["content"]["ename"] == "NameError"
    assert k.ok("print(sum(range(5)))").stdout == "10\n"


def test_cell_queued_behind_the_dying_one(kernels, kenv, tmp_path):
    """A cell sent while another runs, when the kernel dies, must still end
    like any cell: busy, then either an error saying it never ran and its
    error reply, or (had it reached the proxy only after the death) its run
    on the new kernel; then idle."""
    k = kernels.start(kenv.guarded)
    gate = tmp_path / "die-now"
    dying = k.kc.execute(doomed_cell(gate, "os._exit(3)"))
    seen = read_until_stream(k.kc, dying, "about to die")
    queued = k.kc.execute("print('queued cell ran')")
    # Give the queued request time to reach the old kernel, so the first
    # branch below is the one normally taken; either is correct.
    time.sleep(0.5)
    gate.touch()

    runs = collect_all(k.kc, {dying: seen, queued: []})
    first, r = runs[dying], runs[queued]
    assert first.status == "error"
    assert re.search(r"exit\w* with (status|code) 3\b", error_text(first.error))
    assert r.states() == ["busy", "idle"], [(m["msg_type"], m["content"]) for m in r.iopub]
    if r.status == "error":
        assert r.stdout == ""
        assert "died" in error_text(r.error)
        assert "died" in error_text(r.reply["content"])
    else:
        assert r.status == "ok" and r.stdout == "queued cell ran\n", r.reply["content"]
    assert k.ok("print('fresh')").stdout == "fresh\n"


def test_death_while_idle_is_told_in_the_next_cell(kernels, kenv):
    """Killed between cells (the OOM killer's way), the kernel is restarted;
    the next cell says why its variables are gone, then runs."""
    k = kernels.start(kenv.guarded)
    old_child = k.pid()
    os.kill(old_child.pid, signal.SIGKILL)
    wait_until(lambda: [p for p in children_of(k.proc.pid) if p != old_child.pid], 60,
               "the proxy to start a new kernel")

    r = k.run("print('after the death')")
    assert r.status == "ok", r.reply["content"]
    assert "after the death\n" in r.stdout
    assert "died" in r.stderr and "SIGKILL" in r.stderr, r.stderr
    assert k.pid() != old_child
    # Told once, not in every cell from now on.
    assert k.ok("print('again')").stderr == ""


def test_comm_messages_are_not_requests(kernels, kenv):
    """comm_msg gets no reply from a kernel, so a death must not invent one:
    5,000 of them, then the kernel killed between cells, and the client gets
    no comm_msg_reply (the proxy used to track them as requests and answer
    each with an error when the kernel died)."""
    k = kernels.start(kenv.guarded)
    # In batches, reading the busy and idle each one publishes, as a
    # frontend does: a client that reads nothing loses iopub messages past
    # the high-water mark, plain or guarded.
    for _ in range(25):
        for _ in range(200):
            msg = k.kc.session.msg("comm_msg", {"comm_id": "no-such-comm", "data": {}})
            k.kc.shell_channel.send(msg)
        while not (m := k.kc.get_iopub_msg(timeout=EXEC_TIMEOUT))["parent_header"].get("msg_id") == msg["header"]["msg_id"] \
                or m["content"].get("execution_state") != "idle":
            pass
    old_child = k.pid()
    os.kill(old_child.pid, signal.SIGKILL)
    wait_until(lambda: [p for p in children_of(k.proc.pid) if p != old_child.pid], 60,
               "the proxy to start a new kernel")
    assert k.run("print('after the death')").status == "ok"
    replies = []
    while True:
        try:
            replies.append(k.kc.get_shell_msg(timeout=0.5)["msg_type"])
        except queue.Empty:
            break
    assert "comm_msg_reply" not in replies, f"{replies.count('comm_msg_reply')} invented comm_msg_reply"
