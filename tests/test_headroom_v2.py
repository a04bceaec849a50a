"""Issue 12 on a real cgroup v2 memory controller: the user-mode-linux guest
of ../shared/cgroup-v2/run-in-v2.sh runs tests/memory_driver.py in its group
with memory.max = 512 MiB, on the guarded ipykernel 7. 32 MiB NumPy blocks
back to back, pause then ■: at 512 MiB the 95% line leaves 25.6 MiB, less
than a block, and every repetition must keep the session with a block's
room left at the pause. The guest fills memory at 5-130 MiB/s (5-9 on
2026-11-27, when 5 repetitions overran 240 s; at 256 MiB the kernel's own
130-170 MiB leave too little to fill) and has one CPU: two repetitions,
one to three minutes.

    .venv/bin/python -m pytest tests/test_headroom_v2.py

It is skipped where the harness is missing (see tests/guest.py)."""

from __future__ import annotations

import json

import pytest

from conftest import KERNEL_ENVS
from guest import need_guest, run_in_v2
from support import as_jupyter_starts_it
from test_memory_guard import CLIENT_PYTHON, DRIVER, MiB, paused_then_interrupted, room_for_a_block, verdict

LIMIT = 512 * MiB
BLOCK = 32 * MiB
REPS = 2
# The guest's time limit for the driver, and the test's, a minute more for
# booting and tearing down the guest.
GUEST_SECONDS = 420


@pytest.mark.timeout(GUEST_SECONDS + 60)
def test_blocks_under_memory_max_keep_the_session(kernelspecs, jupyter_dirs, guardctl, tmp_path):
    need_guest()
    kenv = KERNEL_ENVS[0]
    log = tmp_path / "fast32.log"
    cfg = {"kernel": kenv.guarded, "cgroup": "/sys/fs/cgroup/job", "v2": True, "log": str(log),
           "scenario": "fast32", "reps": REPS}
    jupyter_root = jupyter_dirs["JUPYTER_DATA_DIR"].parent
    with as_jupyter_starts_it(JPY_SESSION_NAME=str(tmp_path / "notebook.ipynb")):  # a person can answer a pause
        r = run_in_v2(["-m", str(LIMIT), "-t", str(GUEST_SECONDS)], [str(CLIENT_PYTHON), str(DRIVER), json.dumps(cfg)],
                      workdir=tmp_path, shown=[jupyter_root, guardctl.parent], timeout=GUEST_SECONDS + 60)
    kernel_log = log.read_text(errors="replace") if log.exists() else ""
    assert r.returncode == 0, (f"the guest run failed ({r.returncode}): {r.stderr[-5000:]}\n{r.stdout[-2000:]}"
                               f"\n--- the kernel's log:\n{kernel_log[-5000:]}")
    out = json.loads(r.stdout.splitlines()[-1])
    out["log"], out["limit"] = kernel_log, LIMIT
    assert len(out["reps"]) == REPS, out
    room = room_for_a_block(LIMIT, BLOCK)
    verdict(out, lambda rep: paused_then_interrupted(rep) + room(rep))
