"""Helpers shared by the integration tests: running code on a kernel and
collecting what comes back, finding processes in /proc, and writing raw
Jupyter wire messages. Fixtures live in conftest.py; this module holds the
plain functions and classes they and the tests use."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import queue
import shutil
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import zmq
from jupyter_client import BlockingKernelClient

import memcg

# Generous limits for waiting. Nothing in the suite asserts that anything is
# fast; these only keep a hang from stalling the run.
EXEC_TIMEOUT = 60
START_TIMEOUT = 60


def proxy_argv(argv: list[str]) -> list[str]:
    """The `guardctl kernel …` command line in a guarded spec's argv, which
    starts it through /bin/sh (so that a spec left behind by `pip uninstall`
    fails with one line that names the fix)."""
    assert argv[:2] == ["/bin/sh", "-c"] and argv[4] == "kernel", argv
    return argv[3:]


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05):
    """Polls predicate until it returns something truthy and returns that;
    fails the test with `what` when timeout seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# -------------------------------------------------------------- environment


@contextmanager
def headless(**settings):
    """As as_jupyter_starts_it, for a kernel that nbclient, nbconvert or
    papermill starts: without JPY_SESSION_NAME, which jupyter_server sets
    for a notebook's kernel, so the guard knows nobody can answer a pause."""
    with as_jupyter_starts_it(**settings), pytest.MonkeyPatch.context() as mp:
        mp.delenv("JPY_SESSION_NAME", raising=False)
        yield


@contextmanager
def as_jupyter_starts_it(**settings):
    """The environment a kernel gets from Jupyter rather than from pytest,
    plus the guard's settings. pytest's PYTEST_CURRENT_TEST makes ipykernel
    leave fds 1 and 2 alone (OutStream's watchfd); in users' kernels they are
    pipes read by a thread inside the kernel, which dies with it. What a
    crash leaves behind must reach the proxy in that setting."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PYTEST_CURRENT_TEST", raising=False)
        for name, value in settings.items():
            mp.setenv(name, str(value))
        yield


# ---------------------------------------------------------- Jupyter servers

SERVER_TOKEN = "jupyter-guard-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, url: str, proc: subprocess.Popen, log: Path):
        self.url, self.proc, self.log = url, proc, log

    @contextmanager
    def kernel_client(self, kernel_id: str, timeout: float = START_TIMEOUT) -> Iterator[BlockingKernelClient]:
        """A client on the ports of the server's kernel, from its connection
        file in the runtime dir, once the kernel answers."""
        kc = BlockingKernelClient(connection_file=str(Path(os.environ["JUPYTER_RUNTIME_DIR"]) / f"kernel-{kernel_id}.json"))
        kc.load_connection_file()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=timeout)
            yield kc
        finally:
            kc.stop_channels()

    def call(self, method: str, path: str, body: dict | None = None, token: str | None = SERVER_TOKEN):
        """(status, parsed JSON or text) of a request."""
        req = urllib.request.Request(self.url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
        if token:
            req.add_header("Authorization", f"token {token}")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode()


@contextmanager
def jupyter_server(command: list, root: Path, env: dict[str, str], log: Path) -> Iterator[Server]:
    """Runs command (`jupyter server`, or `python -m jupyter_server`) on a
    free port of 127.0.0.1 with SERVER_TOKEN, serving root and writing its
    output to log; yields it once it answers, and stops it after."""
    port = free_port()
    args = [*map(str, command), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={SERVER_TOKEN}", f"--ServerApp.root_dir={root}"]
    if os.getuid() == 0:
        args.append("--allow-root")
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    srv = Server(f"http://127.0.0.1:{port}", proc, log)

    def up():
        assert proc.poll() is None, log.read_text()
        try:
            return srv.call("GET", "/api/status")[0] == 200
        except OSError:
            return False

    try:
        wait_until(up, 60, "jupyter server to answer")
        yield srv
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ------------------------------------------------------------------ notices

WARNING = "jupyter-guard: memory warning."
PAUSED = "jupyter-guard paused the kernel before it ran out of memory."
INTERRUPTED = "jupyter-guard interrupted this cell to save the kernel from running out of memory."
# The second stop of a cell the first interrupt did not stop.
UNSTOPPED = "jupyter-guard paused the kernel again: the interrupt did not stop the cell"
INTERRUPTED_AGAIN = "jupyter-guard interrupted this cell again: the last interrupt did not stop it"
# The pause notice when the fill in flight cannot finish within the budget.
UNSAVED = "lets that fill finish first: the OOM killer would kill the kernel"
# How the notes under a cell the allocation ceiling stopped begin.
REFUSED = "jupyter-guard: the kernel's memory ceiling refused an allocation"
NEAR = "jupyter-guard stopped this cell with MemoryError"
# ceiling.NearSignal: the signal on which the guard's Python hook raises
# MemoryError in a cell heading for its line.
NEAR_SIGNAL = 62
# An action line moved down to leave room for the fills a cell makes.
LOWERED = ", lowered for the "


def stderr_of(cell) -> str:
    """What a notebook cell printed on stderr, where the guard's notices go."""
    return "".join(o["text"] for o in cell.outputs if o.get("name") == "stderr")


