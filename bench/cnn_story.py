"""The seeds' story, for real: a Keras CNN whose batch is too large for a
2 GiB memory limit, trained on the guarded kernel as users write it.

Runs testdata/demo/cnn.ipynb cell by cell on the guarded kernel inside a
v1 memory cgroup of its own with a 2 GiB limit (proxy and kernel in it from
birth, as in a container). The notebook is TensorFlow's defaults: Keras
compiles each training step into one TensorFlow call, oneDNN is on, and no
cell cleans up after a failed one. The kernel is started as JupyterLab
starts a notebook's (JPY_SESSION_NAME set: a person can answer a pause).
The fit cell with batch 768 must be warned, then paused, unless it is
refused before the pause line; at a pause the script presses ■
(interrupts the kernel) as the user would. The compiled step never sees
the interrupt: it must run on to the limit the guard gave TensorFlow's
allocator and end there with a memory error (ResourceExhaustedError, or
MemoryError) and the guard's note, not with an OOM kill. Then
fit(batch_size=64) must train, and the last cell must find every earlier
variable; the cgroup's oom_kill must not move. With --headless the kernel
is started as nbclient or papermill start one (no JPY_SESSION_NAME): no
pause is made and the limit alone stops the fit.

First, a control run with the ceiling off and JUPYTER_GUARD_ACTION=warn
shows that the same fit is OOM-killed when nothing stops it. Prints what
the user sees in the fit cell, each run's figures and checks, a summary
line per run and the total, and saves the last run's executed notebook. A
pause in any other cell is interrupted at once and fails the run (rather
than waiting for a user who is not there).

    python3 bench/cnn_story.py [--runs N] [--headless] [--skip-control] [-o OUT.ipynb]

Needs: root (it creates a memory cgroup under its own), cgroup v1 memory,
Go (make build), Python 3.10+ with venv, and PyPI on the first run: it
creates bench/.venv-cnn from requirements/cnn.txt (tensorflow-cpu, about
1.5 GB) and re-runs itself there. Not part of make test: too heavy.
"""

import argparse
import ast
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
STATE_CELL = "session started"  # the last cell prints every earlier variable
# The memory errors a refused allocation ends a TensorFlow fit with.
MEMORY_ERRORS = ("MemoryError", "ResourceExhaustedError")


def notice_texts(*names: str) -> list[str]:
    """How the guard's notices begin, from tests/support.py, which the
    tests share (it imports pytest, which this venv has not: read, not
    imported)."""
    tree = ast.parse((ROOT / "tests" / "support.py").read_text())
    found = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)}
    return [ast.literal_eval(found[n]) for n in names]


