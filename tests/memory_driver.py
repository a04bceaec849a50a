"""The client side of tests/test_memory_guard.py, run by the test inside the
memory cgroup it made, so that the client's memory counts against the limit
as it does in a container where Jupyter and the kernel share one.

    python memory_driver.py '{"kernel": ..., "cgroup": ..., "log": ..., "scenario": ..., "reps": N}'

Starts the kernel with jupyter_client's KernelManager and BlockingKernelClient,
sets `kept = 42` (and `ballast`, "prefill" MiB, if asked), runs the scenario's
growing cell `reps` times (interrupting it with KernelManager.interrupt_kernel,
the ■ button, once the guard says it paused the kernel, when the scenario says
so; "scenario" may be a list, run in turn), allocates 64 MiB after each if
"after" is set, and prints one JSON object: what happened in each repetition.
It asserts nothing: the test does."""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from pathlib import Path

import zmq
from jupyter_client.manager import KernelManager

from memcg import MemoryCgroupV2
from support import NEAR_SIGNAL, START_TIMEOUT, MemoryCgroup, children_of, execute, proc_stat

MiB = 1 << 20
PAUSED = "jupyter-guard paused the kernel"
WARNING = "jupyter-guard: memory warning."
# How long a growing cell may go without any message before the driver gives
# up on it: it reaches any line of a 1.5 GiB budget within seconds.
QUIET_LIMIT = 60
# How long the driver watches a paused kernel before interrupting it: a
# pause that does not hold shows as growth or a running process here.
WATCH_PAUSED = 0.15

# The growing cells. Each keeps its memory in a global, so that an
# interrupted cell leaves it to the release cell, as a user's would.
STEADY = "import time\nblocks = []\nwhile True:\n    blocks.append(b'x' * (32 << 20))\n    time.sleep(0.02)\n"
# STEADY that also prints 100 kB per block: output that fills a subscriber
# that does not read, so the guard's notices queue behind it if they can.
PRINTING = ("import time\nblocks = []\nwhile True:\n    blocks.append(b'x' * (32 << 20))\n"
            "    print('.' * 100_000, flush=True)\n    time.sleep(0.02)\n")


# STEADY's loop in 16 MiB blocks, in a cell whose SIGINT handler swallows
# the first interrupt, as C code or a library that ignores it would: the
# guard must stop it again. Half STEADY's blocks, so that after the first
# stop there is room for a block to finish, one more to be stopped in, and
# that one to finish: 32 MiB blocks under 1.5 GiB leave 72 MiB after a
# stop at the pause line, and the guard rightly makes no second stop where
# the interrupt's block would end past the limit.
SWALLOWED = ("import signal\nswallowed = []\n"
             "def once(sig, frame):\n"
             "    if not swallowed:\n"
             "        swallowed.append(sig)\n"
             "        return\n"
             "    raise KeyboardInterrupt\n"
             "signal.signal(signal.SIGINT, once)\n" + STEADY.replace("32 << 20", "16 << 20").replace("0.02", "0.01"))


def fast(mib: int) -> str:
    """Blocks of mib MiB as fast as NumPy fills them."""
    return f"import numpy as np\nblocks = []\nwhile True:\n    blocks.append(np.ones({mib} << 20, dtype=np.uint8))\n"



# fork: the worker's function lives in the kernel's __main__, which a
# spawned or forkserver child could not import.
WORKER = ("import multiprocessing as mp, time\n"
          "def grow():\n"
          "    blocks = []\n"
          "    while True:\n"
          "        blocks.append(b'x' * (32 << 20))\n"
          "        time.sleep(0.02)\n"
          "worker = mp.get_context('fork').Process(target=grow, daemon=True)\n"
          "worker.start()\n"
          "worker.join()\n")
