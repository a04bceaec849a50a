"""Guarded vs plain ipykernel, side by side in one run.

Runs the plain kernelspec, a second plain kernel of the same spec (the
control: what two identical kernels differ by in this run) and each guarded
spec at the same time. The executes take turns one by one, kernel after
kernel, so the host's speed, which moves within a second on this machine,
is the same for all; and they run in several generations of freshly started
kernels, each generation starting them in another order, so no kernel
keeps one place in the turn or one process's luck. Prints median and p99
round trips of execute('pass'), the proxy's CPU and voluntary context
switches ("sleeps") per execute, the time of a cell printing 50 MB and of
the executes right after it against a twin kernel's that printed none,
the proxy's CPU and wake-ups while the kernel is idle (with no heartbeats,
as jupyter_server runs kernels; the plain kernel's own wake-ups beside
them) and its RSS.
--guarded may be given more than once (two builds of guardctl in
kernelspecs of their own): each is compared with the plain kernel in the
same interleaved run.
With --soak it also runs 10,000 executes and 100 child restarts through one
proxy and reports its goroutines, open fds and RSS before and after.

    python bench/proxy.py --plain python3 --guarded python3-guarded [--guarded other] [--soak]
"""

import argparse
import json
import os
import statistics
import subprocess
import time

from jupyter_client.manager import KernelManager

CLK = os.sysconf("SC_CLK_TCK")


def quiet(_msg):
    pass


def run(kc, code, timeout=600):
    t = time.perf_counter()
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=quiet)
    assert reply["content"]["status"] == "ok", reply["content"]
    return time.perf_counter() - t


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLK
    status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    kib = lambda key: int(status[key].split()[0])
    return {"cpu_s": cpu, "rss_mib": kib("VmRSS") / 1024, "hwm_mib": kib("VmHWM") / 1024,
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": int(status["Threads"]),
            "sleeps": sleeps(pid)}


def middle(pid):
    """The processes between the client and the kernel: the one Jupyter
    started, and bench/relay's copier (bench/crelay) when it has one."""
    pids = [pid]
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            for child in f.read().split():
                with open(f"/proc/{child}/comm") as c:
                    if c.read().strip() == "crelay":
                        pids.append(int(child))
    return pids


def middle_stat(pids):
    """proc_stat of the first, with CPU and sleeps summed over all."""
    stats = [proc_stat(pid) for pid in pids]
    total = dict(stats[0])
    for key in ("cpu_s", "sleeps"):
        total[key] = sum(st[key] for st in stats)
    return total


