"""Finding and running the guardctl binary."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Longer than guardctl's own 5 s per control socket: a slow kernel is
# reported by guardctl, not cut off here.
TIMEOUT = 15.0


class GuardctlError(Exception):
    """guardctl ran and failed; message is what it said on stderr."""

    def __init__(self, message: str, returncode: int):
        super().__init__(message)
        self.returncode = returncode


def find_guardctl() -> str | None:
    """$JUPYTER_GUARD_GUARDCTL, else the guardctl beside the server's Python
    (the wheel installs it in the same bin), else the one on PATH."""
    env = os.environ.get("JUPYTER_GUARD_GUARDCTL")
    if env:
        return env
    beside = Path(sys.executable).parent / "guardctl"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("guardctl")


def _command(args: list[str]) -> list[str]:
    exe = find_guardctl()
    if exe is None:
        raise GuardctlError("guardctl was not found beside the server's Python nor on PATH; set JUPYTER_GUARD_GUARDCTL", 127)
    return [exe, *args]


async def run(*args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
    """Runs guardctl ARGS without blocking the server, with input on its
    stdin and env as its environment (the server's by default); its
    stdout, or GuardctlError with its stderr."""
    proc = await asyncio.create_subprocess_exec(
        *_command(list(args)), stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(input), TIMEOUT)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise GuardctlError(f"guardctl {' '.join(args)} did not answer within {TIMEOUT:.0f} s", -1) from None
    if proc.returncode != 0:
        raise GuardctlError(err.decode(errors="replace").strip() or f"guardctl exited {proc.returncode}", proc.returncode)
    return out.decode(errors="replace")


async def run_json(*args: str):
    return json.loads(await run(*args))


def run_sync(*args: str) -> str:
    """The same, blocking: for the /metrics collector, which prometheus_client
    calls synchronously."""
    r = subprocess.run(_command(list(args)), stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
    if r.returncode != 0:
        raise GuardctlError(r.stderr.decode(errors="replace").strip() or f"guardctl exited {r.returncode}", r.returncode)
    return r.stdout.decode(errors="replace")