def check_grow_demo(nb) -> None:
    """testdata/demo/grow.ipynb as run under a 1 GiB budget on the kernel's
    tree: every cell ran and printed what it kept, and the 700 MiB cell
    ([3]), no other, was warned, not paused."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == [1, 2, 3, 4]
    stderr = {c.execution_count: stderr_of(c) for c in code}
    warned = [n for n, text in stderr.items() if WARNING in text]
    assert warned == [3], stderr
    assert stderr[3].lstrip().startswith(WARNING) and "of its 1 GiB budget" in stderr[3], stderr[3]
    assert PAUSED not in stderr[3], stderr[3]
    printed = ["".join(o["text"] for o in c.outputs if o.get("name") == "stdout") for c in code]
    assert printed == ["", "100 MiB kept\n", "800 MiB kept\n", "0 MiB kept\n"], printed


# ---------------------------------------------------------------- executing


@dataclass
class Run:
    """One execute_request's reply and the iopub messages it caused, in order."""

    reply: dict
    iopub: list[dict] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["content"]["status"]

    def of_type(self, *msg_types: str) -> list[dict]:
        return [m for m in self.iopub if m["msg_type"] in msg_types]

    def stream(self, name: str) -> str:
        return "".join(m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == name)

    @property
    def stdout(self) -> str:
        return self.stream("stdout")

    @property
    def stderr(self) -> str:
        return self.stream("stderr")

    @property
    def error(self) -> dict | None:
        errors = self.of_type("error")
        assert len(errors) <= 1, f"more than one error output: {errors}"
        return errors[0]["content"] if errors else None

    def states(self) -> list[str]:
        return [m["content"]["execution_state"] for m in self.of_type("status")]

    def normalized(self) -> list[tuple[str, Any]]:
        """The iopub transcript as (msg_type, content), comparable between two
        kernels: execution counts differ with history, and ipykernel may cut
        one print into several stream messages depending on timing, so
        consecutive stream messages of the same name are joined."""
        out: list[tuple[str, Any]] = []
        for m in self.iopub:
            content = _drop_counts(m["content"])
            if m["msg_type"] == "stream" and out and out[-1][0] == "stream" and out[-1][1]["name"] == content["name"]:
                out[-1][1]["text"] += content["text"]
                continue
            out.append((m["msg_type"], content))
        return out


def _drop_counts(content: dict) -> dict:
    return {k: v for k, v in content.items() if k != "execution_count"}


def execute(kc, code: str, timeout: float = EXEC_TIMEOUT, **kwargs) -> Run:
    """Runs code the way a frontend does (execute_request on shell, outputs
    on iopub until idle) and returns everything that came back."""
    msgs: list[dict] = []
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=msgs.append, **kwargs)
    return Run(reply=reply, iopub=msgs)


def collect(kc, msg_id: str, timeout: float = EXEC_TIMEOUT, iopub: list[dict] | None = None,
            alive: Callable[[], bool] | None = None) -> Run:
    """Finishes collecting a request sent with kc.execute(): its iopub
    messages until idle (appended to those already read), then its reply.
    Messages of other requests are skipped. With alive, a dead kernel
    process fails the wait at once instead of at the timeout."""
    return collect_all(kc, {msg_id: iopub or []}, timeout, alive)[msg_id]


