"""Restart, shutdown and the proxy's own death: whatever happens to the
proxy, no kernel process is left behind; whether Jupyter started it from
a wrapped kernelspec or through the provisioner (guarded_name)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from support import Proc, children_of, cmdline, read_until_stream, wait_until

# How long the kernel may outlive a killed proxy. The brief for the proxy:
# the kernel dies with it (parent-death signal), not at its next poll.
ORPHAN_LIMIT = 5


def test_restart(kernels, guarded_name):
    k = kernels.start(guarded_name)
    k.ok("restart_marker = 'before'")
    old_proxy, old_child = k.proc, k.pid()

    k.km.restart_kernel(now=False)
    k.kc.wait_for_ready(timeout=60)
    k.flush_shell()

    new_proxy = Proc.of(k.km.provisioner.process.pid)
    new_child = k.pid()
    assert new_proxy != old_proxy and new_child != old_child
    r = k.run("restart_marker")
    assert r.status == "error" and r.reply["content"]["ename"] == "NameError"
    assert k.ok("print(2 ** 10)").stdout == "1024\n"
    # The old proxy and its kernel are gone, not just replaced: only the new
    # pair names this kernel's id.
    assert not old_proxy.running() and not old_child.running()
    assert sorted(k.processes()) == sorted([new_proxy.pid, new_child.pid])
    assert new_child.pid in children_of(new_proxy.pid)


def test_shutdown_leaves_nothing(kernels, guarded_name):
    k = kernels.start(guarded_name)
    proxy, child = k.proc, k.pid()
    assert sorted(k.processes()) == sorted([proxy.pid, child.pid])
    popen = k.km.provisioner.process

    k.kc.stop_channels()
    k.kc = None
    k.km.shutdown_kernel(now=False)

    # jupyter_client waits for the proxy to exit on its own before it falls
    # back to killing the group: exit status 0 means it never had to.
    assert popen.returncode == 0, f"proxy exit status {popen.returncode}\n{k.output()}"
    assert not proxy.running() and not child.running()
    assert k.processes() == []
    # The proxy's private connection file for its child is removed too.
    runtime = os.environ["JUPYTER_RUNTIME_DIR"]
    assert [f for f in os.listdir(runtime) if k.kernel_id in f] == []


def test_sigkill_of_the_proxy_takes_the_kernel(kernels, guarded_name):
    k = kernels.start(guarded_name)
    child = k.pid()
    os.kill(k.proc.pid, signal.SIGKILL)
    k.km.provisioner.process.wait(timeout=10)
    wait_until(lambda: not child.running(), ORPHAN_LIMIT, f"kernel pid {child.pid} to die with its proxy")
    assert k.processes() == []


LEAVE_BEHIND = """import os, signal, subprocess, sys
left = []
if os.fork() == 0:  # a forked worker, as multiprocessing's
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGHUP])
    os.execvp("sleep", ["sleep", "600"])
left.append(subprocess.Popen(["sleep", "600"], start_new_session=True).pid)  # a job of its own
stopped = subprocess.Popen(["sleep", "600"])
os.kill(stopped.pid, signal.SIGSTOP)  # paused, as the guard leaves a tree
left.append(stopped.pid)
print(*left)
"""


def test_sigkill_of_the_proxy_leaves_none_of_the_kernels_processes(kernels, guarded_name):
    """The kernel dies with the proxy (parent-death signal); what it started
    is ended by the proxy's keeper: a forked worker, a process in a session
    of its own, and a stopped one, none of which the kernel's death ends."""
    k = kernels.start(guarded_name)
    kernel = k.pid()
    left = [Proc.of(int(p)) for p in k.ok(LEAVE_BEHIND).stdout.split()]
    workers = [Proc.of(p) for p in children_of(kernel.pid)]
    assert len(workers) == 3, workers  # the fork, and the two sleeps
    os.kill(k.proc.pid, signal.SIGKILL)
    k.km.provisioner.process.wait(timeout=10)
    for p in [kernel, *workers, *left]:
        wait_until(lambda: not p.running(), ORPHAN_LIMIT, f"pid {p.pid} ({' '.join(cmdline(p.pid) or ['?'])}) to end with the proxy")


