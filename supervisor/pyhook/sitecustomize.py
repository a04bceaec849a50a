"""jupyter-guard: send faulthandler's crash report to the proxy, keep
ipykernel off tcp, and end a cell that heads for the memory ceiling.

ipykernel points fd 2 at a pipe that a thread inside the kernel reads, so a
crash kills the reader and the Python stack faulthandler writes there is
lost. The proxy hands the kernel a pipe of its own (JUPYTER_GUARD_FAULT_FD)
and this hook points faulthandler at it. It moves ipykernel's IOPub pipe
onto a unix socket (JUPYTER_GUARD_IOPUB_PIPE). It raises MemoryError in
the running cell when the guard signals that the cell's process is about
to reach its allocation ceiling (JUPYTER_GUARD_NEAR_SIGNAL). Then it runs
the sitecustomize it shadows, if there is one.
"""

import os
import sys


def _point_faulthandler_at_the_proxy():
    fd = os.environ.pop("JUPYTER_GUARD_FAULT_FD", "")
    if not fd.isdigit():
        return
    import faulthandler

    try:
        out = os.fdopen(int(fd), "w")
    except OSError:
        return
    faulthandler.enable(file=out, all_threads=False)  # the crashing thread is the story
    sys._jupyter_guard_fault_file = out  # faulthandler keeps only the fd


def _iopub_pipe_on_a_unix_socket():
    """ipykernel's IOPub thread listens on a random loopback tcp port for
    what forked subprocesses print (a PULL; 6.29 and 7.4 alike), the one
    tcp port left once the proxy gives the kernel unix sockets: bind it in
    the proxy's private directory instead, once ipykernel.iostream is
    imported."""
    endpoint = os.environ.pop("JUPYTER_GUARD_IOPUB_PIPE", "")
    if not endpoint:
        return
    import importlib.abc
    import importlib.machinery

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "ipykernel.iostream":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and spec.loader is not None:
                exec_module = spec.loader.exec_module

                def exec_and_patch(module):
                    exec_module(module)
                    _patch_iopub_pipe(module, endpoint)

                spec.loader.exec_module = exec_and_patch
            return spec

    sys.meta_path.insert(0, Finder())


def _patch_iopub_pipe(iostream, endpoint):
    cls = getattr(iostream, "IOPubThread", None)
    if not (hasattr(cls, "_setup_pipe_in") and hasattr(cls, "_setup_pipe_out") and hasattr(iostream, "ZMQStream")):
        return  # not the ipykernel this was written for: leave it alone
    import zmq

    tcp_pipe_in, tcp_pipe_out = cls._setup_pipe_in, cls._setup_pipe_out

    def _setup_pipe_in(self):
        pipe_in = self.socket.context.socket(zmq.PULL)
        pipe_in.linger = 0
        try:
            pipe_in.bind(endpoint)
        except zmq.ZMQError as e:
            pipe_in.close()
            print(f"jupyter-guard: IOPub pipe on {endpoint}: {e}; ipykernel's loopback tcp port instead",
                  file=sys.stderr)
            return tcp_pipe_in(self)
        self._pipe_uuid = os.urandom(16)
        self._pipe_in = iostream.ZMQStream(pipe_in, self.io_loop)
        self._pipe_in.on_recv(self._handle_pipe_msg)

    def _setup_pipe_out(self):
        if getattr(self, "_pipe_port", None) is not None:  # _setup_pipe_in fell back to tcp
            return tcp_pipe_out(self)
        ctx = zmq.Context()  # a new one after the fork, as ipykernel's
        pipe_out = ctx.socket(zmq.PUSH)
        pipe_out.linger = 3000
        pipe_out.connect(endpoint)
        return ctx, pipe_out

    cls._setup_pipe_in, cls._setup_pipe_out = _setup_pipe_in, _setup_pipe_out


def _raise_memory_error_near_the_ceiling():
    """At its ceiling (RLIMIT_DATA) every allocation fails, the error
    path's too: a cell growing by small objects then fails to format its
    traceback or to send its reply, and ipykernel drops the cell. The guard
    sends this signal while the process still has room below its line:
    the cell ends with MemoryError, and the room is there to report it.
    Only a cell's own code is stopped (a signal handler runs in the main
    thread, between bytecodes): a signal that lands while the kernel runs
    its own code, between cells, is ignored, and so is one that lands
    while a MemoryError is being handled."""
    sig = os.environ.pop("JUPYTER_GUARD_NEAR_SIGNAL", "")
    if not sig.isdigit():
        return
    import re
    import signal

    # ipykernel's cell files (/tmp/ipykernel_PID/HASH.py), xeus-python's,
    # IPython's own; not ipykernel_launcher.py, at the bottom of the stack.
    cell_file = re.compile(r"[/\\](?:ipykernel|xpython)_\d+[/\\]|^<ipython-input-")

    def in_cell(frame):
        while frame is not None:
            if cell_file.search(frame.f_code.co_filename):
                return True
            frame = frame.f_back
        return False

    def handling_a_memory_error():
        # The signal may come again while the first MemoryError is being
        # reported (it is retold while the process still grows): raised
        # there, a second one overtakes the first's traceback. A Pool
        # worker formatting its MemoryError for the parent died of it, and
        # the parent waited for that result for good (1 repetition in 40
        # in CI, 2026-11-28). Inner exceptions raised while handling it
        # (a lookup in traceback's own code) have it as their context.
        exc, depth = sys.exc_info()[1], 0
        while exc is not None and depth < 32:
            if isinstance(exc, MemoryError):
                return True
            exc, depth = exc.__context__, depth + 1
        return False

    def near(signum, frame):
        if in_cell(frame) and not handling_a_memory_error():
            raise MemoryError("jupyter-guard: this cell was about to reach the kernel's memory ceiling, "
                              "where no allocation succeeds (see the note below)")

    try:
        signal.signal(int(sig), near)
    except (ValueError, OSError):
        pass  # not the main thread, or no such signal: the guard's lift is what is left


def _restore_environment():
    """The kernel's own subprocesses (a !pip, a multiprocessing worker, a
    script the notebook runs) must not load this hook nor inherit the
    faulthandler setting: put back what the proxy changed."""
    import json

    try:
        restore = json.loads(os.environ.pop("JUPYTER_GUARD_RESTORE_ENV", "{}"))
    except ValueError:
        return
    for name, value in restore.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _run_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_point_faulthandler_at_the_proxy()
_iopub_pipe_on_a_unix_socket()
_raise_memory_error_near_the_ceiling()
_restore_environment()
_run_shadowed_sitecustomize()