def collect_all(kc, requests: dict[str, list[dict]], timeout: float = EXEC_TIMEOUT,
                alive: Callable[[], bool] | None = None) -> dict[str, Run]:
    """collect() for several requests at once (msg_id → iopub messages read
    so far), for cells that run concurrently or queue behind each other:
    collecting them one after the other would skip the others' messages."""
    deadline = time.monotonic() + timeout

    def get(channel):
        while True:
            try:
                return getattr(kc, f"get_{channel}_msg")(timeout=0.5 if alive else timeout)
            except queue.Empty:
                if alive is not None and not alive():
                    raise AssertionError(f"the kernel process died while waiting on {channel}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no {channel} message for requests {sorted(requests)} in {timeout}s") from None

    iopub = {msg_id: list(seen) for msg_id, seen in requests.items()}
    waiting = set(requests)
    while waiting:
        m = get("iopub")
        msg_id = m["parent_header"].get("msg_id")
        if msg_id not in iopub:
            continue
        iopub[msg_id].append(m)
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            waiting.discard(msg_id)
    replies: dict[str, dict] = {}
    while len(replies) < len(requests):
        reply = get("shell")
        if reply["parent_header"].get("msg_id") in requests:
            replies[reply["parent_header"]["msg_id"]] = reply
    return {msg_id: Run(reply=replies[msg_id], iopub=iopub[msg_id]) for msg_id in requests}


def collect_iopub(kc, msg_id: str, timeout: float = EXEC_TIMEOUT) -> list[dict]:
    """The iopub messages of request msg_id (sent by any client), up to its idle."""
    out = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(m)
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return out


def read_until_stream(kc, msg_id: str, text: str, timeout: float = EXEC_TIMEOUT) -> list[dict]:
    """Reads iopub until the request msg_id has printed text; returns the
    request's messages read so far, for collect() to continue."""
    seen = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(m)
        if m["msg_type"] == "stream" and text in m["content"]["text"]:
            return seen


def check_parentage(reply: dict, request_header: dict) -> None:
    """A reply must name the request it answers, field for field."""
    assert reply["parent_header"]["msg_id"] == request_header["msg_id"]
    assert reply["parent_header"]["session"] == request_header["session"]
    assert reply["parent_header"]["msg_type"] == request_header["msg_type"]


def request(kc, channel: str, msg_type: str, content: dict, timeout: float = EXEC_TIMEOUT,
            header: dict | None = None) -> dict:
    """Sends one request on shell or control and returns its reply (the one
    whose parent is this request; any other reply is a failure)."""
    msg = kc.session.msg(msg_type, content)
    if header:
        msg["header"].update(header)
    getattr(kc, f"{channel}_channel").send(msg)
    reply = getattr(kc, f"get_{channel}_msg")(timeout=timeout)
    check_parentage(reply, msg["header"])
    assert reply["msg_type"] == msg_type.replace("_request", "_reply")
    return reply


def drain_iopub(kc, quiet: float = 0.3) -> list[dict]:
    """Reads iopub until it has been silent for `quiet` seconds."""
    out = []
    while True:
        try:
            out.append(kc.get_iopub_msg(timeout=quiet))
        except Exception:  # queue.Empty; jupyter_client re-raises it as is
            return out


# -------------------------------------------------------------- processes


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of pid, or None when there is no such process."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name may contain spaces and parentheses: split after the last ')'.
    fields = raw[raw.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[19])


@dataclass(frozen=True)
class Proc:
    """A process pinned by its start time, so a recycled pid is not mistaken
    for it."""

    pid: int
    start: int

    @classmethod
    def of(cls, pid: int) -> "Proc":
        st = proc_stat(pid)
        assert st is not None, f"process {pid} does not exist"
        return cls(pid, st[2])

    def running(self) -> bool:
        # A zombie has exited; it only waits for its parent (or init, which
        # in a container may never reap it) to collect the status.
        st = proc_stat(self.pid)
        return st is not None and st[0] != "Z" and st[2] == self.start


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def all_pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def processes_mentioning(text: str) -> list[int]:
    """Live (non-zombie) processes with text anywhere in their command line.
    The kernel id is in the proxy's argv (Jupyter's connection file) and in
    the child's (the proxy's private guard-child-<id>.json)."""
    out = []
    for pid in all_pids():
        if pid == os.getpid():
            continue
        if any(text in a for a in cmdline(pid)):
            st = proc_stat(pid)
            if st is not None and st[0] != "Z":
                out.append(pid)
    return out


def children_of(pid: int) -> list[int]:
    out = []
    for p in all_pids():
        st = proc_stat(p)
        if st is not None and st[1] == pid and st[0] != "Z":
            out.append(p)
    return out


