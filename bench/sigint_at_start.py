"""How often a SIGINT in the first milliseconds of a guarded kernel's start
ends the proxy, as jupyter_client's interrupt before a shutdown right after
a start would. Starts `guardctl kernel` N times through the same /bin/sh
launcher a guarded kernelspec has, with SIGINT ignored first (as it is
now) or not (as before), sends SIGINT to the process group 1-12 ms after
the start, and counts the proxies it ended.

    python3 bench/sigint_at_start.py bin/guardctl [N]
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

FALLBACK = 'if [ -x "$0" ]; then exec "$0" "$@"; fi; exit 127'


def ended_by_sigint(guardctl: str, script: str, conn_file: str) -> bool:
    argv = ["/bin/sh", "-c", script, guardctl, "kernel", "-f", conn_file, "--",
            sys.executable, "-c", "import time; time.sleep(30)"]
    p = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(random.uniform(0.001, 0.012))
    os.killpg(p.pid, signal.SIGINT)
    try:
        rc = p.wait(timeout=0.3)
    except subprocess.TimeoutExpired:
        rc = None
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    return rc in (-signal.SIGINT, 130, 2)


def main() -> None:
    guardctl, n = os.path.abspath(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 100
    with tempfile.TemporaryDirectory() as d:
        conn_file = os.path.join(d, "kernel.json")
        with open(conn_file, "w") as f:
            json.dump({"transport": "tcp", "ip": "127.0.0.1", "shell_port": 0, "iopub_port": 0, "stdin_port": 0,
                       "control_port": 0, "hb_port": 0, "key": "k", "signature_scheme": "hmac-sha256"}, f)
        for name, script in (("SIGINT not ignored (before)", FALLBACK), ("SIGINT ignored (now)", "trap '' INT; " + FALLBACK)):
            ended = sum(ended_by_sigint(guardctl, script, conn_file) for _ in range(n))
            print(f"{name}: {ended} of {n} proxies ended by a SIGINT 1-12 ms after the start")


if __name__ == "__main__":
    main()
