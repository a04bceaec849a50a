"""The seeds' story, for real: a Keras CNN whose batch is too large for a
2 GiB memory limit, trained on the guarded kernel.

Runs testdata/demo/cnn.ipynb cell by cell, as a user would, on the guarded
kernel inside a v1 memory cgroup of its own with a 2 GiB limit (proxy and
kernel in it from birth, as in a container). The fit cell with batch 768
must be warned, then paused before the OOM killer fires; the script then
interrupts it (the notebook's ■). The next cell lets go of what IPython
keeps of the interrupted cell (its exception, whose traceback holds the
step's tensors), which must give the memory back; then the cells after it
train on with batch 64 and find the session's variables still there.
First, a control run with JUPYTER_GUARD_ACTION=warn shows that the same
fit is OOM-killed when the guard only warns. Prints what the user sees in
the fit cell, the figures and PASS or FAIL, and saves the executed
notebook. A pause in any other cell is interrupted at once and fails the
run (rather than waiting for a user who is not there).

    python3 bench/cnn_story.py [--skip-control] [--pause 95%] [-o OUT.ipynb]

Needs: root (it creates a memory cgroup under its own), cgroup v1 memory,
Go (make build), Python 3.10+ with venv, and PyPI on the first run: it
creates bench/.venv-cnn from requirements/cnn.txt (tensorflow-cpu, about
1.5 GB) and re-runs itself there. Not part of make test: too heavy.
"""

import argparse
import hashlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from memcg import MemoryCgroup  # noqa: E402  the tests' own cgroup helper
REQUIREMENTS = ROOT / "requirements" / "cnn.txt"
NOTEBOOK = ROOT / "testdata" / "demo" / "cnn.ipynb"
MiB = 2**20
GiB = 2**30
FIT_CELL = "epochs=3"  # how the script knows the fit cell
RETRAIN_CELL = "batch_size=64"
RELEASE_CELL = "sys.last_traceback"  # the cell that lets go of what IPython keeps of the interrupted one


def ensure_venv(venv: Path):
    """Creates the venv from the pinned requirements (again, if they
    changed) and re-runs this script in it."""
    python = venv / "bin" / "python"
    stamp = venv / ".requirements-sha256"
    want = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if not (python.exists() and stamp.exists() and stamp.read_text() == want):
        print(f"cnn_story: creating {venv} from {REQUIREMENTS.relative_to(ROOT)} (tensorflow-cpu: a few minutes)", flush=True)
        t = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(REQUIREMENTS)], check=True)
        stamp.write_text(want)
        print(f"cnn_story: venv ready in {time.monotonic() - t:.0f} s", flush=True)
    if Path(sys.prefix).resolve() != venv.resolve():
        os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


class Sampler(threading.Thread):
    """Samples the cgroup every 10 ms: the peak working set, and a
    timeline the script can ask about (usage at a given moment)."""

    def __init__(self, cg: MemoryCgroup):
        super().__init__(daemon=True)
        self.cg, self.peak, self.last, self.stop = cg, 0, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.last = self.cg.working_set()
            except OSError:
                return
            self.peak = max(self.peak, self.last)
            time.sleep(0.01)


def proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