# Says how many references to the list there are besides the namespace's,
# so a check that finds the memory still in use can tell "still referenced"
# from "not yet returned".
RELEASE = "import sys\nprint('other references:', sys.getrefcount(blocks) - 2)\ndel blocks\n"
# After an interrupt, what is left of the interrupted block (the frame of
# np.ones that KeyboardInterrupt left in a traceback) can sit in reference
# cycles until Python's collector runs; a user's memory comes back then.
COLLECT = "import gc\ngc.collect()\n"
# The interrupt reaches the worker too (the whole process group gets SIGINT)
# and it may be gone already, reaped by the join the interrupt broke off
# without multiprocessing learning of it: the test looks at /proc instead.
RELEASE_WORKER = "worker.terminate()\nworker.join(10)\n"


def bounded(usage_file: Path, target: int) -> str:
    """A cell that grows as STEADY does until the group uses target bytes,
    then waits a moment with the cell still running and ends by itself."""
    return ("import time\nblocks = []\n"
            f"while int(open({str(usage_file)!r}).read()) < {target}:\n"
            "    blocks.append(b'x' * (32 << 20))\n    time.sleep(0.02)\n"
            "time.sleep(0.5)\nprint('grew to', sum(map(len, blocks)) >> 20, 'MiB')\n")


def hold(usage: int, target: int) -> str:
    """A cell that fills one array of what takes the group from usage to
    target, and keeps it: one fill that ends by itself between the lines."""
    return f"import numpy as np\nhold = np.ones({max(0, target - usage)}, dtype=np.uint8)\n"


def too_big(usage: int, limit: int) -> str:
    """One np.ones of 128 MiB more than the group has left: a fill no pause
    can save, since the interrupt lands only once it is done."""
    return f"import numpy as np\nbig = np.ones({limit - usage + 128 * MiB}, dtype=np.uint8)\n"


# Works whether the kernel kept both or died and was restarted with neither.
RELEASE_FILL = "hold = big = None\n"

# The allocation ceiling's cells (issue 28): each ends by itself with a
# memory error, however it grows.
ONE_BIG = "import numpy as np\nbig = np.ones(2 << 30, dtype=np.uint8)\n"
POOL = ("import multiprocessing as mp, numpy as np\n"
        "def grow(_):\n"
        "    blocks = []\n"
        "    while True:\n"
        "        blocks.append(np.ones(64 << 20, dtype=np.uint8))\n"
        "with mp.get_context('fork').Pool(1) as pool:\n"
        "    pool.map(grow, [0])\n")
# Pure Python, small allocations: at its line every allocation fails, the
# error path's too, unless the cell is stopped before it gets there.
DICT = "d = {}\ni = 0\nwhile True:\n    d[i] = (i, str(i))\n    i += 1\n"
STRINGS = "strings = []\nwhile True:\n    strings.append(str(len(strings)) * 3)\n"
RELEASE_ALL = "blocks = big = d = strings = None\n"
# 64 GiB PROT_NONE (0: mmap has no name for it), as CUDA, JAX, V8 and Go
# reserve address space, then committed 32 MiB at a time with mprotect
# until that fails.
# The guard's hook (supervisor/pyhook, on NEAR_SIGNAL) raises MemoryError
# in this Python loop when it heads for its line fast, often before the
# mprotect is refused. Those that reserve (CUDA, JAX, V8, Go) commit from
# native code the hook never stops, so the cell ignores that signal: what
# is under test is the line itself.
RESERVE = ("import ctypes, mmap, signal\n"
           f"signal.signal({NEAR_SIGNAL}, signal.SIG_IGN)\n"
           "libc = ctypes.CDLL(None, use_errno=True)\n"
           "libc.mmap.restype = ctypes.c_void_p\n"
           "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]\n"
           "libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]\n"
           "libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]\n"
           "base = libc.mmap(None, 64 << 30, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000, -1, 0)\n"
           "assert base not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()\n"
           "committed = 0\n"
           "while libc.mprotect(base + committed, 32 << 20, mmap.PROT_READ | mmap.PROT_WRITE) == 0:\n"
           "    ctypes.memset(base + committed, 1, 32 << 20)\n"
           "    committed += 32 << 20\n"
           "print('reserved 64 GiB, committed', committed >> 20, 'MiB, then errno', ctypes.get_errno())\n")
