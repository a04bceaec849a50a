"""The proxy is transparent: every kind of request a frontend makes gets the
same answer through guardctl as from the kernel itself. Each test asks the
plain kernel and the guarded one the same thing and compares what came back,
and checks the content is the real thing, not two equal empty answers.

The plain and guarded kernels are shared by this module's tests (one pair
per kernel environment, in clear and encrypted); each test uses names of
its own."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re

import pytest
import zmq
from jupyter_client import BlockingKernelClient

from support import (EXEC_TIMEOUT, Run, check_parentage, collect_all, collect_iopub, drain_iopub, raw_socket,
                     read_until_stream, request, transport_encryption)


@pytest.fixture(scope="module", params=["clear", "curve"])
def encryption(request) -> str:
    """Every test here runs twice: with the kernels as Jupyter starts them
    by default, and encrypted as far as each can be (the plain kernel under
    transport_encryption="auto", which ipykernel 7 honours and ipykernel 6,
    speaking no CURVE, is left in clear by; the guarded one under
    "required": the proxy is the CurveZMQ server of every client socket)."""
    return request.param


def start(module_kernels, spec: str, policy: str | None):
    return module_kernels.start(spec, configure=transport_encryption(policy) if policy else None)


@pytest.fixture(scope="module")
def plain(module_kernels, kenv, encryption):
    k = start(module_kernels, kenv.id, "auto" if encryption == "curve" else None)
    assert ("curve_publickey" in k.km.get_connection_info()) == (encryption == "curve" and kenv.major >= 7)
    return k


@pytest.fixture(scope="module")
def guarded(module_kernels, kenv, encryption):
    k = start(module_kernels, kenv.guarded, "required" if encryption == "curve" else None)
    assert ("curve_publickey" in k.km.get_connection_info()) == (encryption == "curve")
    return k


def both(plain, guarded, code: str, **kwargs) -> tuple[Run, Run]:
    return plain.run(code, **kwargs), guarded.run(code, **kwargs)


def normalize_traceback(lines: list[str]) -> list[str]:
    # "Cell In[7]" counts the kernel's executions, and ipykernel names cell
    # files after its pid (/tmp/ipykernel_1234/…); neither is the proxy's doing.
    # IPython colours tracebacks; the colours split the words.
    out = []
    for line in lines:
        line = re.sub(r"\x1b\[[0-9;]*m", "", line)
        line = re.sub(r"In\s*\[\d+\]", "In[N]", line)
        line = re.sub(r"ipykernel_\d+/\d+", "ipykernel_PID/N", line)
        out.append(line)
    return out


def without_banner(content: dict) -> dict:
    return {k: v for k, v in content.items() if k != "banner"}


def test_kernel_runs_behind_the_proxy(guarded, plain, kenv, guardctl):
    """The guarded spec really starts guardctl, which really starts the
    environment's ipykernel as its child: otherwise every comparison below
    would compare a kernel with itself."""
    assert guarded.proc.pid != plain.proc.pid
    r = guarded.ok("import os, sys, ipykernel; print(os.getppid(), sys.executable, ipykernel.__version__)")
    ppid, exe, version = r.stdout.split()
    assert int(ppid) == guarded.proc.pid
    assert exe == str(kenv.python)
    assert version.startswith(kenv.ipykernel)
    with open(f"/proc/{guarded.proc.pid}/cmdline", "rb") as f:
        assert f.read().split(b"\0")[0].decode() == str(guardctl)


def test_kernel_info_passes_through(plain, guarded, kenv):
    p = request(plain.kc, "shell", "kernel_info_request", {})
    g = request(guarded.kc, "shell", "kernel_info_request", {})
    # IPython ends the banner with a tip chosen at random.
    assert without_banner(g["content"]) == without_banner(p["content"])
    c = g["content"]
    assert c["status"] == "ok"
    assert c["banner"].startswith("Python ")
    assert c["language_info"]["name"] == "python"
    assert c["language_info"]["version"].count(".") == 2
    assert c["implementation"] == "ipython"
    assert re.fullmatch(r"5\.\d+", c["protocol_version"])
    assert g["header"]["version"] == p["header"]["version"]


def test_kernel_info_on_control(plain, guarded):
    p = request(plain.kc, "control", "kernel_info_request", {})
    g = request(guarded.kc, "control", "kernel_info_request", {})
    assert without_banner(g["content"]) == without_banner(p["content"])
    assert g["content"]["language_info"]["name"] == "python"


def test_execute_streams_and_result(plain, guarded):
    code = "import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\nmsg_t = 6 * 7\nmsg_t"
    p, g = both(plain, guarded, code)
    assert g.normalized() == p.normalized()
    assert g.status == "ok"
    assert g.stdout == "to stdout\n"
    assert g.stderr == "to stderr\n"
    (result,) = g.of_type("execute_result")
    assert result["content"]["data"] == {"text/plain": "42"}
    assert g.states()[0] == "busy" and g.states()[-1] == "idle"
    (inp,) = g.of_type("execute_input")
    assert inp["content"]["code"] == code
    assert result["content"]["execution_count"] == g.reply["content"]["execution_count"]


def test_execute_error_with_traceback(plain, guarded):
    code = "def msg_fails():\n    raise ValueError('boom from the cell')\nmsg_fails()"
    p, g = both(plain, guarded, code)
    for r in (p, g):
        assert r.status == "error"
        assert r.reply["content"]["ename"] == "ValueError"
        assert r.reply["content"]["evalue"] == "boom from the cell"
    assert normalize_traceback(g.error["traceback"]) == normalize_traceback(p.error["traceback"])
    assert any("msg_fails()" in line for line in normalize_traceback(g.error["traceback"]))
    assert normalize_traceback(g.reply["content"]["traceback"]) == normalize_traceback(g.error["traceback"])


def test_display_and_update_display(plain, guarded):
    code = (
        "from IPython.display import display, HTML\n"
        "h = display(HTML('<b>first</b>'), display_id='msg-disp')\n"
        "h.update(HTML('<i>second</i>'))\n"
        "display({'application/json': {'k': [1, 2]}, 'text/plain': 'json'}, raw=True)\n"
    )
    p, g = both(plain, guarded, code)
    assert g.normalized() == p.normalized()
    shown = g.of_type("display_data", "update_display_data")
    assert [m["msg_type"] for m in shown] == ["display_data", "update_display_data", "display_data"]
    assert shown[0]["content"]["data"]["text/html"] == "<b>first</b>"
    assert shown[0]["content"]["transient"] == {"display_id": "msg-disp"}
    assert shown[1]["content"]["data"]["text/html"] == "<i>second</i>"
    assert shown[1]["content"]["transient"] == {"display_id": "msg-disp"}
    assert shown[2]["content"]["data"]["application/json"] == {"k": [1, 2]}


def test_input_over_stdin(plain, guarded):
    """input() and getpass() ask the frontend on stdin; the answer must
    reach the kernel that asked."""
    code = "import getpass\nname = input('your name: ')\npw = getpass.getpass('secret: ')\nprint(f'hello {name} {len(pw)}')"
    for k in (plain, guarded):
        asked = []

        def answer(msg, kc=k.kc, asked=asked):
            asked.append((msg["content"]["prompt"], msg["content"]["password"]))
            kc.input("Ada" if not msg["content"]["password"] else "s3cr3t!")

        r = k.run(code, allow_stdin=True, stdin_hook=answer)
        assert r.status == "ok", r.reply["content"]
        assert asked == [("your name: ", False), ("secret: ", True)]
        assert "hello Ada 7\n" in r.stdout


def test_complete(plain, guarded):
    setup = "import collections\nmsg_complete_target = 1"
    both(plain, guarded, setup)
    for code in ("collections.Ord", "msg_complete_t"):
        p = request(plain.kc, "shell", "complete_request", {"code": code, "cursor_pos": len(code)})
        g = request(guarded.kc, "shell", "complete_request", {"code": code, "cursor_pos": len(code)})
        assert g["content"] == p["content"]
        assert g["content"]["status"] == "ok"
        assert g["content"]["cursor_end"] == len(code)
    assert "msg_complete_target" in g["content"]["matches"]


def test_inspect(plain, guarded):
    content = {"code": "len", "cursor_pos": 3, "detail_level": 0}
    p = request(plain.kc, "shell", "inspect_request", content)
    g = request(guarded.kc, "shell", "inspect_request", content)
    assert g["content"] == p["content"]
    assert g["content"]["found"] is True
    assert "Return the number of items" in g["content"]["data"]["text/plain"]


@pytest.mark.parametrize("code, status, indent", [
    ("msg_x = 1", "complete", None),
    ("for i in range(3):", "incomplete", "    "),
    ("msg_y = (1,", "incomplete", ""),
    ("msg_z = 1)", "invalid", None),
])
def test_is_complete(plain, guarded, code, status, indent):
    p = request(plain.kc, "shell", "is_complete_request", {"code": code})
    g = request(guarded.kc, "shell", "is_complete_request", {"code": code})
    assert g["content"] == p["content"]
    assert g["content"]["status"] == status
    if indent is not None:
        assert g["content"]["indent"] == indent


def test_history(plain, guarded):
    # The two kernels share one history database (one IPYTHONDIR), and a
    # tail reads the newest session in it, whichever kernel wrote it: each
    # checks its own request's answer, on the guarded kernel's own input.
    marker = "msg_history_marker = 'guarded, only in this test'"
    guarded.ok(marker)
    content = {"hist_access_type": "tail", "n": 3, "output": False, "raw": True}
    p = request(plain.kc, "shell", "history_request", content)
    g = request(guarded.kc, "shell", "history_request", content)
    assert g["content"].keys() == p["content"].keys()
    assert g["content"]["status"] == "ok"
    history = g["content"]["history"]
    assert 1 <= len(history) <= 3
    assert all(isinstance(s, int) and isinstance(n, int) and isinstance(code, str) for s, n, code in history)
    assert history[-1][2] == marker
    search = {"hist_access_type": "search", "pattern": "msg_history_marker*", "output": False, "raw": True,
              "unique": True}
    g = request(guarded.kc, "shell", "history_request", search)
    assert marker in [e[2] for e in g["content"]["history"]]


# A comm opened by the kernel that sends binary buffers; whatever the
# frontend sends back is answered with the sha256 of each buffer received.
COMM_CODE = """
import hashlib
from comm import create_comm
msg_payloads = [bytes(range(256)) * 4096, b"", b"\\x00\\xff" * 3, bytes(1 << 20)]
msg_comm = create_comm(target_name="jg.test", data={"hello": "open"}, buffers=[b"opening"])
def _on_msg(msg):
    got = msg["buffers"]
    msg_comm.send({"sha256": [hashlib.sha256(bytes(b)).hexdigest() for b in got], "n": len(got)})
