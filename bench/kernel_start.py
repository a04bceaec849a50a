"""How long a kernel takes to start: plain, from its wrapped kernelspec, and
through jupyter-guard's provisioner (which first runs `guardctl
kernel-argv`). Interleaves the three in rounds, so machine noise hits all
alike, and prints the median and the slowest start of each, from
start_kernel() to the first kernel_info reply, and the median time the
provisioner's kernel-argv step took.

Run it where jupyter-guard is pip-installed (its entry point registers the
provisioner), with the wrapped spec installed (guardctl install):

    python bench/kernel_start.py --plain python3 --wrapped python3-guarded [--rounds 20]
"""

import argparse
import statistics
import time

from jupyter_client.manager import KernelManager
from jupyter_client.provisioning import KernelProvisionerFactory

from jupyter_guard.provisioner import GuardProvisioner


def start(name: str, provisioner: str) -> float:
    factory = KernelProvisionerFactory.instance()
    factory.default_provisioner_name = provisioner
    km = KernelManager(kernel_name=name)
    t = time.perf_counter()
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        return time.perf_counter() - t
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", default="python3")
    ap.add_argument("--wrapped", default="python3-guarded")
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args()

    argv_steps = []
    guarded = GuardProvisioner._guarded

    async def timed(self, cmd, env):
        t = time.perf_counter()
        try:
            return await guarded(self, cmd, env)
        finally:
            argv_steps.append(time.perf_counter() - t)

    GuardProvisioner._guarded = timed
    ways = {"plain": (a.plain, "local-provisioner"), "wrapped": (a.wrapped, "local-provisioner"),
            "provisioner": (a.plain, "jupyter-guard")}
    times = {w: [] for w in ways}
    for _ in range(a.rounds):
        for way, (name, provisioner) in ways.items():
            times[way].append(start(name, provisioner))
    for way, ts in times.items():
        print(f"{way:12s} median {statistics.median(ts) * 1000:6.0f} ms  slowest {max(ts) * 1000:6.0f} ms  ({len(ts)} starts)")
    print(f"kernel-argv  median {statistics.median(argv_steps) * 1000:6.1f} ms  slowest {max(argv_steps) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
