import os, queue, time
import pytest
from test_diagnosis import as_jupyter_starts_it

CODES = {"sigkill": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
         "segv": "import ctypes\nctypes.string_at(0)\n",
         "exit": "import os\nos._exit(3)\n"}

def states_for(kc, msg_id, secs):
    out = []
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            m = kc.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            continue
        if m["parent_header"].get("msg_id") == msg_id:
            out.append(m["msg_type"] + ":" + m["content"].get("execution_state", ""))
            if m["content"].get("execution_state") == "idle":
                break
    return out

@pytest.mark.parametrize("which", ["plain", "guarded"])
def test_probe(kernels, kenv, which):
    spec = kenv.id if which == "plain" else kenv.guarded
    with as_jupyter_starts_it(JUPYTER_GUARD_MAX_RESTARTS=1000):
        k = kernels.start(spec)
    res = {}
    for name, code in CODES.items():
        for i in range(3):
            k.ok("x = 1")
            mid = k.kc.execute(code)
            st = states_for(k.kc, mid, 3 if which == "plain" else 30)
            res.setdefault(name, []).append("busy" in "".join(st) and st[0].startswith("status:busy"))
            if which == "plain":
                k.km.restart_kernel(now=True)
                k.kc.wait_for_ready(timeout=60)
                k.flush_shell()
            from support import drain_iopub
            drain_iopub(k.kc)
    print(which, kenv.id, res)