def test_sigkill_of_the_proxy_takes_a_kernel_that_ignores_jupyter(kernels):
    """A "kernel" that never reads JPY_PARENT_PID and ignores SIGTERM and
    SIGHUP (tests/kernels/sleeper.py) still dies with the proxy."""
    k = kernels.start("sleeper-guarded", wait=False)
    # The proxy's first child may be its keeper, which hands on and ends
    # before the kernel starts.
    pids = wait_until(lambda: [p for p in children_of(k.proc.pid) if any(a.endswith("sleeper.py") for a in cmdline(p))],
                      30, "the proxy to start the sleeper")
    assert len(pids) == 1
    sleeper = Proc.of(pids[0])
    wait_until(lambda: "sleeper: started" in k.output(), 30, "the sleeper to install its signal handlers")

    os.kill(k.proc.pid, signal.SIGKILL)
    k.km.provisioner.process.wait(timeout=10)
    wait_until(lambda: not sleeper.running(), ORPHAN_LIMIT, f"sleeper pid {sleeper.pid} to die with the proxy")
    assert k.processes() == []


JUPYTER = """import sys, time
from jupyter_client.manager import KernelManager
km = KernelManager(kernel_name=sys.argv[1])
km.start_kernel()
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=60)
print(km.provisioner.process.pid, flush=True)
time.sleep(600)
"""


def test_the_proxy_ends_when_jupyter_is_killed(kernelspecs, kenv):
    """Jupyter killed outright, no shutdown_request, no signal to its
    kernels: the proxy sees its parent go and stops the kernel, as ipykernel
    does with JPY_PARENT_PID (the proxy waits on a pidfd for it)."""
    jupyter = subprocess.Popen([sys.executable, "-c", JUPYTER, kenv.guarded], stdout=subprocess.PIPE, text=True)
    try:
        proxy = Proc.of(int(jupyter.stdout.readline()))
        kernel = Proc.of(wait_until(lambda: [p for p in children_of(proxy.pid) if "ipykernel_launcher" in cmdline(p)],
                                    30, "the proxy's kernel")[0])
    finally:
        jupyter.kill()
        jupyter.wait()
    try:
        for p in (proxy, kernel):
            wait_until(lambda: not p.running(), ORPHAN_LIMIT, f"pid {p.pid} ({' '.join(cmdline(p.pid) or ['?'])}) to end with Jupyter")
    finally:
        for p in (proxy, kernel):
            if p.running():
                os.kill(p.pid, signal.SIGKILL)


def test_sigterm_of_the_proxy_stops_the_kernel(kernels, kenv):
    """What jupyter_client sends when a kernel does not shut down in time."""
    k = kernels.start(kenv.guarded)
    child = k.pid()
    os.kill(k.proc.pid, signal.SIGTERM)
    k.km.provisioner.process.wait(timeout=30)
    wait_until(lambda: not child.running(), 30, f"kernel pid {child.pid} to stop")
    assert k.processes() == []


def test_shutdown_while_a_cell_runs(kernels, kenv):
    """Closing a notebook whose cell still runs: everything goes."""
    k = kernels.start(kenv.guarded)
    proxy, child = k.proc, k.pid()
    msg_id = k.kc.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    read_until_stream(k.kc, msg_id, "sleeping")
    k.kc.stop_channels()
    k.kc = None
    k.km.shutdown_kernel(now=False)
    assert not proxy.running() and not child.running()
    assert k.processes() == []


def test_a_shutdown_right_after_start_is_not_a_death(kernels, kenv):
    """jupyter_client 8.10 interrupts a kernel before it shuts it down; a
    kernel that has not set up its SIGINT handler yet died of it, and the
    shutdown was recorded as a death. Nothing is running: nothing is
    signalled."""
    k = kernels.start(kenv.guarded, wait=False)
    popen = k.km.provisioner.process
    k.km.shutdown_kernel(now=False)
    assert popen.returncode == 0, f"proxy exit status {popen.returncode}\n{k.output()}"
    deaths = os.path.join(os.environ["JUPYTER_RUNTIME_DIR"], "jupyter-guard-deaths.jsonl")
    recorded = open(deaths).read() if os.path.exists(deaths) else ""
    assert k.kernel_id not in recorded, recorded
    assert "died" not in k.output(), k.output()
