"""Running a command in the cgroup v2 guest: the team's run-in-v2.sh, which
CGROUP_V2_HARNESS names (make test finds it in ../shared/cgroup-v2), boots a user-mode-linux kernel from this machine's own filesystem and runs
the command in a real v2 group with the memory.max and memory.high given.
The guest has one CPU, no PSI, and fills memory at only 30-130 MiB/s: keep
limits at 256-512 MiB and the cases few."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from support import missing

HARNESS = os.environ.get("CGROUP_V2_HARNESS", "")
UML = Path("/usr/bin/linux.uml")  # Debian's user-mode-linux, which .ci/run installs


def need_guest() -> None:
    if not UML.exists():
        missing(f"user-mode-linux ({UML}) for the cgroup v2 guest")
    if not HARNESS:
        pytest.skip("no cgroup v2 harness: set CGROUP_V2_HARNESS to run-in-v2.sh (make test finds it in ../shared/cgroup-v2)")
    if not os.access(HARNESS, os.X_OK):
        missing(f"the cgroup v2 harness CGROUP_V2_HARNESS={HARNESS}")


def run_in_v2(options: list[str], cmd: list[str], *, workdir: Path, shown: list[Path], timeout: float) -> subprocess.CompletedProcess:
    """cmd in the guest with the harness's options, from workdir (under
    /tmp: the guest mounts it read-write). The guest's /tmp is its own: the
    checkout, when it is under /tmp, and the shown paths there are mounted.
    A guardctl built with -cover writes its counters into workdir, and they
    are moved to $GOCOVERDIR afterwards, so the guest's runs count too."""
    mounts = []
    if REPO.resolve().is_relative_to("/tmp"):
        mounts += ["-b", str(REPO.resolve())]
    for p in shown:
        if Path(p).resolve().is_relative_to("/tmp"):
            mounts += ["-w", str(Path(p).resolve())]
    env = dict(os.environ)
    cover = os.environ.get("GOCOVERDIR")
    if cover:
        env["GOCOVERDIR"] = str(workdir / "gocover")
        (workdir / "gocover").mkdir(exist_ok=True)
    r = subprocess.run([HARNESS, "-q", "-C", str(workdir), *mounts, *options, "--", *cmd],
                       capture_output=True, text=True, timeout=timeout, env=env)
    if cover:
        for f in (workdir / "gocover").iterdir():
            shutil.move(f, Path(cover) / f.name)
    return r