class Story:
    """One guarded kernel in its own cgroup, running the notebook's cells."""

    def __init__(self, args, action: str):
        import nbformat  # from the venv
        from jupyter_client import KernelManager

        self.nbformat, self.args, self.action = nbformat, args, action
        self.tmp = Path(tempfile.mkdtemp(prefix="cnn-story-"))
        self.cg = MemoryCgroup.create(args.limit, prefix="cnn-story")
        self.log_path = self.tmp / "kernel.log"
        spec = {
            "argv": self.cg.wrap([str(ROOT / "bin" / "guardctl"), "kernel", "-f", "{connection_file}", "--",
                                  sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]),
            "display_name": "Python 3 (guarded, 2 GiB cgroup)",
            "language": "python",
            # No JUPYTER_GUARD_LIMIT: the guard finds the cgroup's limit itself.
            "env": {"JUPYTER_GUARD_ACTION": action, **({"JUPYTER_GUARD_PAUSE": args.pause} if args.pause else {})},
        }
        spec_dir = self.tmp / "share" / "kernels" / "cnn-guarded"
        spec_dir.mkdir(parents=True)
        (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
        os.environ["JUPYTER_PATH"] = str(self.tmp / "share")
        os.environ["JUPYTER_RUNTIME_DIR"] = str(self.tmp / "runtime")
        self.km = KernelManager(kernel_name="cnn-guarded")
        self.log = open(self.log_path, "w")
        self.km.start_kernel(stdout=self.log, stderr=self.log)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        self.sampler = Sampler(self.cg)
        self.sampler.start()

    def close(self):
        self.sampler.stop.set()
        try:
            self.kc.stop_channels()
            self.km.shutdown_kernel(now=True)
        except Exception as e:  # the cgroup's removal kills what is left
            print(f"cnn_story: shutdown: {e}", file=sys.stderr)
        try:
            self.cg.remove()
        except RuntimeError as e:
            print(f"cnn_story: {e}", file=sys.stderr)
        self.log.close()

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def kernel_pids(self) -> list[int]:
        """The kernel's processes: everything in the cgroup but the proxy."""
        return [p for p in self.cg.procs() if p != self.km.provisioner.pid]

    def run_cell(self, cell, watch=None, timeout=900):
        """Executes one cell and records its outputs in it, as Jupyter
        would. watch(name, text) sees every stream output as it arrives."""
        msg_id = self.kc.execute(cell.source, allow_stdin=False)
        cell.outputs, status = [], None
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"cell did not finish in {timeout} s: {cell.source[:60]!r}")
            try:
                msg = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                break
            if kind == "execute_input":
                cell.execution_count = content["execution_count"]
            elif kind == "stream":
                outs = cell.outputs
                if outs and outs[-1].output_type == "stream" and outs[-1].name == content["name"]:
                    outs[-1].text += content["text"]
                else:
                    outs.append(self.nbformat.v4.output_from_msg(msg))
                if watch:
                    watch(content["name"], content["text"])
            elif kind in ("execute_result", "display_data", "error"):
                cell.outputs.append(self.nbformat.v4.output_from_msg(msg))
                if kind == "error":
                    status = content["ename"]
        return status or "ok"


def text_of(cell) -> str:
    parts = []
    for o in cell.outputs:
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type == "error":
            parts.append("\n".join(o.traceback))
        elif "text/plain" in o.get("data", {}):
            parts.append(o.data["text/plain"] + "\n")
    return "".join(parts)


