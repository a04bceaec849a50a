"""Issue 12 on a real cgroup v2 memory controller: in the user-mode-linux
guest of the team's run-in-v2.sh (tests/guest.py), a notebook whose
cell grows past the limit runs under `guardctl run` with no --limit, in each
layout machines really have (tests/v2_layout.py sets them up). The guard must
find the v2 limit itself, name it and where it is set in its start-up line,
stop the cell with its notice, and the OOM killer must never act. Where the
limit lies above what a container's own cgroup mount shows, the start-up
line says the guard cannot see it. An OOM kill the guard only warned about
is diagnosed from memory.events alone (the guard cannot read the kernel
log, as in most containers) and names the limit.

The guest fills memory at 9-130 MiB/s (9 on 2026-11-27) and boots in
2-10 s: the limits are the harness's smallest, 256 MiB, and each case takes
40-90 s.

    .venv/bin/python -m pytest tests/test_cgroup_v2.py"""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import KERNEL_ENVS, REPO, TESTS
from guest import need_guest, run_in_v2
from support import NEAR, REFUSED, WARNING, as_jupyter_starts_it

MiB = 1 << 20
GROW = REPO / "testdata" / "notebooks" / "cgroup-v2" / "grow.ipynb"  # 16 MiB blocks up to 1 GiB
CLEAN = REPO / "testdata" / "notebooks" / "run" / "clean.ipynb"
# Generous: a slow guest must not fail a case that would pass.
GUEST_SECONDS = 300
KENV = KERNEL_ENVS[0]


def in_guest(tmp_path, jupyter_dirs, guardctl, options: list[str], **cfg) -> dict:
    """Runs v2_layout.py in the guest with the harness's options; returns
    its report and the notebook guardctl wrote."""
    out = tmp_path / "out.ipynb"
    cfg = {"guardctl": str(guardctl), "timeout": GUEST_SECONDS - 30,
           "args": ["--kernel", KENV.id, "-o", str(out), *cfg.pop("args", [])], **cfg}
    with as_jupyter_starts_it(PATH=f"{KENV.venv / 'bin'}:{os.environ['PATH']}"):
        r = run_in_v2([*options, "-t", str(GUEST_SECONDS)], [str(KENV.python), str(TESTS / "v2_layout.py"), json.dumps(cfg)],
                      workdir=tmp_path, shown=[jupyter_dirs["JUPYTER_DATA_DIR"].parent, guardctl.parent],
                      timeout=GUEST_SECONDS + 60)
    assert r.returncode == 0 and r.stdout.strip(), f"the guest run failed ({r.returncode}): {r.stderr[-5000:]}\n{r.stdout[-3000:]}"
    report = json.loads(r.stdout.splitlines()[-1])
    report["notebook"] = json.loads(out.read_text()) if out.exists() else None
    return report


def startup_line(report: dict) -> str:
    """guardctl run's line about the budget the guard holds the kernel to."""
    lines = [line for line in report["stderr"].splitlines() if line.startswith("guardctl run: budget ")]
    assert lines, f"no budget line from guardctl run:\n{report['stderr'][-5000:]}"
    return lines[0]


def cell_text(report: dict, index: int) -> str:
    assert report["notebook"], f"guardctl wrote no notebook:\n{report['stderr'][-5000:]}"
    text = []
    for o in report["notebook"]["cells"][index]["outputs"]:
        if o["output_type"] == "stream":
            text.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
        elif o["output_type"] == "error":
            text.append("\n".join([f"{o['ename']}: {o['evalue']}", *o["traceback"]]))
    return "".join(text)


