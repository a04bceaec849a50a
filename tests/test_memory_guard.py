"""The memory guard under a real limit, as in a container: a v1 memory
cgroup of 1.5 GiB made by the test under its own, holding the proxy, the
kernel and the client that drives them (tests/memory_driver.py, run inside
the group from its first instruction). Cells that grow fast are warned, then
paused before the OOM killer fires: the cgroup's oom_kill count never moves,
every process of the kernel's tree is stopped, the ■ button ends the cell
with KeyboardInterrupt, and a variable from an earlier cell survives. The
same cells with JUPYTER_GUARD_ACTION=interrupt end by themselves; with warn
they are warned. Last, a notebook run through nbclient gets the warning in
the cell that crossed the line, and only there.

Under 1 GiB, 64 MiB NumPy blocks still leave the session after the pause
and ■ (the pause line leaves room for the block in flight), and one fill
that cannot fit is told as such before the interrupt.

Each repetition is checked in full and the test fails with every
repetition that went wrong, so "20 of 20" is what a pass means.

Every test here runs without the allocation ceiling (without_the_ceiling):
with it, a fast cell can end with the ceiling's MemoryError before the ■
or the interrupt lands (a block refused after the thaw, or the ceiling's
hook near its line), which is issue 28's ending, tested in
tests/test_ceiling.py; the e2e stories press ■ with the ceiling on."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

from conftest import KERNEL_ENVS, REPO, TESTS, KernelEnv
from support import (INTERRUPTED, INTERRUPTED_AGAIN, LOWERED, PAUSED, UNSAVED, UNSTOPPED, WARNING, MemoryCgroup, as_jupyter_starts_it,
                     check_grow_demo, headless, stderr_of)

MiB = 1 << 20
LIMIT = 1536 * MiB
WARN_LINE = LIMIT * 80 // 100  # the guard's defaults: warn at 80%, pause at 95%
PAUSE_LINE = LIMIT * 95 // 100

DRIVER = TESTS / "memory_driver.py"

CLIENT_PYTHON = KERNEL_ENVS[0].python  # jupyter_client and nbclient live in the main venv
GROW_NOTEBOOK = REPO / "testdata" / "demo" / "grow.ipynb"


@pytest.fixture(autouse=True)
def without_the_ceiling(monkeypatch):
    """The pause and the interrupt alone (see the module's docstring). In
    CI on 2026-11-27, four of this module's cases lost a repetition each to
    the ceiling's MemoryError: the session was kept, but not by ■."""
    monkeypatch.setenv("JUPYTER_GUARD_CEILING", "off")


def reps(kenv: KernelEnv, full: int) -> int:
    """The full count on ipykernel 7, two on 6: the guard does not depend
    on the kernel's version, the kernel's handling of interrupts does."""
    return full if kenv.major >= 7 else min(full, 2)


@pytest.fixture
def cgroup(request):
    """The group, of LIMIT unless a test asks for another (indirect)."""
    cg = MemoryCgroup.create(getattr(request, "param", LIMIT))
    try:
        yield cg
    finally:
        cg.remove()


def drive(cg: MemoryCgroup, kenv: KernelEnv, tmp_path: Path, scenario: str | list[str], n: int, kernel: str = "",
          stuck: int = 0, prefill: int = 0, after: bool = False, attended: bool = True, **settings) -> dict:
    """Runs the driver inside cg on the guarded kernel (or the kernelspec
    named) with the guard's settings in its environment, and returns what
    it saw. stuck is how many iopub subscribers that never read it adds;
    prefill, after and a list of scenarios are the driver's (see there).
    attended: the kernel is a notebook's, which jupyter_server starts with
    JPY_SESSION_NAME, so a person can answer a pause; else it is started as
    nbclient starts one."""
    if attended:
        settings.setdefault("JPY_SESSION_NAME", str(tmp_path / "notebook.ipynb"))
    log = tmp_path / f"{'-'.join(scenario) if isinstance(scenario, list) else scenario}.log"
    limit = int(cg.read("memory.limit_in_bytes"))
    cfg = {"kernel": kernel or kenv.guarded, "cgroup": str(cg.dir), "log": str(log), "scenario": scenario, "reps": n,
           "target": limit * (80 + 95) // 200, "stuck": stuck, "prefill": prefill, "after": after}
    with as_jupyter_starts_it(**settings):
        r = subprocess.run(cg.wrap([str(CLIENT_PYTHON), str(DRIVER), json.dumps(cfg)]), capture_output=True,
                           text=True, timeout=600, env=dict(os.environ))
    kernel_log = log.read_text(errors="replace") if log.exists() else ""
    assert r.returncode == 0, f"driver failed: {r.stderr[-5000:]}\n--- the kernel's log:\n{kernel_log[-5000:]}"
    out = json.loads(r.stdout.splitlines()[-1])
    out["log"], out["limit"] = kernel_log, limit
    # The client, the proxy and the kernel are all inside the group.
    kernel = [p["pid"] for p in out["tree"] if p["ppid"] == out["proxy_pid"]]
    assert len(kernel) == 1, out["tree"]
    assert {out["driver_pid"], out["proxy_pid"], kernel[0]} <= set(out["in_cgroup"]), out
    assert out["set"]["status"] == "ok", out["set"]
    return out


# ------------------------------------------------------------ checks


def common(rep: dict, limit: int = LIMIT) -> list[str]:
    """What every repetition must show, whatever the action, under limit."""
    bad = []
    if "stuck" in rep:
        bad.append(rep["stuck"])
    if rep["oom_after"] != rep["oom_before"]:
        bad.append(f"oom_kill moved: {rep['oom_before']} -> {rep['oom_after']}")
    if rep["kept"]["stdout"] != "42\n":
        bad.append(f"kept is gone: {rep['kept']}")
    if rep["release"]["status"] != "ok":
        bad.append(f"releasing failed: {rep['release']}")
    if rep["collect"]["status"] != "ok":
        bad.append(f"gc.collect() failed: {rep['collect']}")
    if rep["usage_collected"] >= limit * 80 // 200:  # half the warning line
        # Still referenced: after del and a full collection the kernel holds
        # it. The release cell says whether anything besides the namespace
        # referred to the blocks.
        bad.append(f"the memory was not given back: {rep['usage_released'] / MiB:.0f} MiB in use after release, "
                   f"{rep['usage_collected'] / MiB:.0f} MiB after gc.collect(); release said {rep['release']['stdout']!r}")
    return bad


def warned_then(rep: dict, notice: str) -> list[str]:
    """The warning and then notice in the cell's stderr, each once."""
    err = rep["stderr"]
    bad = [f"{text!r} appears {err.count(text)} times in the cell" for text in (WARNING, notice)
           if err.count(text) != 1]
    if not bad and err.index(WARNING) > err.index(notice):
        bad.append("the notice came before the warning")
    return bad


def interrupted(rep: dict) -> list[str]:
    if rep["status"] == "error" and rep["reply_ename"] == "KeyboardInterrupt" and rep["errors"] == ["KeyboardInterrupt"]:
        return []
    return [f"the cell did not end with KeyboardInterrupt: {rep['status']} {rep['reply_ename']} {rep['errors']}"]


def paused(rep: dict, workers: int) -> list[str]:
    """The tree was stopped, all of it (the kernel and `workers` children),
    and stayed stopped while the driver watched."""
    bad = []
    for key in ("tree_at_pause", "tree_paused_later"):
        procs = rep.get(key, [])
        if len(procs) != 1 + workers:
            bad.append(f"{key}: {len(procs)} processes, expected {1 + workers}: {procs}")
        running = [p for p in procs if p["state"] != "T"]
        if running:
            bad.append(f"{key}: not stopped: {running}")
    grew = rep.get("usage_paused_later", 0) - rep.get("usage_at_pause", 0)
    if grew > 16 * MiB:
        bad.append(f"grew by {grew / MiB:.0f} MiB while paused")
    return bad


def paused_then_interrupted(rep: dict) -> list[str]:
    bad = warned_then(rep, PAUSED) + paused(rep, workers=0) + interrupted(rep)
    if UNSTOPPED in rep["stderr"]:
        bad.append("paused again after the interrupt, which was on its way")
    return bad


def verdict(out: dict, check) -> None:
    """Fails with every repetition that went wrong; prints the figures."""
    failures = {i: bad for i, rep in enumerate(out["reps"]) if (bad := common(rep, out["limit"]) + check(rep))}
    n = len(out["reps"])
    peaks = [r["peak"] / MiB for r in out["reps"]]
    at_pause = [r["usage_at_pause"] / MiB for r in out["reps"] if "usage_at_pause" in r]
    oom = (out["reps"][0]["oom_before"], out["reps"][-1]["oom_after"]) if n else None
    print(f"{n - len(failures)} of {n} passed; peak {min(peaks):.0f}-{max(peaks):.0f} MiB of {out['limit'] / MiB:.0f}"
          + (f"; usage at pause {min(at_pause):.0f}-{max(at_pause):.0f} MiB" if at_pause else "")
          + f"; oom_kill {oom}; {sum(r['seconds'] for r in out['reps']):.1f} s in growing cells")
    assert not failures, (f"{len(failures)} of {n} repetitions failed: {json.dumps(failures, indent=1)}"
                          f"\n--- the kernel's log:\n{out['log'][-8000:]}")


# ------------------------------------------------------------- pause


@pytest.mark.parametrize("cell", ["steady", "fast"])
def test_pause_then_interrupt_keeps_the_session(kenv, kernelspecs, cgroup, tmp_path, cell):
    """steady: 32 MiB every 20 ms; fast: 64 MiB numpy blocks back to back."""
    out = drive(cgroup, kenv, tmp_path, cell, reps(kenv, 20))
    verdict(out, paused_then_interrupted)


@pytest.mark.parametrize("cell", ["steady", "fast"])
@pytest.mark.parametrize("spec", ["{guarded}-msgfront", "{plain}-msg-guarded"], ids=["msgfront", "msg"])
def room_for_a_block(limit: int, block: int):
    """The pause left room for the block in flight, whatever part of it was
    filled, and the notice did not say it cannot finish. Room is what
    decides: a kernel paused with less survives ■ only when the pause
    happened to land late in a block. It is counted on the working set, as
    the guard and the OOM killer count it: page cache is given back first."""
    def check(rep: dict) -> list[str]:
        bad = [f"the notice says the fill cannot fit: {rep['stderr']!r}"] if UNSAVED in rep["stderr"] else []
        used = rep.get("working_set_paused_later", 0)
        if limit - used < block:
            bad.append(f"paused at {used / MiB:.0f} MiB (working set): less than a {block // MiB} MiB block left")
        return bad
    return check


@pytest.mark.parametrize("cgroup", [1024 * MiB], indirect=True, ids=["1GiB"])
def test_fast_blocks_fit_after_the_pause(kenv, kernelspecs, cgroup, tmp_path):
    """Issue 12: 64 MiB NumPy blocks back to back under 1 GiB, where the
    95% line leaves 51 MiB. ■ thaws the kernel, which finishes the block it
    was filling before it sees the interrupt: the pause line moves down by
    the cell's block, so the session is kept wherever in a block the pause
    lands. JUPYTER_GUARD_TEST_REPS=20 is the issue's count (by hand)."""
    out = drive(cgroup, kenv, tmp_path, "fast", reps(kenv, int(os.environ.get("JUPYTER_GUARD_TEST_REPS", 5))))
    room = room_for_a_block(out["limit"], 64 * MiB)
    verdict(out, lambda rep: paused_then_interrupted(rep) + room(rep))
    # Fast cells are also paused early by their rate, which can leave the
    # room by itself (main passes the room check in most repetitions, by
    # luck); the line must have moved for the blocks in some repetition all
    # the same. In every run here the first one's did: it grows slower.
    assert any(LOWERED in rep["stderr"] for rep in out["reps"]), "no pause line moved down for the blocks"


@pytest.mark.parametrize("cgroup", [1024 * MiB], indirect=True, ids=["1GiB"])
def test_a_fill_that_cannot_fit_is_told_before_the_interrupt(kenv, kernelspecs, cgroup, tmp_path):
    """A cell holds memory between the lines, then one np.ones of 128 MiB
    more than is left starts: no pause can save it, since the interrupt
    lands once the fill is done. The pause notice says so, with what it
    lacks, before the driver presses ■; then the OOM killer takes the
    kernel, once (the test fails if the fill fitted after all). With the
    ceiling, the fill is refused as it is asked for (tests/test_ceiling.py)."""
    out = drive(cgroup, kenv, tmp_path, "too-big", reps(kenv, 2))
    n = len(out["reps"])
    failures = {}
    for i, rep in enumerate(out["reps"]):
        bad = [] if rep["hold"]["status"] == "ok" else [f"the holding cell failed: {rep['hold']}"]
        if "stuck" in rep:
            bad.append(rep["stuck"])
        err = rep["stderr"]
        if PAUSED not in err or UNSAVED not in err or "short)" not in err:
            bad.append(f"no notice that the fill cannot fit: {err!r}")
        # Only freeing memory outside the kernel may be said to save it.
        promises = [line for line in err.splitlines() if ("survive" in line or "are kept" in line)
                    and not line.lstrip().startswith("Or free")]
        if promises:
            bad.append(f"a notice promises survival: {promises}")
        if rep["oom_after"] != rep["oom_before"] + 1:
            bad.append(f"oom_kill {rep['oom_before']} -> {rep['oom_after']}: the fill was to be killed, once")
        if rep["status"] != "error":
            bad.append(f"the cell ended {rep['status']}")
        if bad:
            failures[i] = bad
    print(f"{n - len(failures)} of {n} told before the interrupt")
    assert not failures, f"{json.dumps(failures, indent=1)}\n--- the kernel's log:\n{out['log'][-8000:]}"


@pytest.mark.parametrize("cell", ["steady", "fast"])
@pytest.mark.parametrize("spec", ["{guarded}-msgfront", "{plain}-msg-guarded"], ids=["msgfront", "msg"])
def test_pause_then_interrupt_by_message(kenv, kernelspecs, cgroup, tmp_path, spec, cell):
    """The ■ button as an interrupt_request message: to the proxy of a
    kernel that takes signals (-msgfront), and through the proxy to a kernel
    that takes messages (-msg), which must be thawed to read it."""
    name = spec.format(guarded=kenv.guarded, plain=kenv.id)
    out = drive(cgroup, kenv, tmp_path, cell, reps(kenv, 3), kernel=name)
    verdict(out, paused_then_interrupted)


def test_a_subscriber_that_does_not_read_does_not_silence_the_guard(kenv, kernelspecs, cgroup, tmp_path):
    """A raw SUB on iopub that never reads, and a cell that prints as it
    grows: the warning and the pause notice still reach the reading client,
    and the pause comes before the OOM killer (the notices used to wait on
    the stuck subscriber's socket, and the kernel was OOM-killed)."""
    out = drive(cgroup, kenv, tmp_path, "printing", reps(kenv, 5), stuck=1)
    verdict(out, paused_then_interrupted)


def test_pause_stops_a_multiprocessing_worker(kenv, kernelspecs, cgroup, tmp_path):
    """The worker allocates, the kernel waits on it: the tree is measured
    and paused as one, and the interrupt ends the cell; the worker is then
    terminated and gone."""
    out = drive(cgroup, kenv, tmp_path, "worker", reps(kenv, 5))

    def check(rep):
        bad = warned_then(rep, PAUSED) + paused(rep, workers=1) + interrupted(rep)
        if len(rep["tree_released"]) != 1:
            bad.append(f"the worker is still there: {rep['tree_released']}")
        return bad

    verdict(out, check)


@pytest.mark.parametrize("action", ["pause", "interrupt"])
def test_an_interrupt_that_does_not_stop_the_cell_is_followed_by_another_stop(kenv, kernelspecs, cgroup, tmp_path, action):
    """The cell swallows the first SIGINT and grows on: the guard stops it
    again before the limit and says the interrupt did not stop it; the
    second interrupt ends the cell and the session is kept."""
    scenario = "swallowed" if action == "pause" else "swallowed-uninterrupted"
    out = drive(cgroup, kenv, tmp_path, scenario, reps(kenv, 3), JUPYTER_GUARD_ACTION=action)
    first, again = (PAUSED, UNSTOPPED) if action == "pause" else (INTERRUPTED, INTERRUPTED_AGAIN)

    def check(rep):
        err = rep["stderr"]
        bad = [f"{text!r} appears {err.count(text)} times in the cell" for text in (first, again) if err.count(text) != 1]
        if not bad and err.index(first) > err.index(again):
            bad.append("the second stop came first")
        return bad + interrupted(rep)

    verdict(out, check)


# ------------------------------------------------------- other actions


@pytest.mark.parametrize("cell", ["steady", "fast"])
def test_action_interrupt_ends_the_cell(kenv, kernelspecs, cgroup, tmp_path, cell):
    """The interrupt action ends the cell with KeyboardInterrupt."""
    out = drive(cgroup, kenv, tmp_path, f"{cell}-uninterrupted", reps(kenv, 5), JUPYTER_GUARD_ACTION="interrupt")

    def check(rep):
        bad = warned_then(rep, INTERRUPTED) + interrupted(rep)
        if PAUSED in rep["stderr"]:
            bad.append("paused although the action is interrupt")
        return bad

    verdict(out, check)


def test_action_warn_only_warns(kenv, kernelspecs, cgroup, tmp_path):
    """The cell grows past the warning line, stays a while below the pause
    line and ends by itself: warned, neither paused nor interrupted. (No OOM
    kill on purpose: test_diagnosis has the one the suite needs.)"""
    out = drive(cgroup, kenv, tmp_path, "bounded", reps(kenv, 2), JUPYTER_GUARD_ACTION="warn")

    def check(rep):
        bad = []
        if rep["stderr"].count(WARNING) != 1:
            bad.append(f"warned {rep['stderr'].count(WARNING)} times: {rep['stderr']!r}")
        if PAUSED in rep["stderr"] or INTERRUPTED in rep["stderr"]:
            bad.append(f"acted although the action is warn: {rep['stderr']!r}")
        if rep["status"] != "ok" or not rep["stdout"].startswith("grew to "):
            bad.append(f"the cell did not finish by itself: {rep['status']} {rep['errors']} {rep['stdout']!r}")
        if not WARN_LINE <= rep["peak"] < PAUSE_LINE:
            bad.append(f"peak {rep['peak'] / MiB:.0f} MiB is not between the lines")
        return bad

    verdict(out, check)


# ------------------------------------------------------------ notebook


def test_notebook_warning_in_the_right_cell(kenv, kernelspecs):
    """testdata/demo/grow.ipynb through nbclient, as nbconvert --execute
    runs it, under a 1 GiB budget on the kernel's tree: the 700 MiB cell
    ([3]) is warned, no other cell is, and every cell ran."""
    nb = nbformat.read(GROW_NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    try:
        with headless(JUPYTER_GUARD_LIMIT="1GiB"):
            # Every cell takes well under a second; only a paused kernel waits.
            NotebookClient(nb, kernel_name=kenv.guarded, timeout=30, startup_timeout=60).execute()
    except CellTimeoutError:
        told = {c.execution_count: stderr_of(c) for c in code if PAUSED in stderr_of(c)}
        pytest.fail(f"the guard paused a cell that stops growing by itself: {told}" if told else "a cell timed out")
    nbformat.validate(nb)
    check_grow_demo(nb)