def strip_ansi(s: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", s)


def fmt(n: int) -> str:
    return f"{n / MiB:,.0f} MiB"


def control(args) -> dict:
    """The fit cell with the guard only warning: is the batch really too
    large for the limit?"""
    import nbformat
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    print(f"\n== control: JUPYTER_GUARD_ACTION=warn, {fmt(args.limit)} cgroup ==", flush=True)
    s = Story(args, "warn")
    try:
        before = s.cg.oom_kills()
        for cell in code:
            t = time.monotonic()
            status = s.run_cell(cell)
            if FIT_CELL in cell.source:
                return {"oom_kill": s.cg.oom_kills() - before, "oom_before": before, "oom_after": s.cg.oom_kills(), "status": status,
                        "seconds": time.monotonic() - t, "peak": s.sampler.peak,
                        "text": strip_ansi(text_of(cell))}
            if status != "ok":
                raise RuntimeError(f"control: setup cell failed: {status}\n{text_of(cell)}")
    finally:
        s.close()
        s.cleanup()


def story(args) -> dict:
    import nbformat
    nb = nbformat.read(NOTEBOOK, as_version=4)
    action = "pause"
    print(f"\n== story: JUPYTER_GUARD_ACTION={action}"
          f"{', JUPYTER_GUARD_PAUSE=' + args.pause if args.pause else ''}, {fmt(args.limit)} cgroup ==", flush=True)
    s = Story(args, action)
    r = {"cells": []}
    try:
        oom_before = s.cg.oom_kills()
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            t0 = time.monotonic()
            if FIT_CELL in cell.source:
                status = fit_cell(s, cell, r)
            else:
                status = s.run_cell(cell, unexpected_pause(s, cell, r))
            took = time.monotonic() - t0
            ws = s.cg.working_set()  # as the cell ends
            r["cells"].append((cell.execution_count, status, took, ws, cell.source.splitlines()[0]))
            print(f"cell [{cell.execution_count}] {status:<18} {took:6.1f} s  working set {fmt(ws)}"
                  f"  {cell.source.splitlines()[0][:60]}", flush=True)
            if FIT_CELL in cell.source:
                r["ws_after_interrupt"] = ws
            if RELEASE_CELL in cell.source:
                r["release_status"], r["ws_after_release"] = status, ws
            if RETRAIN_CELL in cell.source:
                r["retrain_status"], r["retrain_text"] = status, strip_ansi(text_of(cell))
            if "session started" in cell.source and "print" in cell.source and cell is nb.cells[-1]:
                r["state_status"], r["state_text"] = status, strip_ansi(text_of(cell))
        r["oom_before"], r["oom_after"] = oom_before, s.cg.oom_kills()
        r["oom_kill"] = r["oom_after"] - oom_before
        r["peak"] = s.sampler.peak
        r["max_usage_raw"] = int(s.cg.read("memory.max_usage_in_bytes"))
    finally:
        s.close()
        r["guard_log"] = s.log_path.read_text()
        s.cleanup()
    out = Path(args.output)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (guarded, 2 GiB cgroup)", "language": "python", "name": "cnn-guarded"}
    nbformat.write(nb, out)
    r["notebook"] = out
    return r


def unexpected_pause(s: Story, cell, r: dict):
    """A watch for the cells that should fit: if the guard pauses one,
    note it and interrupt at once, so that the run fails instead of
    waiting for a user."""
    def watch(name, text):
        if name == "stderr" and "paused the kernel" in text and "pauses" not in r:
            r["pauses"] = f"cell [{cell.execution_count}] {cell.source.splitlines()[0][:60]}"
            s.km.interrupt_kernel()
    return watch


def fit_cell(s: Story, cell, r: dict) -> str:
    """Runs the fit cell; on the guard's pause notice, checks that the
    kernel is stopped and the OOM killer has not fired, waits as a user
    reading the notice would, and interrupts."""
    t0 = time.monotonic()
    seen = {}

    def watch(name, text):
        if name != "stderr":
            return
        if "memory warning" in text and "warned" not in seen:
            seen["warned"] = time.monotonic() - t0
        if "paused the kernel" in text and "paused" not in seen:
            seen["paused"] = time.monotonic() - t0
            seen["oom_at_pause"] = s.cg.oom_kills()
            seen["ws_at_pause"] = s.sampler.last
            time.sleep(args_reading)
            pids = s.kernel_pids()
            seen["states"] = {p: proc_state(p) for p in pids}
            seen["ws_after_wait"] = s.sampler.last
            seen["oom_before_interrupt"] = s.cg.oom_kills()
            seen["interrupted"] = time.monotonic() - t0
            s.km.interrupt_kernel()

    args_reading = s.args.reading
    oom_before = s.cg.oom_kills()
    status = s.run_cell(cell, watch)
    r["fit"] = {**seen, "status": status, "oom_kill": s.cg.oom_kills() - oom_before,
                "ended": time.monotonic() - t0, "peak": s.sampler.peak,
                "text": strip_ansi(text_of(cell))}
    return status


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--venv", type=Path, default=ROOT / "bench" / ".venv-cnn", help="where the CNN venv lives")
    p.add_argument("--limit", type=int, default=2 * GiB, help="the cgroup's limit in bytes (default 2 GiB)")
    p.add_argument("--pause", help="JUPYTER_GUARD_PAUSE for the story (default: the guard's, 95%%)")
    p.add_argument("--reading", type=float, default=3.0, help="seconds the 'user' reads the pause notice before interrupting")
    p.add_argument("--skip-control", action="store_true", help="skip the warn-only run that shows the batch is OOM-killed unguarded")
    p.add_argument("-o", "--output", default=str(ROOT / "bench" / "cnn.out.ipynb"), help="the executed notebook")
    args = p.parse_args()

    if os.geteuid() != 0:
        sys.exit("cnn_story: needs root, to create a memory cgroup under its own")
    if not any(line.split(":", 2)[1] == "memory" for line in open("/proc/self/cgroup").read().splitlines()):
        sys.exit("cnn_story: needs cgroup v1's memory controller (no 'memory' line in /proc/self/cgroup)")
    ensure_venv(args.venv)
    subprocess.run(["make", "-s", "build"], cwd=ROOT, check=True)

    t = time.monotonic()
    c = None if args.skip_control else control(args)
    r = story(args)
    report(args, c, r, time.monotonic() - t)


def report(args, c, r, total):
    f = r.get("fit", {})
    print("\n== what the user sees in the fit cell ==\n")
    print(f.get("text", "(the fit cell did not run)"))
    if c:
        print("\n== control (guard only warns): the fit cell ended ==\n")
        print(c["text"][-3000:])
    print("\n== figures ==")
    if c:
        print(f"control: oom_kill {c['oom_before']} -> {c['oom_after']}, fit cell {c['status']} after {c['seconds']:.1f} s, "
              f"peak working set {fmt(c['peak'])} of {fmt(args.limit)}")
    print(f"story: warned at {f.get('warned', float('nan')):.1f} s, paused at {f.get('paused', float('nan')):.1f} s into the fit cell; "
          f"working set at the pause {fmt(f.get('ws_at_pause', 0))}, {args.reading:.0f} s later {fmt(f.get('ws_after_wait', 0))}")
    print(f"story: kernel processes while paused: {f.get('states')}")
    print(f"story: oom_kill count at the interrupt {f.get('oom_before_interrupt')} (at start 0), "
          f"fit cell ended {f.get('status')} {f.get('ended', 0) - f.get('interrupted', 0):.1f} s after the interrupt, "
          f"oom_kill in the fit cell +{f.get('oom_kill')}")
    print(f"story: peak working set {fmt(r.get('peak', 0))} of {fmt(args.limit)} "
          f"(raw usage peak {fmt(r.get('max_usage_raw', 0))}, counts page cache); oom_kill over the story +{r.get('oom_kill')}")
    print(f"story: working set after the interrupt {fmt(r.get('ws_after_interrupt', 0))}, "
          f"after the release cell ({r.get('release_status')}) {fmt(r.get('ws_after_release', 0))}")
    if "pauses" in r:
        print(f"story: the guard also paused {r['pauses']} (interrupted by the script)")
    print(f"story: oom_kill {r.get('oom_before')} -> {r.get('oom_after')} over the story")
    acc = re.search(r"accuracy ([0-9.]+), loss ([0-9.]+)", r.get("retrain_text", ""))
    print(f"story: retrain with batch 64 {r.get('retrain_status')}: "
          f"{'accuracy ' + acc[1] + ', loss ' + acc[2] if acc else r.get('retrain_text', '').strip().splitlines()[-1:]}")
    print(f"story: state {r.get('state_status')}: {r.get('state_text', '').strip()}")
    print(f"run took {total:.0f} s; executed notebook: {r['notebook']}")
    checks = {
        "control run OOM-killed (the batch is really too large)": None if c is None else c["oom_kill"] > 0,
        "warned in the fit cell": "warned" in f,
        "paused in the fit cell": "paused" in f,
        "kernel processes stopped while paused": bool(f.get("states")) and all(st == "T" for st in f["states"].values()),
        "no OOM kill through the story": r.get("oom_kill") == 0,
        "fit cell ended by the interrupt": f.get("status") == "KeyboardInterrupt",
        "memory given back by the release cell (under half the limit)": r.get("release_status") == "ok"
            and 0 < r.get("ws_after_release", 0) < args.limit // 2,
        "no pause outside the fit cell": "pauses" not in r,
        "retrained with the smaller batch": r.get("retrain_status") == "ok",
        "earlier variables still there": r.get("state_status") == "ok",
    }
    print()
    for name, ok in checks.items():
        print(f"{'skip' if ok is None else 'ok  ' if ok else 'FAIL'} {name}")
    passed = all(ok is not False for ok in checks.values())
    print("PASS" if passed else "FAIL")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
