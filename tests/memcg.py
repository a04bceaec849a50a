"""A v1 memory cgroup of one's own, nested under the one this process runs
in, with a limit: the Python side of guard/cgroup/cgrouptest, for the tests
and for bench/cnn_story.py. The cgroup the process started in is only read;
the one made here is removed, with whatever still runs in it."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path


class Unavailable(Exception):
    """No writable cgroup v1 memory controller here."""


def own_memory_cgroup() -> Path:
    """The v1 memory cgroup directory this process is in."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            d = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            if d.is_dir():
                return d
    raise Unavailable("no cgroup v1 memory controller for this process")


class MemoryCgroup:
    def __init__(self, path: Path):
        """The group at path, made by create: a process inside it (the
        memory tests' driver) reads it through this."""
        self.dir = Path(path)

    @classmethod
    def create(cls, limit: int, prefix: str = "guard-test") -> "MemoryCgroup":
        cg = cls(own_memory_cgroup() / f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            cg.dir.mkdir()
        except OSError as e:
            raise Unavailable(f"cgroup v1 memory is not writable here: {e}") from e
        try:
            (cg.dir / "memory.limit_in_bytes").write_text(str(limit))
            memsw = cg.dir / "memory.memsw.limit_in_bytes"
            if memsw.exists():  # swap accounted: cap it too, so the limit ends in an OOM kill
                memsw.write_text(str(limit))
        except BaseException:
            cg.remove()
            raise
        return cg

    def read(self, name: str) -> str:
        return (self.dir / name).read_text()

    def wrap(self, argv: list[str]) -> list[str]:
        """argv run inside the group from its first instruction: a shell
        joins the group, then execs argv (same pid); if it cannot join,
        argv never runs."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.dir / "cgroup.procs"), *argv]

    def procs(self) -> list[int]:
        return [int(p) for p in self.read("cgroup.procs").split()]

    # Where v1 keeps what the tests read; MemoryCgroupV2 names v2's.
    OOM_EVENTS, USAGE, INACTIVE_FILE, PEAK = ("memory.oom_control", "memory.usage_in_bytes", "total_inactive_file",
                                              "memory.max_usage_in_bytes")

    def keyed(self, name: str) -> dict[str, int]:
        """A file of "key value" lines."""
        return {k: int(v) for k, v in (line.split() for line in self.read(name).splitlines())}

    def oom_kills(self) -> int:
        return self.keyed(self.OOM_EVENTS).get("oom_kill", 0)

    def usage(self) -> int:
        return int(self.read(self.USAGE))

    def working_set(self) -> int:
        """Usage minus inactive page cache, as the guard counts it."""
        raw = self.usage()
        return raw - min(raw, self.keyed("memory.stat")[self.INACTIVE_FILE])

    def peak(self) -> int:
        """The highest usage since the group was made or reset_peak."""
        return int(self.read(self.PEAK))

    def reset_peak(self):
        (self.dir / "memory.max_usage_in_bytes").write_text("0")

    def remove(self):
        """Kills what is left in the group and removes it."""
        deadline = time.monotonic() + 30
        while self.dir.exists():
            try:
                for pid in self.procs():
                    if pid > 0:  # never kill(0) or kill(-1): they would hit this process
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                self.dir.rmdir()
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"could not remove {self.dir}; remove it by hand") from None
                time.sleep(0.05)  # killed tasks hold the group until they are gone


class MemoryCgroupV2(MemoryCgroup):
    """A cgroup v2 group read as the driver reads a MemoryCgroup: the group
    the cgroup-v2 guest (tests/guest.py) runs a command
    in, made and removed by the harness. The guest's kernel (6.1) cannot
    reset memory.peak: peak is the group's since it was made."""

    OOM_EVENTS, USAGE, INACTIVE_FILE, PEAK = "memory.events", "memory.current", "inactive_file", "memory.peak"

    def reset_peak(self):
        pass