# After a refused cell and its release: the kernel allocates again.
AFTER = "import numpy as np\nafter = np.ones(64 << 20, dtype=np.uint8)\nprint(int(after.sum()) >> 20, 'MiB')\ndel after\n"


def prefill(mib: int) -> str:
    """An earlier variable that holds mib MiB for the whole session, so
    that each repetition's cell has less to grow before the limit."""
    return f"import numpy as np\nballast = np.ones({mib} << 20, dtype=np.uint8)\n"


def tree(root: int) -> list[dict]:
    """root's descendants (not root) with their states, parents first."""
    out, todo = [], [root]
    while todo:
        for pid in children_of(todo.pop()):
            st = proc_stat(pid)
            if st is not None:
                comm = Path(f"/proc/{pid}/comm").read_text().strip() if Path(f"/proc/{pid}/comm").exists() else "?"
                out.append({"pid": pid, "ppid": st[1], "state": st[0], "comm": comm})
                todo.append(pid)
    return out


def stuck_subscriber(zctx: zmq.Context, km: KernelManager) -> zmq.Socket:
    """A SUB on the kernel's iopub, subscribed to everything, that never
    reads, with the smallest buffers libzmq and the kernel allow."""
    s = zctx.socket(zmq.SUB)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVHWM, 1)
    s.setsockopt(zmq.RCVBUF, 4096)
    s.setsockopt(zmq.SUBSCRIBE, b"")
    monitor = s.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
    info = km.get_connection_info()
    s.connect(f"{info['transport']}://{info['ip']}:{info['iopub_port']}")
    if not monitor.poll(START_TIMEOUT * 1000):
        raise RuntimeError("the stuck subscriber never connected")
    return s


