"""A stand-in for a kernel running cells that grow memory.

It reads one command a line on stdin and answers on stdout; SIGINT ends the
running command with "interrupted" and the process lives on, holding what it
held, as a kernel keeps its variables after an interrupted cell. An
allocation refused (the guard's ceiling) ends it with "memory error", the
process living on the same way.

  grow STEP_MIB EVERY_MS UPTO_MIB   add STEP_MIB blocks, one every EVERY_MS
                                    (0: as fast as it can; fractions are
                                    paced by spinning), until UPTO_MIB are
                                    held (0: forever)
  worker STEP_MIB EVERY_MS UPTO_MIB the same in a multiprocessing child;
                                    prints "worker PID" first
  spin N                            start N busy children, each with a
                                    sleeping grandchild; prints their pids
  forkloop                          start a child that forks short-lived
                                    children without pause; prints its pid
  ping                              prints "pong HELD_MIB"
"""
import multiprocessing as mp
import os
import sys
import time

try:
    import numpy as np
except ImportError:
    np = None

held = []


def block(mib):
    # Every page is written, so every page is resident.
    if np is not None:
        return np.ones(mib << 20, dtype=np.uint8)
    return bytearray(b"\x01") * (mib << 20)


def held_mib():
    return sum(len(b) for b in held) >> 20


def grow(step, every_ms, upto):
    start = time.monotonic()
    i = 0
    while upto == 0 or held_mib() + step <= upto:
        held.append(block(step))
        i += 1
        if every_ms > 0:
            due = start + i * every_ms / 1000
            while True:
                left = due - time.monotonic()
                if left <= 0:
                    break
                if left > 0.002:
                    time.sleep(left - 0.001)


def worker(step, every_ms, upto):
    try:
        grow(step, every_ms, upto)
    except KeyboardInterrupt:
        pass


def busy(forked):
    if os.fork() == 0:
        time.sleep(3600)
        os._exit(0)
    forked.set()
    while True:
        pass


def forkloop():
    while True:
        if os.fork() == 0:
            time.sleep(0.05)
            os._exit(0)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def run(cmd, args):
    if cmd == "grow":
        grow(int(args[0]), float(args[1]), int(args[2]))
    elif cmd == "worker":
        p = mp.Process(target=worker, args=(int(args[0]), float(args[1]), int(args[2])))
        p.start()
        print("worker", p.pid, flush=True)
        p.join()
    elif cmd == "spin":
        forked = [mp.Event() for _ in range(int(args[0]))]
        kids = [mp.Process(target=busy, args=(f,), daemon=True) for f in forked]
        for k in kids:
            k.start()
        for f in forked:
            f.wait()
        print("pids", *[k.pid for k in kids], flush=True)
    elif cmd == "forkloop":
        p = mp.Process(target=forkloop, daemon=True)
        p.start()
        print("pid", p.pid, flush=True)
    elif cmd == "ping":
        print("pong", held_mib(), flush=True)
        return
    print("done", held_mib(), flush=True)


def main():
    print("ready", os.getpid(), flush=True)
    while True:
        try:
            line = sys.stdin.readline()
            if not line:
                return
            cmd, *args = line.split()
            run(cmd, args)
        except KeyboardInterrupt:
            print("interrupted", held_mib(), flush=True)
        except MemoryError:
            print("memory error", held_mib(), flush=True)


if __name__ == "__main__":
    main()