msg_comm.on_msg(_on_msg)
msg_comm.send({"hello": "data"}, buffers=msg_payloads)
print(msg_comm.comm_id)
"""
PAYLOADS = [bytes(range(256)) * 4096, b"", b"\x00\xff" * 3, bytes(1 << 20)]


def test_comm_with_binary_buffers(plain, guarded):
    for k in (plain, guarded):
        r = k.ok(COMM_CODE)
        comm_id = r.stdout.strip()
        (opened,) = r.of_type("comm_open")
        assert opened["content"]["comm_id"] == comm_id
        assert opened["content"]["target_name"] == "jg.test"
        assert [bytes(b) for b in opened["buffers"]] == [b"opening"]
        (sent,) = r.of_type("comm_msg")
        assert sent["content"]["data"] == {"hello": "data"}
        assert [bytes(b) for b in sent["buffers"]] == PAYLOADS

        # And back: buffers from the frontend reach the kernel unchanged,
        # 20 MB ones too (a file uploaded through a widget).
        to_kernel = [b"\x01\x02\x03", bytes(range(256)) * 1000, b"", bytes(range(251)) * (20 << 12)]  # 20.5 MB
        msg = k.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {}})
        msg["buffers"] = to_kernel
        k.kc.shell_channel.send(msg)
        answer = wait_for_comm_msg(k, comm_id)
        assert answer["content"]["data"] == {
            "sha256": [hashlib.sha256(b).hexdigest() for b in to_kernel], "n": len(to_kernel)}

        info = request(k.kc, "shell", "comm_info_request", {"target_name": "jg.test"})
        assert info["content"]["status"] == "ok"
        assert info["content"]["comms"] == {comm_id: {"target_name": "jg.test"}}


def wait_for_comm_msg(k, comm_id: str) -> dict:
    while True:
        m = k.kc.get_iopub_msg(timeout=EXEC_TIMEOUT)
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id:
            return m


def test_comm_info_lists_the_same(plain, guarded):
    p = request(plain.kc, "shell", "comm_info_request", {})
    g = request(guarded.kc, "shell", "comm_info_request", {})
    assert g["content"]["status"] == "ok"
    assert sorted(v["target_name"] for v in g["content"]["comms"].values()) == \
        sorted(v["target_name"] for v in p["content"]["comms"].values())


def test_20_mb_output_arrives_whole(guarded):
    r = guarded.ok("print('x' * 20_000_000)", timeout=120)
    out = r.stdout
    assert len(out) == 20_000_001
    assert out.count("x") == 20_000_000 and out.endswith("\n")


def test_extra_header_fields_and_metadata_reach_the_kernel(guarded, kenv):
    """Frontends put fields in the header the spec does not know yet (5.5's
    subshell_id); the proxy forwards the bytes, it does not rebuild them."""
    getter = "get_parent()" if kenv.major >= 7 else "get_parent('shell')"
    code = ("import json\nk = get_ipython().kernel\n"
            f"p = k.{getter}\n"
            "print(json.dumps([p['header'].get('x_guard_probe'), p['metadata'].get('x_meta')]))")
    msg = guarded.kc.session.msg("execute_request", {"code": code, "silent": False, "store_history": False,
                                                     "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
    msg["header"]["x_guard_probe"] = "probe ✓ 1"
    msg["metadata"]["x_meta"] = "meta ✓"
    guarded.kc.shell_channel.send(msg)
    reply = guarded.kc.get_shell_msg(timeout=EXEC_TIMEOUT)
    check_parentage(reply, msg["header"])
    assert reply["content"]["status"] == "ok", reply["content"]
    assert reply["parent_header"]["x_guard_probe"] == "probe ✓ 1"
    out = ""
    while True:
        m = guarded.kc.get_iopub_msg(timeout=EXEC_TIMEOUT)
        if m["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        if m["msg_type"] == "stream":
            out += m["content"]["text"]
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            break
    assert json.loads(out) == ["probe ✓ 1", "meta ✓"]


def test_subshells(plain, guarded, kenv):
    """ipykernel 7's subshells (JEP 91): created on control, addressed by a
    header field on shell, and running while the main shell is busy."""
    if kenv.major < 7:
        info = request(guarded.kc, "shell", "kernel_info_request", {})
        assert "kernel subshells" not in info["content"].get("supported_features", [])
        pytest.skip("ipykernel 6 has no subshells")
    for k in (plain, guarded):
        info = request(k.kc, "shell", "kernel_info_request", {})
        assert "kernel subshells" in info["content"]["supported_features"]
        created = request(k.kc, "control", "create_subshell_request", {})
        sid = created["content"]["subshell_id"]
        listed = request(k.kc, "control", "list_subshell_request", {})
        assert sid in listed["content"]["subshell_id"]

        k.ok("import threading\nmsg_gate = threading.Event()")
        # The main shell blocks until the subshell opens the gate: if the
        # proxy serialised shell messages, this would never finish.
        main = k.kc.execute("msg_gate.wait(60); print('main released', msg_gate.is_set())")
        sub = k.kc.session.msg("execute_request", {"code": "msg_gate.set(); print('from the subshell')",
                                                   "silent": False, "store_history": False, "user_expressions": {},
                                                   "allow_stdin": False, "stop_on_error": True})
        sub["header"]["subshell_id"] = sid
        k.kc.shell_channel.send(sub)
        replies = {}
        while len(replies) < 2:
            m = k.kc.get_shell_msg(timeout=EXEC_TIMEOUT)
            replies[m["parent_header"]["msg_id"]] = m
        assert replies[main]["content"]["status"] == "ok"
        assert replies[sub["header"]["msg_id"]]["content"]["status"] == "ok"
        assert replies[sub["header"]["msg_id"]]["parent_header"]["subshell_id"] == sid
        # A thread's print may reach iopub in pieces ("from the subshell",
        # then "\n"), plain and guarded alike: read until both lines are whole.
        outs = {}
        while len(outs) < 2 or not all(t.endswith("\n") for t in outs.values()):
            m = k.kc.get_iopub_msg(timeout=EXEC_TIMEOUT)
            if m["msg_type"] == "stream":
                msg_id = m["parent_header"]["msg_id"]
                outs[msg_id] = outs.get(msg_id, "") + m["content"]["text"]
        assert outs == {main: "main released True\n", sub["header"]["msg_id"]: "from the subshell\n"}

        deleted = request(k.kc, "control", "delete_subshell_request", {"subshell_id": sid})
        assert deleted["content"]["status"] == "ok"
        k.ok("pass")  # leave iopub drained for the next test


def test_kernel_works_after_all_of_the_above(guarded):
    """The shared guarded kernel is still the same process and healthy."""
    assert guarded.proc.running()
    assert guarded.ok("1 + 1").of_type("execute_result")[0]["content"]["data"]["text/plain"] == "2"


# What the proxy adds to its child's environment on purpose and leaves
# there: the parent pid ipykernel watches (the proxy's). Python's
# faulthandler and the private sitecustomize dir that sends faulthandler's
# report to the proxy are taken back out by that sitecustomize.
# JPY_PARENT_PID names the proxy; JUPYTER_GUARD_TREE marks the kernel's
# processes for the keeper that ends them with the proxy; the TF_CPU_ pair
# holds TensorFlow's allocator under the budget (it cannot live under the
# ceiling).
PROXY_ENV = {"JPY_PARENT_PID", "JUPYTER_GUARD_TREE", "TF_CPU_ALLOCATOR_USE_BFC", "TF_CPU_BFC_MEM_LIMIT_IN_MB"}


def test_kernel_sees_the_same_environment(plain, guarded):
    """Code in the cell sees the same process environment, path and working
    directory through the proxy, apart from the proxy's deliberate additions."""
    code = ("import json, os, sys\n"
            "print(json.dumps({'env': dict(os.environ), 'path': sys.path, 'cwd': os.getcwd(),"
            " 'argv0': sys.argv[0], 'pgid_is_pid': os.getpgid(0) == os.getpid()}))")
    p = json.loads(plain.ok(code).stdout)
    g = json.loads(guarded.ok(code).stdout)
    assert g["cwd"] == p["cwd"]
    assert g["argv0"] == p["argv0"]
    # Both lead their own process group, so an interrupt reaches only them.
    assert g["pgid_is_pid"] and p["pgid_is_pid"]
    assert {k: v for k, v in g["env"].items() if k not in PROXY_ENV} == \
        {k: v for k, v in p["env"].items() if k not in PROXY_ENV}
    assert g["env"]["JPY_PARENT_PID"] == str(guarded.proc.pid)
    assert g["env"]["TF_CPU_ALLOCATOR_USE_BFC"] == "true" and int(g["env"]["TF_CPU_BFC_MEM_LIMIT_IN_MB"]) > 0, g["env"]
    # The hook is in the proxy's private directory (jg-…/py).
    hook_dirs = [d for d in g["path"] if os.path.basename(os.path.dirname(d)).startswith("jg-")]
    assert len(hook_dirs) == 1, g["path"]
    assert [d for d in g["path"] if d not in hook_dirs] == p["path"]
    # A subprocess the notebook starts loads no hook of the proxy's.
    sub = ("import subprocess, sys\n"
           "print(subprocess.run([sys.executable, '-c', 'import os, sys; "
           "print(os.environ.get(\"PYTHONPATH\"), os.environ.get(\"PYTHONFAULTHANDLER\"), "
           "any(\"/jg-\" in p for p in sys.path))'], capture_output=True, text=True).stdout, end='')")
    assert guarded.ok(sub).stdout == plain.ok(sub).stdout == "None None False\n"