@pytest.mark.timeout(GUEST_SECONDS + 90)
@pytest.mark.parametrize("layout,options,source", [
    ("own", ["-m", "256M"], "cgroup v2 memory.max at /job"),
    ("nomem", ["-m", "256M"], "cgroup v2 memory.max at /job"),
    ("cgroupns", ["-m", "256M"], "cgroup v2 memory.max at /job"),
    ("ctr", ["-m", "256M"], "cgroup v2 memory.max at /"),
    # With memory.oom.group set, as Kubernetes 1.28+ sets it on a container.
    ("own", ["-m", "384M", "-H", "256M", "-S", "memory.oom.group=1"], "cgroup v2 memory.high at /job"),
], ids=["limited-group", "child-without-memory-controller", "cgroupns-without-mount", "cgroupns-with-mount", "memory.high"])
def test_a_growing_cell_is_stopped_at_the_v2_limit(kernelspecs, jupyter_dirs, guardctl, tmp_path, layout, options, source):
    need_guest()
    report = in_guest(tmp_path, jupyter_dirs, guardctl, options, layout=layout, notebook=str(GROW))
    line = startup_line(report)
    assert f" from {source}: " in line and "allocations fail past" in line and line.endswith("measured on cgroup"), line
    said = "memory guard: memory.oom.group is set at /job: an OOM kill there ends every process in it"
    assert (said in report["stderr"]) == ("memory.oom.group=1" in options), report["stderr"][-3000:]
    text = cell_text(report, 2)
    # Nobody is there to answer a pause: the ceiling refuses the block
    # that does not fit (issue 28).
    assert WARNING in text and (REFUSED in text or NEAR in text), f"the cell's output:\n{text}\n--- guardctl:\n{report['stderr'][-5000:]}"
    assert "MemoryError" in report["stdout"] + report["stderr"] and report["returncode"] == 1, report["stderr"][-3000:]
    assert report["events"]["oom_kill"] == 0, f"the OOM killer acted: {report['events']}\n{report['stderr'][-5000:]}"


@pytest.mark.timeout(GUEST_SECONDS + 90)
def test_a_limit_above_the_containers_cgroup_mount_is_said_to_be_unseen(kernelspecs, jupyter_dirs, guardctl, tmp_path):
    """memory.max on job, the container's namespace and cgroup2 mount rooted
    at job/leaf: the limit cannot be read there, and the guard says so
    rather than guard host memory in silence."""
    need_guest()
    report = in_guest(tmp_path, jupyter_dirs, guardctl, ["-m", "256M", "-l", "leaf"], layout="ctr-above", notebook=str(CLEAN))
    line = startup_line(report)
    assert " from host memory; limits above /, the top of what this cgroup mount shows (a cgroup namespace's root), cannot be " \
           "read: set JUPYTER_GUARD_LIMIT to the real limit: " in line, line
    # The proxy says it too, since the user must act: it is not a debug line.
    assert "memory guard: budget " in report["stderr"] and "cannot be read" in report["stderr"], report["stderr"][-3000:]
    assert report["returncode"] == 0, report["stderr"][-3000:]


@pytest.mark.timeout(GUEST_SECONDS + 90)
def test_an_oom_kill_is_diagnosed_from_memory_events(kernelspecs, jupyter_dirs, guardctl, tmp_path, monkeypatch):
    """action=warn and no allocation ceiling let the cell reach the limit;
    the kernel log is hidden from the guard, so only memory.events of the
    kernel's (charged) group tells that the OOM killer acted."""
    need_guest()
    monkeypatch.setenv("JUPYTER_GUARD_CEILING", "off")
    report = in_guest(tmp_path, jupyter_dirs, guardctl, ["-m", "256M"], layout="nomem", notebook=str(GROW), kmsg=False,
                      args=["--action", "warn"])
    assert report["events"]["oom_kill"] >= 1, report["events"]
    text = cell_text(report, 2)
    assert "killed by the Linux out-of-memory killer" in text, f"the cell's output:\n{text}\n--- guardctl:\n{report['stderr'][-5000:]}"
    assert "the limit is 256 MiB (cgroup v2 memory.max at /job)" in text, text
    # The kernel log was there to read, and empty: the counter told.
    assert "OOM kills in the kernel's cgroup while it ran: 1 (oom_kill 0 -> 1)" in text, text


@pytest.mark.timeout(GUEST_SECONDS + 90)
def test_sigkill_of_the_proxy_leaves_nothing_in_the_guest(guardctl, tmp_path):
    """tests/test_lifecycle.py's SIGKILL of the proxy, run by pytest inside
    the guest: the keeper ends the kernel's forked worker, its job in a
    session of its own and its stopped process there too."""
    need_guest()
    r = run_in_v2(["-m", "512M", "-t", str(GUEST_SECONDS), "-e", f"JUPYTER_GUARD_BIN={guardctl}"],
                  [str(KENV.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "pytest"),
                   str(TESTS / "test_lifecycle.py"), "-k", f"leaves_none and {KENV.id}"],
                  workdir=tmp_path, shown=[guardctl.parent], timeout=GUEST_SECONDS + 60)
    # Two cases: the kernel started from a guarded spec and by the provisioner.
    assert r.returncode == 0 and re.search(r"^2 passed", r.stdout, re.M), f"{r.stdout[-5000:]}\n{r.stderr[-3000:]}"
