"""`guardctl` sees and steers every guarded kernel, and runs a notebook
under the guard from the shell. Kernels are started as Jupyter starts them
(jupyter_client's KernelManager on the guarded kernelspecs); guardctl is
run as a user runs it, as a separate process that finds them through their
control sockets in Jupyter's runtime dir.

Two guarded kernels, one of each ipykernel, with ids that share a prefix
("c0ffee0"), allocate known amounts and are read and interrupted; a third
one, with a small budget, is paused, resumed and restarted. The checks of
the control socket (owner, mode, stale sockets, garbage) use those kernels
and fake sockets of their own; `guardctl run` starts its own kernels."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import socketserver
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import nbformat
import pytest
from jupyter_core.paths import jupyter_runtime_dir

from conftest import KERNEL_ENVS, REPO, Kernel
from support import (EXEC_TIMEOUT, REFUSED, START_TIMEOUT, WARNING, Proc, as_jupyter_starts_it, check_grow_demo, collect, collect_all,
                     missing, near, read_all, read_until_stream, tree, tree_rss, wait_until)

MiB = 1 << 20
GiB = 1 << 30
DEMO = REPO / "testdata" / "demo"
PREFIX = "c0ffee0"  # both kernels of the pair: ambiguous
K7, K6 = KERNEL_ENVS  # ipykernel 7.4 and 6.29


# ------------------------------------------------------------------ guardctl


class Guardctl:
    """Runs guardctl as a user does: a separate process, the suite's Jupyter
    dirs in its environment (not pytest's own variables)."""

    def __init__(self, path: Path):
        self.path = path

    def env(self, runtime_dir: Path | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        if runtime_dir is not None:
            env["JUPYTER_RUNTIME_DIR"] = str(runtime_dir)
        return env

    def __call__(self, *args: str, runtime_dir: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        r = subprocess.run([str(self.path), *args], capture_output=True, text=True, timeout=timeout,
                           env=self.env(runtime_dir))
        assert "panic:" not in r.stderr and "goroutine " not in r.stderr, f"guardctl {args} crashed:\n{r.stderr}"
        return r

    def ok(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        r = self(*args, **kwargs)
        assert r.returncode == 0, f"guardctl {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
        return r

    def status(self, **kwargs) -> dict[str, dict]:
        """`guardctl status --json`, by kernel id."""
        states = json.loads(self.ok("status", "--json", **kwargs).stdout)
        assert isinstance(states, list), states
        by_id = {s["kernel_id"]: s for s in states}
        assert len(by_id) == len(states), f"a kernel is listed twice: {[s['kernel_id'] for s in states]}"
        return by_id

    def state_of(self, k: Kernel) -> dict:
        states = self.status()
        assert k.kernel_id in states, f"guardctl status does not list {k.kernel_id}: {sorted(states)}"
        return states[k.kernel_id]


@pytest.fixture(scope="module")
def gctl(guardctl) -> Guardctl:
    return Guardctl(guardctl)


def table(text: str) -> list[dict[str, str]]:
    """A table guardctl printed, one dict per row. Columns are at least two
    spaces apart (no value here has two spaces in a row); a value past the
    last header (the mark of `guardctl cells`) is under "", "" if none."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines, f"no table in {text!r}"
    names = re.split(r"\s{2,}", lines[0].strip())
    rows = []
    for line in lines[1:]:
        values = re.split(r"\s{2,}", line.strip())
        assert len(values) in (len(names), len(names) + 1), f"row {line!r} does not fit the header {lines[0]!r}"
        rows.append({**dict(zip(names, values)), "": values[len(names)] if len(values) > len(names) else ""})
    return rows


UNITS = {"B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB, "TiB": 1 << 40}


def size(text: str) -> float:
    """A human size guardctl printed ("252 MiB", "+245 MiB", "-1.2 GiB") in bytes."""
    m = re.fullmatch(r"([+-]?[\d.]+) (B|KiB|MiB|GiB|TiB)", text.strip())
    assert m, f"not a size: {text!r}"
    return float(m[1]) * UNITS[m[2]]


# ----------------------------------------------------------------- /proc


def proc_state(pid: int) -> str:
    raw = Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.rindex(")") + 2:].split()[0]


# --------------------------------------------------------------- the pair


def uuid_starting(head: str) -> str:
    """A Jupyter kernel id (a uuid4) whose first block is head."""
    return head + str(uuid.uuid4())[8:]


def with_id(kid: str):
    """Names the connection file as Jupyter's kernel manager does,
    kernel-<id>.json in the runtime dir: the proxy takes its id from it."""
    def configure(km):
        km.connection_file = os.path.join(jupyter_runtime_dir(), f"kernel-{kid}.json")
    return configure


@dataclass
class Allocated:
    k: Kernel
    kid: str
    short: str  # the id as the table shows it
    mib: int  # what its allocating cell keeps
    pid: Proc  # the kernel process, as the kernel reports it
    notebook: str | None = None


@dataclass
class Pair:
    k7: Allocated
    k6: Allocated
    fresh: dict  # k7's status before it ran any cell
    fresh_rss: int  # and what /proc said then

    def both(self) -> list[Allocated]:
        return [self.k7, self.k6]


SMALL_CELL = "small = 1"


def alloc_cell(mib: int, code: bool = False) -> str:
    """The cell that keeps mib MiB (its first line, as guardctl shows it; the
    whole cell with code). It lingers a moment after the allocation, so that
    its end is measured after the allocation even on a loaded machine: the
    ledger may end a cell with a measurement taken before the cell ended
    (known bug queued-cells, tested on its own below)."""
    first = f"grown = b'x' * ({mib} << 20)"
    return first + "\nimport time; time.sleep(0.3)\n" if code else first


@pytest.fixture(scope="module")
def pair(module_kernels, gctl, tmp_path_factory) -> Pair:
    """Two guarded kernels, ipykernel 7.4 and 6.29, under a 2 GiB budget
    each; the first one opened for a notebook, as Jupyter's server says in
    JPY_SESSION_NAME. Each runs: its pid, a cell that allocates nothing,
    and one that keeps 200 (300) MiB."""
    notebook = str(tmp_path_factory.mktemp("work") / "analysis.ipynb")
    kid7, kid6 = uuid_starting(PREFIX + "7"), uuid_starting(PREFIX + "6")
    with as_jupyter_starts_it(JUPYTER_GUARD_LIMIT="2GiB", JPY_SESSION_NAME=notebook):
        k7 = module_kernels.start(K7.guarded, configure=with_id(kid7))
    fresh = gctl.state_of(k7)
    fresh_rss = tree_rss(fresh["kernel_pid"])
    with as_jupyter_starts_it(JUPYTER_GUARD_LIMIT="2GiB"):
        k6 = module_kernels.start(K6.guarded, configure=with_id(kid6))
    out = []
    for k, kid, mib in [(k7, kid7, 200), (k6, kid6, 300)]:
        assert k.kernel_id == kid
        pid = k.pid()
        k.ok(SMALL_CELL)
        k.ok(alloc_cell(mib, code=True))
        out.append(Allocated(k, kid, kid[:8], mib, pid))
    out[0].notebook = notebook
    return Pair(out[0], out[1], fresh, fresh_rss)


# ----------------------------------------------------------------- status


def test_status_json_matches_the_kernels(pair, gctl):
    """Each kernel's entry: who it is, idle, its memory as /proc has it, and
    the last cell's growth, the allocation it made."""
    states = gctl.status()
    print("--- guardctl status --json\n" + json.dumps([states[a.kid] for a in pair.both()], indent=2))
    for a in pair.both():
        s = states[a.kid]
        assert s["kernelspec"] == a.k.spec
        assert s["proxy_pid"] == a.k.proc.pid
        assert s["kernel_pid"] == a.pid.pid
        assert s["state"] == "idle"
        assert s["deaths"] == 0
        assert s.get("notebook") == a.notebook
        started = datetime.fromisoformat(s["started"])
        assert started <= datetime.now(timezone.utc)

        mem = s["memory"]
        rss = tree_rss(a.pid.pid)
        assert near(mem["tree_rss_bytes"], rss), \
            f"{a.short}: status says {mem['tree_rss_bytes'] / MiB:.1f} MiB, /proc says {rss / MiB:.1f} MiB"
        assert mem["tree_rss_bytes"] > a.mib * MiB
        # JUPYTER_GUARD_LIMIT is measured on the tree: used is that figure,
        # the kernel's own.
        assert mem["used_bytes"] == mem["tree_rss_bytes"] == mem["kernel_bytes"]
        assert mem["kernel_source"] == "tree_rss" and mem["scope"] == "kernel" and mem["budget_from"] == "JUPYTER_GUARD_LIMIT"
        assert mem["budget_bytes"] == 2 * GiB
        assert mem["limit_source"] == "JUPYTER_GUARD_LIMIT"
        assert mem["share"] == pytest.approx(mem["used_bytes"] / mem["budget_bytes"])

        last = s["last_cell"]
        assert last["code"] == alloc_cell(a.mib)
        assert last["execution_count"] == 3
        assert not last.get("running")
        assert near(last["growth_bytes"], a.mib * MiB), \
            f"{a.short}: the cell that kept {a.mib} MiB grew by {last['growth_bytes'] / MiB:.1f} MiB"
        assert last["end_bytes"] == mem["used_bytes"]
        assert last["peak_bytes"] >= last["end_bytes"]


def test_status_table(pair, gctl):
    """`guardctl status`: one row per kernel, in human sizes."""
    out = gctl.ok("status").stdout
    print("--- guardctl status\n" + out)
    rows = table(out)
    assert list(rows[0]) == ["KERNEL", "KERNELSPEC", "NOTEBOOK", "STATE", "MEMORY", "BUDGET FROM", "GPU", "UPTIME",
                             "LAST CELL", "DEATHS", ""]
    for a in pair.both():
        mine = [r for r in rows if r["KERNEL"] == a.short]
        assert len(mine) == 1, f"{a.short}: {len(mine)} rows in\n{out}"
        r = mine[0]
        assert r["KERNELSPEC"] == a.k.spec
        assert r["NOTEBOOK"] == (a.notebook or "-")
        assert r["STATE"] == "idle"
        used, budget, share = re.fullmatch(r"(.+) / (.+) \((\d+)%\)", r["MEMORY"]).groups()
        assert near(size(used), tree_rss(a.pid.pid)), r
        assert size(budget) == 2 * GiB
        assert int(share) == round(size(used) / (2 * GiB) * 100)
        assert r["BUDGET FROM"] == "JUPYTER_GUARD_LIMIT"
        assert r["GPU"] == "-"
        assert re.fullmatch(r"\d+ ms|[\d.]+ s|\d+ min( \d+ s)?|\d+ h( \d+ min)?", r["UPTIME"]), r["UPTIME"]
        count, growth = re.fullmatch(r"\[(\d+)\] (.+)", r["LAST CELL"]).groups()
        assert count == "3" and near(size(growth), a.mib * MiB), r
        assert r["DEATHS"] == "0"


def cells_of(gctl: Guardctl, ref: str) -> tuple[str, list[dict[str, str]]]:
    out = gctl.ok("cells", ref).stdout
    return out, table(out)


def test_cells_marks_the_grower(pair, gctl):
    """`guardctl cells KERNEL`: the ledger, the allocating cell marked as the
    one that grew most; the kernel named by a unique id prefix, by its short
    id as the table shows it, or by its notebook's name."""
    a = pair.k7
    out, rows = cells_of(gctl, a.short)
    print(f"--- guardctl cells {a.short}\n{out}")
    assert list(rows[0])[:7] == ["CELL", "CODE", "TIME", "START", "PEAK", "END", "GROWTH"]
    assert [r["CELL"] for r in rows] == ["[1]", "[2]", "[3]"], out
    assert [r["CODE"] for r in rows] == ["import os; print(os.getpid())", SMALL_CELL, alloc_cell(a.mib)], out
    grower = rows[2]
    assert near(size(grower["GROWTH"]), a.mib * MiB), grower
    assert max(rows, key=lambda r: size(r["GROWTH"])) is grower, out
    assert grower[""] == "<- grew most", out
    assert rows[1][""] == "", f"{SMALL_CELL!r} allocated nothing and is marked:\n{out}"
    assert size(grower["END"]) - size(grower["START"]) == pytest.approx(size(grower["GROWTH"]), rel=0.02, abs=MiB)

    for ref in [a.kid[:len(PREFIX) + 1], a.kid, "analysis.ipynb", a.notebook]:
        again, _ = cells_of(gctl, ref)
        assert again == out, f"guardctl cells {ref} shows another ledger:\n{again}"
    _, rows6 = cells_of(gctl, pair.k6.kid[:len(PREFIX) + 1])
    assert rows6[2]["CODE"] == alloc_cell(pair.k6.mib) and rows6[2][""] == "<- grew most"


def test_cells_json(pair, gctl):
    """`guardctl cells --json KERNEL`: the same ledger as the table, as the
    control API's cells (what the server extension serves the lab panel)."""
    a = pair.k7
    cells = json.loads(gctl.ok("cells", "--json", a.short).stdout)
    assert [c["execution_count"] for c in cells] == [1, 2, 3], cells
    assert [c["code"] for c in cells] == ["import os; print(os.getpid())", SMALL_CELL, alloc_cell(a.mib)], cells
    assert near(cells[2]["growth_bytes"], a.mib * MiB), cells[2]
    assert all(not c.get("running") and c["end"] for c in cells), cells
    _, rows = cells_of(gctl, a.short)
    assert [size(r["PEAK"]) for r in rows] == pytest.approx([c["peak_bytes"] for c in cells], rel=0.02, abs=MiB)


# ------------------------------------------------------- busy, interrupt


class Watch:
    """`guardctl status --watch`, its output read as it comes."""

    def __init__(self, gctl: Guardctl):
        self.p = subprocess.Popen([str(gctl.path), "status", "--watch"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=gctl.env())
        self.out = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while chunk := os.read(self.p.stdout.fileno(), 65536):
            self.out += chunk

    def frames(self) -> list[str]:
        """The screens drawn so far, each after its clear-screen."""
        return [f for f in self.out.decode(errors="replace").split("\033[H\033[2J") if f.strip()]

    def stop(self) -> int:
        self.p.send_signal(signal.SIGINT)
        try:
            return self.p.wait(timeout=30)
        finally:
            self._reader.join(timeout=5)
            self.p.stdout.close()
            self.p.stderr.close()


def row_of(frame: str, short: str) -> dict[str, str] | None:
    """The kernel's row in a --watch screen; None if it is not there (yet:
    the screen may be half read)."""
    try:
        rows = [r for r in table(frame) if r.get("KERNEL") == short]
    except AssertionError:
        return None
    return rows[0] if rows else None


def test_busy_while_a_cell_sleeps_then_interrupt(pair, gctl):
    """A sleeping cell: busy in `status --json` and in the table `--watch`
    redraws; `guardctl interrupt` ends it with KeyboardInterrupt, and the
    kernel, its variables kept, is idle again."""
    a = pair.k6
    watch = Watch(gctl)
    try:
        wait_until(lambda: any(row_of(f, a.short) for f in watch.frames()), 30, "the first --watch screen")
        msg_id = a.k.kc.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(120)\n")
        seen = read_until_stream(a.k.kc, msg_id, "sleeping")
        s = wait_until(lambda: (st := gctl.state_of(a.k))["state"] == "busy" and st, 30, "state busy")
        assert s["last_cell"]["running"] is True
        assert s["last_cell"]["code"] == "import time"
        assert "end" not in s["last_cell"]
        frame = wait_until(lambda: [f for f in watch.frames() if (r := row_of(f, a.short)) and r["STATE"] == "busy"],
                           30, "--watch to redraw with the kernel busy")[-1]
        print("--- guardctl status --watch, a cell sleeping\n" + frame)

        r = gctl.ok("interrupt", a.short)
        assert re.fullmatch(rf"kernel {a.short}: (busy|idle)\n", r.stdout), r.stdout
        run = collect(a.k.kc, msg_id, iopub=seen, timeout=EXEC_TIMEOUT)
        assert run.status == "error" and run.reply["content"]["ename"] == "KeyboardInterrupt", run.reply["content"]
        assert run.error is not None and run.error["ename"] == "KeyboardInterrupt"
    finally:
        code = watch.stop()
    assert code == 0, watch.p.stderr
    wait_until(lambda: gctl.state_of(a.k)["state"] == "idle", 30, "state idle after the interrupt")
    assert a.k.ok("print(len(grown) >> 20)").stdout == f"{a.mib}\n"
    assert gctl.state_of(a.k)["kernel_pid"] == a.pid.pid and a.pid.running()


# ------------------------------------------------------------ matching


def test_a_prefix_of_two_kernels_names_both(pair, gctl):
    """"c0ffee0" matches both kernels: each command fails naming both, and
    nothing is done to either."""
    for cmd in ["cells", "interrupt", "restart", "resume"]:
        r = gctl(cmd, PREFIX)
        assert r.returncode != 0, f"guardctl {cmd} {PREFIX}: {r.stdout}"
        assert pair.k7.short in r.stderr and pair.k6.short in r.stderr, r.stderr
        assert r.stdout == "", r.stdout
    print(f"--- guardctl cells {PREFIX}\n{gctl('cells', PREFIX).stderr}")
    for a in pair.both():
        s = gctl.state_of(a.k)
        assert s["kernel_pid"] == a.pid.pid and s["state"] == "idle"


def test_no_match_fails(pair, gctl):
    for cmd in ["cells", "interrupt", "restart", "resume"]:
        r = gctl(cmd, "no-such-kernel")
        assert r.returncode != 0
        assert 'no guarded kernel matches "no-such-kernel"' in r.stderr, r.stderr
    r = gctl("cells")
    assert r.returncode != 0 and "usage" in r.stderr.lower(), r.stderr


def test_resume_a_kernel_that_is_not_paused(pair, gctl):
    r = gctl("resume", pair.k7.short)
    assert r.returncode != 0
    assert "not paused" in r.stderr and pair.k7.short in r.stderr, r.stderr


def test_no_guarded_kernel_running(gctl, tmp_path):
    """An empty runtime dir, or none at all (a machine where Jupyter never
    ran): status says so and succeeds."""
    empty = tmp_path / "runtime"
    empty.mkdir()
    for runtime in [empty, tmp_path / "missing"]:
        r = gctl.ok("status", runtime_dir=runtime)
        assert r.stdout == "No guarded kernel is running.\n" and r.stderr == "", (r.stdout, r.stderr)
        assert json.loads(gctl.ok("status", "--json", runtime_dir=runtime).stdout) == []
        r = gctl("cells", "c0ffee", runtime_dir=runtime)
        assert r.returncode != 0 and "no guarded kernel matches" in r.stderr, r.stderr


# ------------------------------------------------------ the control socket


class FakeProxy:
    """A control socket that answers like a proxy (a kernel "fake" in its
    state) and counts the connections it got."""

    def __init__(self, path: Path):
        self.path = path
        self.connections = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def setup(self):
                fake.connections += 1
                super().setup()

            def do_GET(self):
                body = json.dumps({"kernel_id": path.stem.removeprefix("guard-"), "kernelspec": "fake",
                                   "proxy_pid": os.getpid(), "state": "idle",
                                   "started": datetime.now(timezone.utc).isoformat(), "memory": {}, "deaths": 0}
                                  if self.path == "/v1/state" else []).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

            def address_string(self):
                return "unix"

        self.server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        os.chmod(path, 0o600)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.path.unlink(missing_ok=True)


def test_a_fake_socket_is_read_like_a_proxy(gctl, tmp_path):
    """The fake below answers like a proxy: what refuses it in the next
    test is the check of owner and mode, nothing else."""
    fake = FakeProxy(tmp_path / "guard-fake.sock")
    try:
        states = gctl.status(runtime_dir=tmp_path)
        assert list(states) == ["fake"] and fake.connections >= 1
    finally:
        fake.close()


@pytest.mark.parametrize("how", ["mode 0666", "mode 0660", "another owner"])
def test_a_socket_with_the_wrong_owner_or_mode_is_refused(gctl, tmp_path, how):
    fake = FakeProxy(tmp_path / "guard-planted.sock")
    try:
        if how == "another owner":
            if os.getuid() != 0:
                pytest.skip("only root can give a socket to another user")
            os.chown(fake.path, 65534, 65534)
            words = "belongs to another user: refused"
        else:
            os.chmod(fake.path, int(how.split()[1], 8))
            words = "others could use it: refused"
        r = gctl.ok("status", runtime_dir=tmp_path)
        print(f"--- guardctl status, a socket with {how}\nstdout: {r.stdout}stderr: {r.stderr}")
        assert f"{fake.path}" in r.stderr and words in r.stderr, r.stderr
        assert "planted" not in r.stdout
        assert r.stdout == "No guarded kernel could be read: 1 control socket(s) skipped, see above.\n", \
            f"a kernel's socket was refused; guardctl must not say that none runs:\n{r.stdout}"
        assert json.loads(gctl.ok("status", "--json", runtime_dir=tmp_path).stdout) == []
        r = gctl("cells", "planted", runtime_dir=tmp_path)
        assert r.returncode != 0
        assert fake.connections == 0, "guardctl talked to a socket it refused"
        assert fake.path.exists(), "guardctl removed a socket that is not its own to judge"
    finally:
        fake.close()


def test_the_proxy_refuses_another_uid(pair, gctl):
    """The proxy's own check (SO_PEERCRED): even through a socket whose mode
    lets others connect, another user's requests are refused and change
    nothing. The socket is reached through a hard link in a directory others
    can enter, its mode opened for the test and closed again."""
    if os.getuid() != 0:
        pytest.skip("connecting as another user needs root")
    python = "/usr/bin/python3"  # one another user can run: the venvs may sit in private directories
    if not os.access(python, os.X_OK):
        missing(f"no {python} (Debian's python3) to connect as another user")
    a = pair.k6
    sock = Path(os.environ["JUPYTER_RUNTIME_DIR"]) / f"guard-{a.kid}.sock"
    d = Path(tempfile.mkdtemp(prefix="guard-peer-"))
    d.chmod(0o755)
    link = d / "s"
    os.link(sock, link)
    script = ("import socket, sys\n"
              "s = socket.socket(socket.AF_UNIX)\n"
              "s.connect(sys.argv[1])\n"
              "s.sendall(sys.argv[2].encode() + b' HTTP/1.1\\r\\nHost: guard\\r\\nConnection: close\\r\\n\\r\\n')\n"
              "out = b''\n"
              "while chunk := s.recv(65536):\n"
              "    out += chunk\n"
              "sys.stdout.write(out.decode())\n")
    try:
        sock.chmod(0o666)
        answers = {}
        for req in ["GET /v1/state", "GET /v1/cells", "POST /v1/restart", "POST /v1/interrupt"]:
            r = subprocess.run([python, "-I", "-c", script, str(link), req], user=65534, group=65534,
                               extra_groups=[], capture_output=True, timeout=30)
            assert r.returncode == 0, r.stderr.decode()
            answers[req] = r.stdout.decode()
        # Meanwhile guardctl refuses the socket: its mode lets others in.
        r = gctl.ok("status")
        assert "others could use it: refused" in r.stderr and a.short not in r.stdout, (r.stdout, r.stderr)
    finally:
        sock.chmod(0o600)
        shutil.rmtree(d)
    for req, answer in answers.items():
        head, _, body = answer.partition("\r\n\r\n")
        assert head.startswith("HTTP/1.1 403"), f"{req} as uid 65534: {answer}"
        assert json.loads(body) == {"error": "uid 65534 is not the owner of this kernel"}, answer
    s = gctl.state_of(a.k)
    assert s["kernel_pid"] == a.pid.pid and a.pid.running()


def test_a_stale_socket_is_cleaned(pair, gctl, jupyter_dirs):
    """A socket file with no proxy behind it (what a proxy killed with
    SIGKILL leaves): guardctl removes it and says so; the live kernels are
    listed as ever."""
    runtime = jupyter_dirs["JUPYTER_RUNTIME_DIR"]
    stale = runtime / f"guard-{uuid_starting('deadbeef')}.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(stale))
    s.close()
    stale.chmod(0o600)
    assert stale.exists()
    r = gctl.ok("status")
    print(f"--- guardctl status with a stale socket\nstderr: {r.stderr}")
    assert f"removed {stale.name}: its proxy is gone" in r.stderr, r.stderr
    assert not stale.exists()
    assert all(a.short in r.stdout for a in pair.both()), r.stdout
    again = gctl.ok("status")
    assert stale.name not in again.stderr, again.stderr


def raw_request(path: Path, data: bytes, timeout: float = 15) -> bytes:
    """Sends bytes to a socket and returns all it answers until it closes."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(str(path))
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before all was sent
        return read_all(s)


GARBAGE = {
    "binary": bytes(range(256)) * 16,
    "not http": b"hello proxy\r\n\r\n",
    "unknown path": b"GET /v1/nothing HTTP/1.1\r\nHost: guard\r\n\r\n",
    "wrong method": b"DELETE /v1/state HTTP/1.1\r\nHost: guard\r\n\r\n",
    "GET on an action": b"GET /v1/restart HTTP/1.1\r\nHost: guard\r\n\r\n",
    "bad length": b"POST /v1/resume HTTP/1.1\r\nHost: guard\r\nContent-Length: -7\r\n\r\n",
    "huge header": b"GET /v1/state HTTP/1.1\r\nHost: guard\r\nX-Junk: " + b"j" * (4 * MiB) + b"\r\n\r\n",
    "bad version": b"GET /v1/state HTTP/9.9\r\nHost: guard\r\n\r\n",
}


def test_garbage_on_the_socket_gets_an_error(pair, gctl, jupyter_dirs):
    """Bytes that are not a request the API knows get an HTTP error; the
    proxy stays up, keeps serving status (also while a peer holds a
    connection open saying nothing, or half a request), and its kernel
    runs cells."""
    a = pair.k7
    sock = jupyter_dirs["JUPYTER_RUNTIME_DIR"] / f"guard-{a.kid}.sock"
    answers = {what: raw_request(sock, data) for what, data in GARBAGE.items()}
    for what, answer in answers.items():
        assert re.match(rb"HTTP/1\.[01] (4\d\d|505) ", answer), f"{what}: {answer[:200]!r}"
    assert answers["GET on an action"].startswith(b"HTTP/1.1 405")
    silent, half = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
    try:
        silent.connect(str(sock))
        half.connect(str(sock))
        half.sendall(b"GET /v1/state HTTP/1.1\r\nHost: gu")
        s = gctl.state_of(a.k)
        assert s["proxy_pid"] == a.k.proc.pid and s["state"] == "idle"
    finally:
        silent.close()
        half.close()
    assert a.k.proc.running()
    assert a.k.ok("print(len(grown) >> 20)").stdout == f"{a.mib}\n"
    assert gctl.state_of(a.k)["kernel_pid"] == a.pid.pid


# ------------------------------------------------- pause, resume, restart

BUDGET = 500 * MiB


@pytest.fixture(scope="module")
def steered(module_kernels, gctl) -> Kernel:
    """A guarded kernel with a small budget: warned at 50% of 500 MiB,
    paused at 70% (350 MiB). A notebook's kernel: a person can answer a
    pause."""
    with as_jupyter_starts_it(JUPYTER_GUARD_LIMIT="500MiB", JUPYTER_GUARD_WARN="50%", JUPYTER_GUARD_PAUSE="70%",
                              JUPYTER_GUARD_ACTION="pause", JPY_SESSION_NAME="steered.ipynb"):
        return module_kernels.start(K7.guarded)


def grow_until(flag: Path) -> str:
    """A cell that keeps 8 MiB more every 40 ms until the test creates flag
    (at most 640 MiB, should the guard never pause it)."""
    return ("import os, time\n"
            "kept = []\n"
            f"while not os.path.exists({str(flag)!r}) and len(kept) < 80:\n"
            "    kept.append(b'x' * (8 << 20))\n"
            "    time.sleep(0.04)\n"
            "print(len(kept), 'blocks kept')\n")


def test_pause_then_resume(steered, gctl, tmp_path):
    """A growing cell is paused near the budget: the kernel's processes are
    stopped, status says paused and the table makes it stand out.
    `guardctl resume` lets the cell go on to its end."""
    k = steered
    pid = k.pid()
    short = k.kernel_id[:8]
    flag = tmp_path / "enough"
    msg_id = k.kc.execute(grow_until(flag))
    seen = read_until_stream(k.kc, msg_id, "jupyter-guard paused the kernel", timeout=EXEC_TIMEOUT)
    s = wait_until(lambda: (st := gctl.state_of(k))["state"] == "paused" and st, 30, "state paused")
    out = gctl.ok("status").stdout
    print(f"--- guardctl status, paused\n{out}--- guardctl status --json, paused\n{json.dumps(s, indent=2)}")
    row = [r for r in table(out) if r["KERNEL"] == short][0]
    assert row["STATE"] == "PAUSED !", row
    assert s["kernel_pid"] == pid.pid and s["last_cell"]["running"] is True
    assert s["last_cell"]["code"] == "import os, time"
    used = s["memory"]["used_bytes"]
    assert 0.5 * BUDGET <= used < BUDGET, f"paused at {used / MiB:.0f} MiB of a {BUDGET / MiB:.0f} MiB budget"
    assert near(s["memory"]["tree_rss_bytes"], tree_rss(pid.pid))
    assert s["last_cell"]["growth_bytes"] > 0.4 * BUDGET
    stopped = {p: proc_state(p) for p in tree(pid.pid)}
    assert set(stopped.values()) == {"T"}, f"paused, yet not all of the kernel's processes are stopped: {stopped}"

    flag.touch()
    r = gctl.ok("resume", short)
    assert re.fullmatch(rf"kernel {short}: (busy|idle)\n", r.stdout), r.stdout
    run = collect(k.kc, msg_id, iopub=seen)
    assert run.status == "ok", run.reply["content"]
    assert "the kernel was resumed (guardctl resume)" in run.stderr, run.stderr
    blocks = int(run.stdout.split()[0])
    assert 20 <= blocks < 80, run.stdout
    s = wait_until(lambda: (st := gctl.state_of(k))["state"] == "idle" and st, 30, "state idle after the resume")
    assert s["kernel_pid"] == pid.pid and pid.running()
    assert near(s["last_cell"]["growth_bytes"], blocks * 8 * MiB, 0.15), (blocks, s["last_cell"])
    _, rows = cells_of(gctl, short)
    grower = [r for r in rows if r["CODE"] == "import os, time"][0]
    assert grower[""] == "<- grew most"
    r = gctl("resume", short)
    assert r.returncode != 0 and "not paused" in r.stderr


def wait_restarted(gctl: Guardctl, k: Kernel, old: int) -> dict:
    return wait_until(lambda: (st := gctl.state_of(k))["state"] == "idle" and st["kernel_pid"] != old and st,
                      START_TIMEOUT, "the restarted kernel to be idle")


def test_restart(steered, gctl):
    """`guardctl restart`: a new kernel process under the same proxy, the
    variables gone, the kernel working, not counted as a death."""
    k = steered
    short = k.kernel_id[:8]
    k.ok("before_restart = 42")
    old = k.pid()
    r = gctl.ok("restart", short)
    print(f"--- guardctl restart {short}\n{r.stdout}")
    # It answers once the old kernel is gone: the state is the restart's.
    assert re.fullmatch(rf"kernel {short}: (restarting|starting)\n", r.stdout), r.stdout
    s = wait_restarted(gctl, k, old.pid)
    assert not old.running()
    assert s["proxy_pid"] == k.proc.pid and k.proc.running()
    assert s["deaths"] == 0
    gone = k.run("before_restart")
    assert gone.status == "error" and gone.error["ename"] == "NameError", gone.reply["content"]
    assert k.ok("print(6 * 7)").stdout == "42\n"
    new = k.pid()
    assert new.pid == s["kernel_pid"] != old.pid
    assert gctl.state_of(k)["kernel_pid"] == new.pid


# ---------------------------------------------------------- guardctl run


def run_notebook(gctl: Guardctl, nb: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    r = gctl("run", "--kernel", K7.id, "-o", str(out), *args, str(nb), timeout=300)
    print(f"--- guardctl run {' '.join(args)} {nb.name}: exit {r.returncode}\nstdout:\n{r.stdout}stderr:\n{r.stderr}")
    return r


def test_run_grow_prints_the_grower_on_top(gctl, kernelspecs, tmp_path):
    r = run_notebook(gctl, DEMO / "grow.ipynb", tmp_path / "grow.out.ipynb", "--limit", "1GiB")
    assert r.returncode == 0, r.stderr
    assert f"starting {K7.guarded} for" in r.stderr
    rows = table(r.stdout)
    assert list(rows[0]) == ["CELL", "EXEC", "STATUS", "TIME", "PEAK", "GROWTH", "CODE", ""]
    assert len(rows) == 4, r.stdout  # the four code cells
    top = rows[0]
    assert top["CELL"] == "4" and top["EXEC"] == "[3]" and top["STATUS"] == "ok", top
    assert top["CODE"].startswith("kept.append(b'x' * (700 * MiB))"), top
    # At least what it kept; the ledger may give it its neighbour's growth
    # too (known bug queued-cells: nbexec runs the cells back to back).
    assert size(top["GROWTH"]) >= 0.9 * 700 * MiB, top
    assert size(top["PEAK"]) >= 700 * MiB
    assert all(row["STATUS"] == "ok" for row in rows)
    growth = [size(row["GROWTH"]) for row in rows]
    assert growth == sorted(growth, reverse=True), r.stdout
    check_grow_demo(nbformat.read(tmp_path / "grow.out.ipynb", as_version=4))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("ceiling", ["on", "off"], ids=["ceiling", "no-ceiling"])
@pytest.mark.parametrize("burners", [0, 2], ids=["idle", "beside-two-cpu-burners"])
def test_run_fails_when_a_cell_goes_past_the_line_faster_than_the_guard(gctl, kernelspecs, tmp_path, monkeypatch, burners, ceiling):
    """Issue 29: `guardctl run --limit 400MiB grow.ipynb`. Cell [3] fills
    700 MiB in one step, faster than the guard looks; however the timing
    falls, the run fails at that cell and the terminal shows the guard's
    notice. With the ceiling (issue 28) the allocation is refused at once:
    MemoryError and the refusal's note. Without it, the interrupt's notice
    when a sample caught the fill (the cell raised KeyboardInterrupt, or
    ended before it landed), the late notice when only the cell's end
    measurement saw it. Three runs each (JUPYTER_GUARD_TEST_REPS=20 for the
    issue's count)."""
    monkeypatch.setenv("JUPYTER_GUARD_CEILING", ceiling)
    loops = [subprocess.Popen(["python3", "-c", "while True: pass"]) for _ in range(burners)]
    try:
        for i in range(int(os.environ.get("JUPYTER_GUARD_TEST_REPS", 3))):
            out = tmp_path / f"grow{i}.out.ipynb"
            r = run_notebook(gctl, DEMO / "grow.ipynb", out, "--limit", "400MiB")
            assert r.returncode == 1, r.stderr
            told = r.stderr[r.stderr.index("guardctl run: cell 4 "):]
            if ceiling == "on":
                assert re.match(r"guardctl run: cell 4 \(id \w+\) of \S+grow\.ipynb raised MemoryError", told), told
                assert re.search(f"^{re.escape(REFUSED)}", told, re.M), told
                assert WARNING not in told  # refused at once, below the warning line
            else:
                assert re.match(r"guardctl run: cell 4 \(id \w+\) of \S+grow\.ipynb (raised KeyboardInterrupt|reached the line where the guard acts)", told), told
                assert re.search(r"^jupyter-guard interrupted this cell|^jupyter-guard: this cell took the kernel past the interrupt line \(380 MiB\)",
                                 told, re.M), told
            # The rest of the notebook did not run, and what ran is saved.
            cells = nbformat.read(out, as_version=4).cells
            assert cells[4].get("execution_count") is None and cells[3]["execution_count"] == 3, cells
    finally:
        for p in loops:
            p.kill()
            p.wait()


def test_run_crash_exits_with_the_diagnosis(gctl, kernelspecs, tmp_path):
    r = run_notebook(gctl, DEMO / "crash.ipynb", tmp_path / "crash.out.ipynb")
    assert r.returncode == 1, r.returncode
    assert re.search(r"guardctl run: the kernel died in cell 3 .*crash\.ipynb:", r.stderr), r.stderr
    told = r.stderr[r.stderr.index("guardctl run: the kernel died"):]
    assert "jupyter-guard: kernel died (crash)" in told
    assert re.search(r"segmentation fault \(SIGSEGV\)", told), told
    assert "ctypes.string_at(0)" in told
    assert "\x1b[" not in told
    rows = table(r.stdout)
    assert [(row["CELL"], row["STATUS"]) for row in rows if row["STATUS"] != "ok"] == [("3", "died")], r.stdout
    assert "never reached" not in r.stdout
    nb = nbformat.read(tmp_path / "crash.out.ipynb", as_version=4)
    crashed = [c for c in nb.cells if c.cell_type == "code"][1]
    assert crashed.outputs[-1]["ename"] == "KernelDied", crashed.outputs


MALFORMED = {
    "truncated": ('{"cells": [{"cell_type": "code", "source": "print(1)"',
                  r"invalid JSON at line 1, column \d+"),
    "source not text": ('{"cells": [{"cell_type": "code", "source": 42, "metadata": {}, "outputs": [], '
                        '"execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
                        r'cell 1: "source" must be a string or a list of strings, found the number 42'),
    "no cells": ('{"metadata": {}, "nbformat": 4, "nbformat_minor": 5}', r'no "cells"'),
    "nbformat 3": ('{"worksheets": [], "metadata": {}, "nbformat": 3, "nbformat_minor": 0}', r"nbformat 3 is too old"),
    "empty": ("", r"the file is empty, not a notebook"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_run_a_malformed_notebook(gctl, kernelspecs, tmp_path, case):
    text, says = MALFORMED[case]
    nb = tmp_path / "broken.ipynb"
    nb.write_text(text)
    r = run_notebook(gctl, nb, tmp_path / "out.ipynb")
    assert r.returncode != 0
    assert re.search(rf"^guardctl run: {re.escape(str(nb))}: .*{says}", r.stderr, re.M), r.stderr
    assert "starting" not in r.stderr and r.stdout == "", "a kernel was started for a notebook that cannot run"
    assert not (tmp_path / "out.ipynb").exists()


# ------------------------------------------------------------- known bugs


def test_a_fresh_kernel_shows_its_memory(pair):
    """Before its first cell a kernel already holds memory (ipykernel
    starts with ~50 MiB): status must say so, not 0 B."""
    mem = pair.fresh["memory"]
    assert near(mem["tree_rss_bytes"], pair.fresh_rss), \
        f"a fresh kernel: status says {mem['tree_rss_bytes'] / MiB:.1f} MiB, /proc {pair.fresh_rss / MiB:.1f} MiB"


def test_a_restarted_kernel_shows_its_new_memory(steered, gctl):
    """After `guardctl restart`, status shows the new kernel's memory, not
    the memory the old one held when its last cell ended."""
    k = steered
    k.ok("held = b'x' * (200 << 20)")
    old = gctl.state_of(k)
    assert old["memory"]["tree_rss_bytes"] > 200 * MiB
    gctl.ok("restart", k.kernel_id[:8])
    s = wait_restarted(gctl, k, old["kernel_pid"])
    rss = tree_rss(s["kernel_pid"])
    assert near(s["memory"]["tree_rss_bytes"], rss), \
        f"restarted: status says {s['memory']['tree_rss_bytes'] / MiB:.1f} MiB, /proc {rss / MiB:.1f} MiB"


def test_the_first_cell_is_not_charged_for_the_start_up(pair, gctl):
    """The first cell of k7 only printed its pid; the ~50 MiB ipykernel
    takes to start are not that cell's doing."""
    _, rows = cells_of(gctl, pair.k7.short)
    first = rows[0]
    assert first["CODE"] == "import os; print(os.getpid())"
    assert abs(size(first["GROWTH"])) < 8 * MiB and first[""] == "", \
        f"the first cell, which only printed, is charged {first['GROWTH']}: {first}"


@pytest.mark.xfail(strict=False, reason=(
    "known limitation: ipykernel starts the next queued cell as soon as it publishes the previous one's idle, "
    "before the guard can take that cell's end measurement from outside the kernel; a fast allocation at the "
    "start of the next cell is then charged to the cell before (seen as 32/0 MiB pairs in about 1 run of 3)"))
def test_queued_cells_each_get_their_own_growth(pair, gctl):
    """Run All sends every cell at once; the kernel runs them back to back.
    Each of 20 cells keeps 16 MiB: the ledger must say so of each."""
    k = pair.k6.k
    k.ok("queued = []")
    ids = [k.kc.execute("queued.append(b'x' * (16 << 20))") for _ in range(20)]
    runs = collect_all(k.kc, {msg_id: [] for msg_id in ids})
    assert all(run.status == "ok" for run in runs.values())
    out, rows = cells_of(gctl, pair.k6.short)
    try:
        queued = [size(r["GROWTH"]) / MiB for r in rows if r["CODE"] == "queued.append(b'x' * (16 << 20))"]
        assert len(queued) == 20, out
        wrong = [f"{g:.1f}" for g in queued if not near(g, 16, 0.25)]
        assert not wrong, f"cells that kept 16 MiB each, as the ledger has them (MiB): {[f'{g:.1f}' for g in queued]}"
    finally:
        k.ok("del queued")