def test_two_clients_on_one_kernel(guarded):
    """Two frontends on one kernel (a notebook and a console): each gets its
    own replies and its own input() prompts; iopub reaches both."""
    other = BlockingKernelClient()
    other.load_connection_info(guarded.km.get_connection_info())
    other.start_channels(hb=False)
    try:
        other.wait_for_ready(timeout=EXEC_TIMEOUT)
        drain_iopub(guarded.kc)
        prompts = []

        def answer(msg):
            prompts.append(msg["content"]["prompt"])
            other.input("from the second client")

        reply = other.execute_interactive("print('second:', input('second? '))", allow_stdin=True,
                                          stdin_hook=answer, timeout=EXEC_TIMEOUT)
        assert reply["content"]["status"] == "ok"
        assert prompts == ["second? "]
        # The first client saw the second one's cell on iopub, but no
        # input_request and no reply of the second's.
        theirs = collect_iopub(guarded.kc, reply["parent_header"]["msg_id"])
        assert "second: from the second client\n" in [m["content"].get("text") for m in theirs]
        with pytest.raises(queue.Empty):
            guarded.kc.get_stdin_msg(timeout=0.5)
        with pytest.raises(queue.Empty):
            guarded.kc.get_shell_msg(timeout=0.5)
        assert guarded.ok("print('first')").stdout == "first\n"
    finally:
        other.stop_channels()


