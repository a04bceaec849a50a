"""Checks built Linux wheels the way issue #14 asks, for `make wheel` and
tests/test_wheel.py:

    python packaging/check_wheel.py dist/*.whl   (in .venv-wheel)

For each wheel: auditwheel show finds its content consistent with its
platform tag (the newest glibc or musl that guardctl needs is no newer than
the tag's), guardctl is built for the tag's architecture, a musllinux
guardctl is static (it then never loads a libc at all), the Jupyter files
are there (the server extension's package, the config file that enables
it, the built lab extension), and the wheel is under 15 MiB. Prints one
line per wheel and exits 1 if a check failed."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from elftools.elf.elffile import ELFFile

MACHINE = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}
MAX_SIZE = 15 << 20
TAG = re.compile(r"(manylinux|musllinux)_(\d+)_(\d+)_(x86_64|aarch64)")
# Paths in the installed environment; "data/" ones are the wheel's shared data.
JUPYTER_FILES = (
    "jupyter_guard/__init__.py",
    "data/etc/jupyter/jupyter_server_config.d/jupyter_guard.json",
    "data/share/jupyter/labextensions/jupyter-guard/package.json",
    "data/share/jupyter/labextensions/jupyter-guard/install.json",
    "data/share/jupyter/labextensions/jupyter-guard/static/style.js",
)


def check(wheel: Path) -> tuple[str, list[str]]:
    """What was found, and what is wrong."""
    tag = wheel.stem.split("-")[-1]
    m = TAG.fullmatch(tag)
    if not m:
        return "", [f"{tag} is not a manylinux or musllinux tag"]
    family, version, arch = m[1], (int(m[2]), int(m[3])), m[4]
    problems = []

    show = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True)
    said = " ".join(show.stdout.split())
    found = re.search(r'consistent with the following platform tag: "(\w+)"', said)
    fits = found and TAG.fullmatch(found[1])
    if show.returncode or not fits:
        problems.append(f"auditwheel show: {said} {show.stderr.strip()}")
    elif fits[1] != family or (int(fits[2]), int(fits[3])) > version or fits[4] != arch:
        problems.append(f"auditwheel show: the content needs {found[1]}, newer than {tag}")

    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        binary = [n for n in names if n.endswith(".data/scripts/guardctl")]
        if len(binary) != 1:
            return "", problems + [f"{len(binary)} guardctl binaries in the wheel"]
        elf = ELFFile(io.BytesIO(z.read(binary[0])))
    for path in JUPYTER_FILES:
        if not any(n == path or n.endswith(".data/" + path) for n in names):
            problems.append(f"{path} is missing")
    if elf["e_machine"] != MACHINE[arch]:
        problems.append(f"guardctl is built for {elf['e_machine']}, not {arch}")
    static = not any(segment["p_type"] == "PT_INTERP" for segment in elf.iter_segments())
    if family == "musllinux" and not static:
        problems.append("guardctl is dynamically linked: a musllinux wheel's binary must be static")
    size = wheel.stat().st_size
    if size >= MAX_SIZE:
        problems.append(f"{size / (1 << 20):.1f} MiB, over the 15 MiB limit")

    return (f"{wheel.name}: {size / (1 << 20):.1f} MiB, auditwheel: {found[1] if found else '?'}, "
            f"guardctl {elf['e_machine']} {'static' if static else 'dynamic'}"), problems


def main() -> int:
    failed = False
    for arg in sys.argv[1:]:
        found, problems = check(Path(arg))
        print(found or arg)
        for problem in problems:
            print("  FAIL:", problem)
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
