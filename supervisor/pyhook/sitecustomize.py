"""jupyter-guard: send faulthandler's crash report to the proxy.

ipykernel points fd 2 at a pipe that a thread inside the kernel reads, so a
crash kills the reader and the Python stack faulthandler writes there is
lost. The proxy hands the kernel a pipe of its own (JUPYTER_GUARD_FAULT_FD)
and this hook points faulthandler at it. Then it runs the sitecustomize it
shadows, if there is one.
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
_restore_environment()
_run_shadowed_sitecustomize()