def sleeps(pid):
    """The voluntary context switches of all the process's threads: how
    often it went to sleep and had to be woken, each a cost on a machine
    whose two cores the kernel and its client already keep busy. (A thread
    that ended takes its count with it.)"""
    n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                n += next(int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches"))
        except FileNotFoundError:
            pass  # the thread ended meanwhile
    return n


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def turn(names, k):
    """names, starting at the k-th: each pass begins with the next one."""
    k %= len(names)
    return names[k:] + names[:k]


def start_one(spec, tries=3):
    """Starts a kernel of spec. A start that fails is said and tried again:
    with dozens of kernels started in a run, one now and then loses the race
    for a port picked free (the relays pick their kernels' ports as
    jupyter_client does), which is not what is measured."""
    for attempt in range(1, tries + 1):
        km = KernelManager(kernel_name=spec)
        km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            return km, kc
        except RuntimeError as e:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            if attempt == tries:
                raise
            print(f"bench: {spec} did not start ({e}); starting it again", flush=True)


def start(specs, order):
    """Starts a kernel of each spec, in the order given, and warms each up."""
    kernels = {name: start_one(specs[name]) for name in order}
    for _, kc in kernels.values():
        for _ in range(50):
            run(kc, "pass")
    return kernels


def stop(kernels):
    for km, kc in kernels.values():
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def latency(specs, guarded, executes, generations):
    """Runs executes execute('pass') on a kernel of each spec, in
    generations of fresh kernels, one execute per kernel in turn; the turn
    runs forth and back, so each kernel as often follows one neighbour as
    the other. Returns the round trips and the proxies' CPU and sleeps
    summed over the generations."""
    names = list(specs)
    times = {name: [] for name in names}
    used = {name: {"cpu_s": 0.0, "sleeps": 0} for name in guarded}
    rounds = max(1, executes // generations)
    for gen in range(generations):
        order = turn(names, gen)
        kernels = start(specs, order)
        try:
            proxies = {n: middle(kernels[n][0].provisioner.process.pid) for n in guarded}
            before = {n: middle_stat(pids) for n, pids in proxies.items()}
            for _ in range(rounds):
                for name in order:
                    times[name].append(run(kernels[name][1], "pass"))
                order.reverse()
            for n, pids in proxies.items():
                after = middle_stat(pids)
                for key in used[n]:
                    used[n][key] += after[key] - before[n][key]
        finally:
            stop(kernels)
    return times, used


def alternate(first, second, pairs):
    """Runs execute('pass') on the two kernels in alternation, which one
    goes first swapping each time, and returns each pair's ratio."""
    ratios = []
    for i in range(pairs):
        if i % 2:
            t2, t1 = run(second, "pass"), run(first, "pass")
        else:
            t1, t2 = run(first, "pass"), run(second, "pass")
        ratios.append(t1 / t2)
    return ratios


def big_output(specs, reps, pairs):
    """Two kernels of each spec, a pair of twins, take turns printing 50 MB.
    Right before each output and right after it, the kernel that prints it
    and its twin, which does not, run pairs executes each in alternation:
    the twin, measured in the same instant, is the kernel "without it", so
    the host's speed, which moves within a second here, cancels out of each
    pair's ratio. The twins swap roles each repetition, so what tells the
    two processes apart cancels too, and each repetition starts with the
    next spec in turn. Whether a big output leaves the kernel (or its
    proxy: its memory, Go's collector) slower shows in the ratios after it
    against those before it. Returns the outputs' times, the ratios before
    and after, and the kernels, still up."""
    code = "import sys; sys.stdout.write('x' * 50_000_000); sys.stdout.flush()"
    names = list(specs)
    twins = {name: (name, name + " twin") for name in names}
    kernels = start({k: specs[name] for name, pair in twins.items() for k in pair},
                    [k for pair in twins.values() for k in pair])
    times = {name: [] for name in names}
    before = {name: [] for name in names}
    after = {name: [] for name in names}
    try:
        for rep in range(reps):
            for name in turn(names, rep):
                a, b = twins[name] if rep % 2 == 0 else twins[name][::-1]
                ka, kb = kernels[a][1], kernels[b][1]
                before[name] += alternate(ka, kb, pairs)
                times[name].append(run(ka, code))
                after[name] += alternate(ka, kb, pairs)
    except BaseException:
        stop(kernels)
        raise
    return times, before, after, kernels


def control_state(proxy_pid):
    """Reads the proxy's own view (goroutines) through guardctl status --json."""
    out = subprocess.run(["guardctl", "status", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    for k in json.loads(out.stdout or "[]"):
        if k.get("proxy_pid") == proxy_pid:
            return k
    return None


def kernel_id(km):
    """The id guardctl knows a kernel by: its connection file's name."""
    name = os.path.basename(km.connection_file).removesuffix(".json")
    return name.removeprefix("kernel-")


def soak(km, kc, proxy_pid, executes, restarts):
    before = proc_stat(proxy_pid)
    for _ in range(executes):
        run(kc, "pass")
    for _ in range(restarts):
        subprocess.run(["guardctl", "restart", kernel_id(km)], check=True, capture_output=True)
        time.sleep(0.5)  # let the old kernel go before asking the new one
        kc.wait_for_ready(timeout=60)
        run(kc, "pass")
    after = proc_stat(proxy_pid)
    return before, after


def report_soak(km, kc):
    proxy_pid = km.provisioner.process.pid
    g0 = control_state(proxy_pid)
    before, after = soak(km, kc, proxy_pid, 10_000, 100)
    g1 = control_state(proxy_pid)
    print("soak, 10,000 executes and 100 restarts through one proxy:")
    for key in ("rss_mib", "fds", "threads"):
        print(f"  {key:8s} {before[key]:8.1f} -> {after[key]:8.1f}")
    if g0 and g1:
        print(f"  goroutines {g0['proxy']['goroutines']:6d} -> {g1['proxy']['goroutines']:6d}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", default="python3")
    ap.add_argument("--guarded", action="append", help="a guarded kernelspec (repeatable; default python3-guarded)")
    ap.add_argument("--executes", type=int, default=1000, help="execute('pass') per kernel")
    ap.add_argument("--generations", type=int, help="fresh kernels this many times (default: one per kernel)")
    ap.add_argument("--batch", type=int, default=50,
                    help="executes right before and right after each 50 MB, each paired with the twin's")
    ap.add_argument("--big", type=int, default=10, help="50 MB outputs per kernel")
    ap.add_argument("--soak", action="store_true")
    ap.add_argument("--soak-only", action="store_true", help="skip the comparison")
    args = ap.parse_args()

    guarded = args.guarded or ["python3-guarded"]
    if args.soak_only:
        kernels = start({guarded[0]: guarded[0]}, [guarded[0]])
        try:
            report_soak(*kernels[guarded[0]])
        finally:
            stop(kernels)
        return
    specs = {"plain": args.plain, "plain again": args.plain} | {n: n for n in guarded}
    gens = args.generations or len(specs)
    kernels = {}
    try:
        lat, used = latency(specs, guarded, args.executes, gens)
        per = lambda n, key: used[n][key] / len(lat[n])
        big_specs = {n: s for n, s in specs.items() if n != "plain again"}
        big, before_big, after_big, kernels = big_output(big_specs, args.big, args.batch)
        for _, kc in kernels.values():
            kc.hb_channel.stop()  # jupyter_server sends no heartbeats
        # The second after a big output is not idle yet: the guard's sampler
        # lingers (see sampler.lingerFor) and Go returns the output's memory.
        time.sleep(2)
        proxies = {n: middle(kernels[n][0].provisioner.process.pid) for n in guarded}
        plain_pid = kernels["plain"][0].provisioner.process.pid
        idle0 = {n: middle_stat(pids) for n, pids in proxies.items()}
        plain0 = sleeps(plain_pid)
        time.sleep(10)
        idle1 = {n: middle_stat(pids) for n, pids in proxies.items()}
        plain1 = sleeps(plain_pid)

        med = {n: statistics.median(v) * 1e3 for n, v in lat.items()}
        p99 = {n: pct(v, 0.99) * 1e3 for n, v in lat.items()}
        bigm = {n: statistics.median(v) for n, v in big.items()}
        width = max(map(len, specs))
        print(f"execute('pass') round trip, {len(lat['plain'])} each, one by one in turn, {gens} generations of kernels:")
        for n in lat:
            print(f"  {n:{width}s} median {med[n]:.3f} ms   p99 {p99[n]:.3f} ms")
        print(f"  ratio plain again: median {med['plain again'] / med['plain']:.3f}   "
              f"p99 {p99['plain again'] / p99['plain']:.3f}   (the same spec: this run's own noise)")
        for n in guarded:
            print(f"  ratio {n}: median {med[n] / med['plain']:.3f}   p99 {p99[n] / p99['plain']:.3f}   "
                  f"proxy CPU per execute {per(n, 'cpu_s') * 1e6:.0f} us, sleeps {per(n, 'sleeps'):.1f}")
        print(f"cell printing 50 MB, median of {args.big}:")
        for n in big:
            print(f"  {n:{width}s} {bigm[n]:.3f} s")
        for n in guarded:
            print(f"  ratio {n}: {bigm[n] / bigm['plain']:.3f}")
        medb = {n: statistics.median(v) for n, v in before_big.items()}
        meda = {n: statistics.median(v) for n, v in after_big.items()}
        print(f"execute('pass') right before and right after a 50 MB output, each timed against its twin's "
              f"(which printed none) in alternation, {args.batch} pairs each time, {len(after_big['plain'])} each:")
        slower = {n: meda[n] / medb[n] for n in after_big}
        for n in after_big:
            print(f"  {n:{width}s} median ratio to the twin before {medb[n]:.3f}, after {meda[n]:.3f}: "
                  f"after / before {slower[n]:.3f}")
        # What the kernel and its client lose after a big output shows in
        # plain's figure; what is left over is the middle's own.
        for n in guarded:
            print(f"  ratio {n}: after / before {slower[n] / slower['plain']:.3f} of plain's")
        print(f"plain: the kernel's own sleeps while idle for 10 s: {(plain1 - plain0) / 10:.1f} per second")
        for n in guarded:
            print(f"{n}: proxy CPU while the kernel is idle for 10 s: {idle1[n]['cpu_s'] - idle0[n]['cpu_s']:.3f} s, "
                  f"sleeps {(idle1[n]['sleeps'] - idle0[n]['sleeps']) / 10:.1f} per second; "
                  f"RSS now {idle1[n]['rss_mib']:.1f} MiB, peak {idle1[n]['hwm_mib']:.1f} MiB")
        if args.soak:
            report_soak(*kernels[guarded[0]])
    finally:
        stop(kernels)


if __name__ == "__main__":
    main()
