"""cgo's C compiler for the manylinux wheels: zig cc for a target such as
x86_64-linux-gnu.2.17, which links against that glibc whatever the build
machine has.

    python zigcc.py TARGET CC-ARGS...

go-nvml links with -Wl,--unresolved-symbols=ignore-in-object-files: NVML's
functions stay undefined and are found at run time, once it has dlopened
libnvidia-ml, so nothing NVIDIA is needed to build or to start guardctl.
zig cc refuses that flag (ziglang/zig#21007), but its linker, ld.lld, takes
it. So a link with it runs zig cc without it and with ZIG_VERBOSE_LINK, which
prints the ld.lld command before the link fails on those very symbols, then
runs that command itself with the flag, and with -z lazy, since zig asks for
-z now and an undefined symbol bound at start would stop guardctl starting
on machines without the driver."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

UNRESOLVED = "-Wl,--unresolved-symbols=ignore-in-object-files"


def zig(*args: str) -> list[str]:
    return [sys.executable, "-m", "ziglang", *args]


def main() -> int:
    target, args = sys.argv[1], sys.argv[2:]
    cc = zig("cc", "-target", target, *(a for a in args if a != UNRESOLVED))
    if UNRESOLVED not in args:
        os.execv(cc[0], cc)
    r = subprocess.run(cc, env=dict(os.environ, ZIG_VERBOSE_LINK="1"), capture_output=True, text=True)
    link = next((line for line in r.stderr.splitlines() if line.startswith("ld.lld ")), None)
    if link is None:
        sys.stderr.write(r.stderr)
        return r.returncode or 1
    extra = ["--unresolved-symbols=ignore-in-object-files", "-z", "lazy"]
    if "-s" in args:
        extra.append("--strip-all")  # zig cc strips after its link, which this one replaces
    return subprocess.run(zig(*shlex.split(link), *extra)).returncode


if __name__ == "__main__":
    sys.exit(main())