# A failing cell that raises only once the kernel holds the two cells sent
# after it. Awaiting lets the kernel's event loop take them in while this
# cell runs; they then wait for the cell's turn, where ipykernel 6 keeps
# them in msg_queue and ipykernel 7 in the waiters of its main shell lock.
FAIL_WHEN_TWO_QUEUED = """import asyncio
_k = get_ipython().kernel
def _queued():
    if hasattr(_k, "_main_asyncio_lock"):
        return len(_k._main_asyncio_lock._waiters or ())
    return _k.msg_queue.qsize()
print('armed', flush=True)
while _queued() < 2:
    await asyncio.sleep(0.005)
raise RuntimeError('first fails')
"""


def test_stop_on_error_aborts_the_queued_cells(plain, guarded):
    """A failing cell aborts the cells queued behind it, with the same
    replies through the proxy."""
    for k in (plain, guarded):
        first = k.kc.execute(FAIL_WHEN_TWO_QUEUED)
        seen = read_until_stream(k.kc, first, "armed")
        queued = [k.kc.execute(f"print('queued {i}')") for i in (1, 2)]
        runs = collect_all(k.kc, {first: seen, queued[0]: [], queued[1]: []})
        statuses = [runs[i].status for i in (first, *queued)]
        assert statuses == ["error", "aborted", "aborted"], [runs[i].reply["content"] for i in (first, *queued)]
        assert [runs[i].stdout for i in queued] == ["", ""]
    assert k.ok("print('after the abort')").stdout == "after the abort\n"


def test_heartbeat_echoes_bytes(guarded):
    """hb echoes whatever it is sent, byte for byte, to each client (the
    proxy answers it itself), encrypted with any client key: each of
    jupyter_client's heartbeats makes up a key pair of its own."""
    assert guarded.kc.hb_channel.is_beating()
    ctx = zmq.Context()
    try:
        socks = []
        info = guarded.km.get_connection_info()
        for payload in (b"ping", b"\x00\xff binary \x00", b"x" * 100_000):
            s = raw_socket(ctx, zmq.REQ, info, "hb_port", curve="curve_publickey" in info)
            s.send(payload)
            socks.append((s, payload))
        for s, payload in socks:
            assert s.poll(EXEC_TIMEOUT * 1000), "no heartbeat echo"
            assert s.recv() == payload
    finally:
        ctx.destroy(linger=0)
