"""A "kernel" that knows nothing of Jupyter: it never binds a port, never
reads JPY_PARENT_PID and ignores the polite signals. Only the proxy's
parent-death signal (SIGKILL) can end it when the proxy is killed."""

import signal
import sys
import time

for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)
print("sleeper: started with", sys.argv[1:], flush=True)
while True:
    time.sleep(3600)
