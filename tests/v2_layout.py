"""The guest side of tests/test_cgroup_v2.py: run inside the cgroup v2 guest
of ../shared/cgroup-v2/run-in-v2.sh, in its group /sys/fs/cgroup/job (or
job/leaf with -l leaf). Puts itself where the layout says, runs a notebook
with `guardctl run` there, and prints one JSON object: guardctl's output and
exit status, and memory.events of the group that holds the limit, read from
outside any namespace the layout made.

    python v2_layout.py '{"layout": ..., "guardctl": ..., "notebook": ..., "args": [...]}'

Layouts:
  own        the limited group itself
  nomem      a child of it without the memory controller
  cgroupns   a cgroup namespace rooted at a child, on the host's cgroupfs
             (paths read "/" and the mount's root "/../..")
  ctr        a cgroup namespace rooted at the limited group, with its own
             cgroup2 mount, as a container on cgroup v2 has
  ctr-above  like ctr, rooted at job/leaf (-l leaf) below the limit, which
             the guard then cannot read
It asserts nothing: the test does. With "kmsg": false the kernel log is a
closed book for the guard (as in most containers): /dev/kmsg is /dev/null
in its mount namespace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

JOB = Path("/sys/fs/cgroup/job")


def move_into(group: Path) -> None:
    """Moves this process into a new group; its children follow."""
    group.mkdir()
    (group / "cgroup.procs").write_text(str(os.getpid()))


def namespaced(cmd: list[str], *, cgroupns: bool, mount_cgroupfs: bool, kmsg: bool) -> list[str]:
    """cmd run in the namespaces the layout asks for: unshare(1), with a
    shell that remounts what it must before exec'ing cmd."""
    setup = []
    if mount_cgroupfs:
        setup.append("umount /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup")
    if not kmsg:
        setup.append("mount --bind /dev/null /dev/kmsg")
    flags = (["--cgroup"] if cgroupns else []) + (["--mount", "--propagation", "private"] if setup else [])
    if not flags:
        return cmd
    if not setup:
        return ["unshare", *flags, *cmd]
    return ["unshare", *flags, "sh", "-ec", " && ".join(setup) + ' && exec "$@"', "sh", *cmd]


def main() -> None:
    cfg = json.loads(sys.argv[1])
    layout = cfg["layout"]
    cmd = [cfg["guardctl"], "run", *cfg.get("args", []), cfg["notebook"]]
    limited = JOB
    cgroupns = mount_cgroupfs = False
    if layout == "nomem":
        move_into(JOB / "nomem")
    elif layout == "cgroupns":
        move_into(JOB / "inner")
        cgroupns = True
    elif layout in ("ctr", "ctr-above"):
        cgroupns = mount_cgroupfs = True
    elif layout != "own":
        raise SystemExit(f"v2_layout.py: no layout {layout!r}")
    cmd = namespaced(cmd, cgroupns=cgroupns, mount_cgroupfs=mount_cgroupfs, kmsg=cfg.get("kmsg", True))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg.get("timeout", 240))
    events = dict(line.split() for line in (limited / "memory.events").read_text().splitlines())
    print(json.dumps({"cmd": cmd, "returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr,
                      "cgroup": Path("/proc/self/cgroup").read_text().strip(),
                      "events": {k: int(v) for k, v in events.items()}}))


if __name__ == "__main__":
    main()