def tree(pid: int) -> list[int]:
    """pid and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children_of(p)
    return out


def vm_rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except FileNotFoundError:
        pass
    return 0


def tree_rss(pid: int) -> int:
    """What /proc says the kernel's process tree holds: the sum of VmRSS."""
    return sum(vm_rss(p) for p in tree(pid))


def near(value: float, expected: float, share: float = 0.10) -> bool:
    return abs(value - expected) <= share * expected


# ------------------------------------------------------------ raw messages


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat()


def header(msg_type: str, session: str, **extra) -> dict:
    return {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "session": session, "username": "guard-test",
            "date": now_iso(), "version": "5.3", **extra}


def sign(key: bytes, *parts: bytes) -> bytes:
    mac = hmac.new(key, digestmod=hashlib.sha256)
    for p in parts:
        mac.update(p)
    return mac.hexdigest().encode()


def signed_frames(key: bytes, msg_type: str, content: dict | bytes, session: str,
                  buffers: list[bytes] = (), **header_extra) -> list[bytes]:
    """A well-formed signed message as DEALER frames: delimiter, signature,
    the four JSON frames, buffers. content may be raw bytes (for bad JSON)."""
    h = json.dumps(header(msg_type, session, **header_extra)).encode()
    p, md = b"{}", b"{}"
    c = content if isinstance(content, bytes) else json.dumps(content).encode()
    return [b"<IDS|MSG>", sign(key, h, p, md, c), h, p, md, c, *buffers]


# ------------------------------------------------------------- encryption


def transport_encryption(policy: str):
    """For Kernels.start(configure=...): start the kernel as Jupyter does
    with KernelManager.transport_encryption = policy (jupyter_client 8.9+).
    Under "required", and under "auto" for a kernelspec that offers CURVE,
    the connection file has Curve keys and every client socket is a
    CurveZMQ client of them."""
    def configure(km):
        km.transport_encryption = policy

    return configure


def endpoint(info: dict, port: str) -> str:
    """The address of one of a kernel's ports, from its connection info."""
    if info["transport"] == "ipc":
        return f"ipc://{info['ip']}-{info[port]}"
    return f"tcp://{info['ip']}:{info[port]}"


def raw_socket(ctx, kind: int, info: dict, port: str, curve: bool):
    """A pyzmq socket of kind connected to one of a kernel's ports: in
    clear, or as a CurveZMQ client of the kernel's public key with a key
    pair of its own, as jupyter_client's heartbeat makes one up."""
    s = ctx.socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    if curve:
        s.curve_publickey, s.curve_secretkey = zmq.curve_keypair()
        s.curve_serverkey = info["curve_publickey"].encode()
    s.connect(endpoint(info, port))
    return s


def read_all(s) -> bytes:
    """What a socket's peer sends until it hangs up (a reset too: it may
    close with bytes of ours unread)."""
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out


# A ZMTP 3.0 greeting of the NULL mechanism, in clear.
ZMTP_GREETING = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31


def zmtp_ready(socket_type: bytes) -> bytes:
    """A NULL-mechanism READY command announcing socket_type."""
    name = b"Socket-Type"
    body = b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", len(socket_type)) + socket_type
    return b"\x04" + bytes([len(body)]) + body


def missing(reason: str):
    """Stops a test that cannot run for want of something its environment
    should give it: a skip, except under `make test`
    (JUPYTER_GUARD_TEST_STRICT=1), which provides it, so a skip there would
    hide a test CI stopped running."""
    if os.environ.get("JUPYTER_GUARD_TEST_STRICT") == "1":
        pytest.fail(f"missing from the test environment (make test provides it): {reason}")
    pytest.skip(reason)


def promtool() -> str:
    """Prometheus's checker of the text format."""
    path = shutil.which("promtool")
    if path is None:
        missing("promtool: Debian's prometheus (.ci/run installs it)")
    return path


# ------------------------------------------------------------ memory cgroups


class MemoryCgroup(memcg.MemoryCgroup):
    """memcg.MemoryCgroup for tests: where there is none to be had, the
    test is missing it."""

    @classmethod
    def create(cls, limit: int, prefix: str = "guard-test") -> "MemoryCgroup":
        try:
            return super().create(limit, prefix)
        except memcg.Unavailable as e:
            missing(str(e))