class Driver:
    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.zctx = zmq.Context()
        self.cg = (MemoryCgroupV2 if cfg.get("v2") else MemoryCgroup)(Path(cfg["cgroup"]))
        self.log = open(cfg["log"], "wb")
        self.km = KernelManager(kernel_name=cfg["kernel"])
        self.km.start_kernel(stdout=self.log, stderr=self.log)
        self.proxy = self.km.provisioner.process.pid
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=START_TIMEOUT)
        self.stuck = [stuck_subscriber(self.zctx, self.km) for _ in range(cfg.get("stuck", 0))]
        while True:  # replies to wait_for_ready's earlier kernel_info requests
            try:
                self.kc.get_shell_msg(timeout=0.2)
            except queue.Empty:
                break

    def close(self):
        self.zctx.destroy(linger=0)
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        self.log.close()

    def run(self, code: str) -> dict:
        r = execute(self.kc, code)
        err = r.error
        return {"status": r.status, "stdout": r.stdout, "stderr": r.stderr, "ename": err and err["ename"],
                "evalue": err and err["evalue"]}

    def grow(self, code: str, interrupt_on_pause: bool) -> dict:
        """Runs a growing cell to its end and says what happened in it."""
        rep: dict = {"oom_before": self.cg.oom_kills(), "usage_before": self.cg.usage()}
        self.cg.reset_peak()
        msg_id = self.kc.execute(code)
        iopub, paused_at = [], None
        started = time.monotonic()
        while True:
            try:
                m = self.kc.get_iopub_msg(timeout=QUIET_LIMIT)
            except queue.Empty:
                rep["stuck"] = f"no message for {QUIET_LIMIT}s; tree {tree(self.proxy)}"
                self.km.interrupt_kernel()
                continue
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            iopub.append(m)
            c = m["content"]
            if m["msg_type"] == "stream" and WARNING in c["text"] and "warned_at" not in rep:
                rep["warned_at"] = time.monotonic() - started
            if m["msg_type"] == "stream" and PAUSED in c["text"]:
                if paused_at is None:  # the figures are the first pause's
                    paused_at = time.monotonic()
                    rep.update(seconds_to_pause=paused_at - started, usage_at_pause=self.cg.usage(),
                               tree_at_pause=tree(self.proxy))
                    time.sleep(WATCH_PAUSED)
                    rep.update(usage_paused_later=self.cg.usage(), tree_paused_later=tree(self.proxy),
                               working_set_paused_later=self.cg.working_set())
                # ■ again at every pause, as a user would.
                if interrupt_on_pause:
                    self.km.interrupt_kernel()
            if m["msg_type"] == "status" and c["execution_state"] == "idle":
                break
        while True:
            reply = self.kc.get_shell_msg(timeout=QUIET_LIMIT)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        errors = [m["content"] for m in iopub if m["msg_type"] == "error"]
        rep.update(
            status=reply["content"]["status"], reply_ename=reply["content"].get("ename"),
            errors=[e["ename"] for e in errors], evalues=[e["evalue"][:300] for e in errors],
            stderr="".join(m["content"]["text"] for m in iopub
                           if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"),
            stdout="".join(m["content"]["text"] for m in iopub
                           if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"),
            seconds=time.monotonic() - started, peak=self.cg.peak(), oom_after=self.cg.oom_kills())
        return rep


SCENARIOS = {
    # name: (growing cell, cell that gives its memory back, interrupt on the pause notice)
    "steady": (STEADY, RELEASE, True),
    "printing": (PRINTING, RELEASE, True),
    "fast": (fast(64), RELEASE, True),
    "fast32": (fast(32), RELEASE, True),
    "worker": (WORKER, RELEASE_WORKER, True),
    "swallowed": (SWALLOWED, RELEASE, True),
    "swallowed-uninterrupted": (SWALLOWED, RELEASE, False),
    "steady-uninterrupted": (STEADY, RELEASE, False),
    "fast-uninterrupted": (fast(64), RELEASE, False),
    "one-big": (ONE_BIG, RELEASE_ALL, False),
    "pool": (POOL, RELEASE_ALL, False),
    "dict": (DICT, RELEASE_ALL, False),
    "strings": (STRINGS, RELEASE_ALL, False),
    "reserve": (RESERVE, "libc.munmap(base, 64 << 30)\n", False),
}


def cells(d: Driver, cfg: dict, scenario: str) -> tuple[str, str, bool, dict | None]:
    """A repetition's growing cell, the cell that gives its memory back,
    whether to interrupt on the pause notice, and what the setup cell run
    first said (None if there is none)."""
    if scenario == "bounded":
        return bounded(d.cg.dir / "memory.usage_in_bytes", cfg["target"]), RELEASE, False, None
    if scenario == "too-big":
        # Between the lines first, then one fill that cannot fit.
        held = d.run(hold(d.cg.usage(), cfg["target"]))
        return too_big(d.cg.usage(), int(d.cg.read("memory.limit_in_bytes"))), RELEASE_FILL, True, held
    return *SCENARIOS[scenario], None


def main(cfg: dict) -> dict:
    d = Driver(cfg)
    out: dict = {"driver_pid": os.getpid(), "proxy_pid": d.proxy, "reps": []}
    try:
        out["in_cgroup"] = sorted(d.cg.procs())
        out["tree"] = tree(d.proxy)
        out["set"] = d.run("kept = 42")
        if cfg.get("prefill"):
            out["prefill"] = d.run(prefill(cfg["prefill"]))
        # One scenario, or several in turn in the same session.
        scenarios = cfg["scenario"] if isinstance(cfg["scenario"], list) else [cfg["scenario"]]
        for scenario in scenarios:
            for _ in range(cfg["reps"]):
                cell, release, interrupt, held = cells(d, cfg, scenario)
                rep = d.grow(cell, interrupt)
                rep["scenario"] = scenario
                if held is not None:
                    rep["hold"] = held
                rep["kept"] = d.run("print(kept)")
                rep["release"] = d.run(release)
                rep["usage_released"] = d.cg.usage()
                rep["collect"] = d.run(COLLECT)
                rep["usage_collected"] = d.cg.usage()
                rep["tree_released"] = tree(d.proxy)
                if cfg.get("after"):
                    rep["after"] = d.run(AFTER)
                out["reps"].append(rep)
    finally:
        d.close()
    return out


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