WARNING, PAUSED, UNSTOPPED, REFUSED, NEAR = notice_texts("WARNING", "PAUSED", "UNSTOPPED", "REFUSED", "NEAR")
PAUSE_HEADS = (PAUSED, UNSTOPPED)


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
    """Samples the cgroup's working set every 10 ms: the latest and the peak."""

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
    """One guarded kernel in its own cgroup, running the notebook's cells.
    attended: started as JupyterLab starts a notebook's kernel (its
    JPY_SESSION_NAME names the notebook), so the guard may pause it."""

    def __init__(self, args, settings: dict, attended: bool):
        import nbformat  # from the venv
        from jupyter_client import KernelManager

        self.nbformat, self.args = nbformat, args
        self.tmp = Path(tempfile.mkdtemp(prefix="cnn-story-"))
        self.cg = MemoryCgroup.create(args.limit, prefix="cnn-story")
        self.log_path = self.tmp / "kernel.log"
        spec = {
            "argv": self.cg.wrap([str(ROOT / "bin" / "guardctl"), "kernel", "-f", "{connection_file}", "--",
                                  sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]),
            "display_name": "Python 3 (guarded, 2 GiB cgroup)",
            "language": "python",
            # No JUPYTER_GUARD_LIMIT: the guard finds the cgroup's limit itself.
            "env": settings,
        }
        spec_dir = self.tmp / "share" / "kernels" / "cnn-guarded"
        spec_dir.mkdir(parents=True)
        (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
        os.environ["JUPYTER_PATH"] = str(self.tmp / "share")
        os.environ["JUPYTER_RUNTIME_DIR"] = str(self.tmp / "runtime")
        env = {k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"}
        if attended:
            env["JPY_SESSION_NAME"] = str(NOTEBOOK)  # what jupyter_server sets for a notebook's kernel
        self.km = KernelManager(kernel_name="cnn-guarded")
        self.log = open(self.log_path, "w")
        self.km.start_kernel(stdout=self.log, stderr=self.log, env=env)
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
        """The kernel's processes: everything in the cgroup but guardctl's
        (the proxy, and the keeper it starts beside the kernel)."""
        guardctl = str(ROOT / "bin" / "guardctl")

        def ours(pid):
            try:
                return os.readlink(f"/proc/{pid}/exe") == guardctl
            except OSError:
                return True  # gone
        return [p for p in self.cg.procs() if not ours(p)]

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
                # Where nobody started it for a notebook, the proxy ends with
                # its kernel, and no idle comes.
                if not self.km.is_alive():
                    return "KernelDied"
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


def error_of(cell) -> str:
    """The error a cell ended with, as its last traceback line says it."""
    errors = [o for o in cell.outputs if o.output_type == "error"]
    return f"{errors[-1].ename}: {errors[-1].evalue}"[:120] if errors else ""


def strip_ansi(s: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", s)


def fmt(n: int) -> str:
    return f"{n / MiB:,.0f} MiB"


def control(args) -> dict:
    """The fit cell with neither the ceiling nor a pause: is the batch
    really too large for the limit?"""
    import nbformat
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    print(f"\n== control: JUPYTER_GUARD_CEILING=off, JUPYTER_GUARD_ACTION=warn, {fmt(args.limit)} cgroup ==", flush=True)
    s = Story(args, {"JUPYTER_GUARD_ACTION": "warn", "JUPYTER_GUARD_CEILING": "off"}, attended=True)
    try:
        before = s.cg.oom_kills()
        for cell in code:
            t = time.monotonic()
            status = s.run_cell(cell)
            if FIT_CELL in cell.source:
                return {"oom_kill": s.cg.oom_kills() - before, "oom_before": before, "oom_after": s.cg.oom_kills(),
                        "status": status, "seconds": time.monotonic() - t, "peak": s.sampler.peak,
                        "text": strip_ansi(text_of(cell))}
            if status != "ok":
                raise RuntimeError(f"control: setup cell failed: {status}\n{text_of(cell)}")
    finally:
        s.close()
        s.cleanup()


def story(args, run: int) -> dict:
    """One run of the whole notebook; what it measured."""
    import nbformat
    nb = nbformat.read(NOTEBOOK, as_version=4)
    settings = {"JUPYTER_GUARD_ACTION": "pause", **({"JUPYTER_GUARD_PAUSE": args.pause} if args.pause else {})}
    who = "headless (no JPY_SESSION_NAME)" if args.headless else "a notebook's kernel (JPY_SESSION_NAME set)"
    print(f"\n== story, run {run} of {args.runs}: {who}, "
          f"{', '.join(f'{k}={v}' for k, v in settings.items())}, {fmt(args.limit)} cgroup ==", flush=True)
    started = time.monotonic()
    r = {"cells": [], "fit": {}}
    s = Story(args, settings, attended=not args.headless)
    try:
        r["oom_before"] = s.cg.oom_kills()
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
            print(f"cell [{cell.execution_count}] {status:<22} {took:6.1f} s  working set {fmt(ws)}"
                  f"  {cell.source.splitlines()[0][:60]}", flush=True)
            if FIT_CELL in cell.source:
                r["ws_after_fit"] = ws
            if RETRAIN_CELL in cell.source:
                r["retrain_status"], r["retrain_text"] = status, strip_ansi(text_of(cell))
            if STATE_CELL in cell.source and cell is nb.cells[-1]:
                r["state_status"], r["state_text"] = status, strip_ansi(text_of(cell))
        r["oom_after"] = s.cg.oom_kills()
        r["peak"] = s.sampler.peak
    except Exception as e:  # a hang or a lost kernel fails this run, not the others
        r["error"] = f"{type(e).__name__}: {e}"
        r["oom_after"] = s.cg.oom_kills()
    finally:
        s.close()
        r["guard_log"] = s.log_path.read_text()
        r["log"] = Path(args.output).with_suffix(f".run{run}.log")
        shutil.copyfile(s.log_path, r["log"])
        s.cleanup()
    r["seconds"] = time.monotonic() - started
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (guarded, 2 GiB cgroup)", "language": "python", "name": "cnn-guarded"}
    nbformat.write(nb, args.output)
    return r


def unexpected_pause(s: Story, cell, r: dict):
    """A watch for the cells that should fit: if the guard pauses one,
    note it and interrupt at once, so that the run fails instead of
    waiting for a user."""
    def watch(name, text):
        if name == "stderr" and any(h in text for h in PAUSE_HEADS) and "pauses" not in r:
            r["pauses"] = f"cell [{cell.execution_count}] {cell.source.splitlines()[0][:60]}"
            s.km.interrupt_kernel()
    return watch


def fit_cell(s: Story, cell, r: dict) -> str:
    """Runs the fit cell. At each pause notice it checks that the kernel is
    stopped and the OOM killer has not fired, waits as a user reading the
    notice would, and presses ■ (interrupts the kernel, as JupyterLab
    does: SIGINT to the kernel's process group)."""
    t0 = time.monotonic()
    f = r["fit"]
    f["pauses"] = 0

    def watch(name, text):
        if name != "stderr":
            return
        if WARNING in text and "warned" not in f:
            f["warned"] = time.monotonic() - t0
        if any(h in text for h in PAUSE_HEADS):
            f["pauses"] += 1
            if "paused" not in f:
                f["paused"], f["ws_at_pause"], f["oom_at_pause"] = time.monotonic() - t0, s.sampler.last, s.cg.oom_kills()
            time.sleep(s.args.reading)
            f.setdefault("states", {p: proc_state(p) for p in s.kernel_pids()})
            f.setdefault("interrupted", time.monotonic() - t0)
            s.km.interrupt_kernel()

    status = s.run_cell(cell, watch)
    f.update(status=status, error=error_of(cell), ended=time.monotonic() - t0, peak=s.sampler.peak,
             text=strip_ansi(text_of(cell)))
    stderr = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr")
    f["note"] = "refused" if REFUSED in stderr else "near" if NEAR in stderr else ""
    return status


def checks(args, r: dict) -> dict:
    """What a run must show, by name: True, False, or None (not asked)."""
    f = r["fit"]
    attended = not args.headless
    # TensorFlow's allocator, held to a limit by the guard, may end the step
    # before the warning or the pause line (it grows 300 MiB/s and more):
    # then there is nothing to warn of or pause, and the note says it all.
    refused = f.get("status") in MEMORY_ERRORS and f.get("note") == "refused"
    return {
        "no error in the script": "error" not in r,
        "warned in the fit cell (or refused before the warning)": "warned" in f or refused,
        "paused in the fit cell (or refused before the pause line)" if attended else "no pause (nobody can answer one)":
            f.get("pauses", 0) > 0 or refused if attended else f.get("pauses") == 0,
        "kernel processes stopped while paused": (bool(f.get("states")) and all(st == "T" for st in f["states"].values()))
            if attended and f.get("pauses") else None,
        "fit cell ended with a memory error": f.get("status") in MEMORY_ERRORS,
        "the guard's note under the fit cell": bool(f.get("note")),
        "no OOM kill through the run": r.get("oom_before") == r.get("oom_after"),
        "no pause outside the fit cell": "pauses" not in r,
        "retrained with the smaller batch": r.get("retrain_status") == "ok",
        "earlier variables still there": r.get("state_status") == "ok",
    }


def at(f: dict, key: str) -> str:
    """When something happened in the fit cell: "12.3 s", or "never"."""
    return f"{f[key]:.1f} s" if key in f else "never"


def describe(args, r: dict, ok: dict):
    f = r["fit"]
    print(f"fit cell: warned at {at(f, 'warned')}, "
          + (f"paused at {at(f, 'paused')} at {fmt(f.get('ws_at_pause', 0))} "
             f"(processes {f.get('states')}), ■ at {at(f, 'interrupted')}, {f.get('pauses')} pause(s); "
             if not args.headless else f"{f.get('pauses')} pause(s); ")
          + f"ended {f.get('status')} at {f.get('ended', 0):.1f} s, note: {f.get('note') or 'none'}; "
          f"peak {fmt(r.get('peak', f.get('peak', 0)))}; working set after it {fmt(r.get('ws_after_fit', 0))}")
    print(f"fit cell's error: {f.get('error')}")
    acc = re.search(r"accuracy ([0-9.]+), loss ([0-9.]+)", r.get("retrain_text", ""))
    print(f"retrain with batch 64 {r.get('retrain_status')}: "
          f"{'accuracy ' + acc[1] + ', loss ' + acc[2] if acc else r.get('retrain_text', '').strip().splitlines()[-3:]}")
    print(f"state {r.get('state_status')}: {r.get('state_text', '').strip()}")
    print(f"oom_kill {r.get('oom_before')} -> {r.get('oom_after')}; run took {r['seconds']:.0f} s")
    if "pauses" in r:
        print(f"the guard also paused {r['pauses']} (interrupted by the script)")
    if "error" in r:
        print(f"script: {r['error']}")
    for name, good in ok.items():
        print(f"{'skip' if good is None else 'ok  ' if good else 'FAIL'} {name}")


def summary(args, r: dict, passed: bool, run: int) -> str:
    f = r["fit"]
    end = f.get("status", "?") + (f" + {f['note']} note" if f.get("note") else " (no note)")
    acc = re.search(r"accuracy ([0-9.]+)", r.get("retrain_text", ""))
    return (f"run {run}: {'PASS' if passed else 'FAIL'}  fit cell {end} after {f.get('ended', 0):.1f} s"
            + (f" (paused {at(f, 'paused')}, ■ {at(f, 'interrupted')})" if not args.headless else "")
            + f"; peak {fmt(r.get('peak', 0))}; batch 64 {r.get('retrain_status')}"
            + (f" (accuracy {acc[1]})" if acc else "")
            + f"; variables {r.get('state_status')}; oom_kill {r.get('oom_before')} -> {r.get('oom_after')}; {r['seconds']:.0f} s")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--venv", type=Path, default=ROOT / "bench" / ".venv-cnn", help="where the CNN venv lives")
    p.add_argument("--limit", type=int, default=2 * GiB, help="the cgroup's limit in bytes (default 2 GiB)")
    p.add_argument("--pause", help="JUPYTER_GUARD_PAUSE for the story (default: the guard's, 95%%)")
    p.add_argument("--reading", type=float, default=3.0, help="seconds the 'user' reads the pause notice before pressing ■")
    p.add_argument("--runs", type=int, default=1, help="how many story runs (default 1)")
    p.add_argument("--headless", action="store_true",
                   help="start the kernel as nbclient or papermill do (no JPY_SESSION_NAME): no pause, the ceiling stops the fit")
    p.add_argument("--skip-control", action="store_true", help="skip the run with the ceiling off and action warn, which is OOM-killed")
    p.add_argument("-o", "--output", default=str(ROOT / "bench" / "cnn.out.ipynb"), help="the last run's executed notebook; each run's log beside it (OUT.runN.log)")
    args = p.parse_args()

    if os.geteuid() != 0:
        sys.exit("cnn_story: needs root, to create a memory cgroup under its own")
    if not any(line.split(":", 2)[1] == "memory" for line in open("/proc/self/cgroup").read().splitlines()):
        sys.exit("cnn_story: needs cgroup v1's memory controller (no 'memory' line in /proc/self/cgroup)")
    ensure_venv(args.venv)
    subprocess.run(["make", "-s", "build"], cwd=ROOT, check=True)
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"cnn_story: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}, "
          f"python3 bench/cnn_story.py {' '.join(sys.argv[1:])}", flush=True)

    c = None if args.skip_control else control(args)
    if c:
        print(f"control: fit cell {c['status']} after {c['seconds']:.1f} s, oom_kill {c['oom_before']} -> {c['oom_after']}, "
              f"peak working set {fmt(c['peak'])} of {fmt(args.limit)}\n{c['text'][-1500:]}", flush=True)
    lines, shown = [], False
    for run in range(1, args.runs + 1):
        r = story(args, run)
        ok = checks(args, r)
        passed = all(good is not False for good in ok.values())
        if not shown or not passed:  # what the user sees, once, and for every failure
            print("\n-- what the user sees in the fit cell --\n" + r["fit"].get("text", "(the fit cell did not run)"))
            shown = True
        if not passed:
            print(f"-- the guard's log ({r['log']}), last lines --\n" + r["guard_log"][-4000:])
        describe(args, r, ok)
        lines.append((passed, summary(args, r, passed, run)))
        print(lines[-1][1], flush=True)

    print("\n== summary ==")
    if c:
        print(f"control (ceiling off, action warn): {'OOM-killed' if c['oom_kill'] > 0 else 'NOT OOM-killed'}, "
              f"fit cell {c['status']} after {c['seconds']:.1f} s, peak {fmt(c['peak'])}")
    for _, line in lines:
        print(line)
    good = sum(passed for passed, _ in lines)
    print(f"{good} of {len(lines)} runs PASS{'' if c is None else '; control ' + ('PASS' if c['oom_kill'] > 0 else 'FAIL')}")
    sys.exit(0 if good == len(lines) and (c is None or c["oom_kill"] > 0) else 1)


if __name__ == "__main__":
    main()
