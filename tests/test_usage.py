"""What the guard shows outside the cells: jupyter-resource-usage's kernel
usage panel and Prometheus.

The panel sends a usage_request on the kernel's control channel (as
jupyter_resource_usage/api.py does: an empty content, one fresh client) and
shows the usage_reply. The proxy answers it itself, for any kernel,
measured on the kernel's whole process tree, and never passes it on: a
kernel built on ipykernel's base class (ipykernel, bash_kernel) would answer
a second time. `guardctl metrics` prints every guarded kernel in
Prometheus's text format, which promtool must accept."""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from conftest import KERNEL_ENVS, Kernel
from support import as_jupyter_starts_it, children_of, collect, near, promtool, tree_rss, wait_until
from test_other_kernels_guarded import other_kernels  # noqa: F401 — the plain specs of bash_kernel and xeus-python

MiB = 1 << 20
K7 = KERNEL_ENVS[0]  # ipykernel 7.4
PANEL_TIMEOUT = 10  # what jupyter-resource-usage waits for a usage_reply
SECOND_REPLY_GRACE = 3  # a kernel's own reply to a forwarded request comes within milliseconds

# The fields of ipykernel 7.4's usage_reply (kernelbase.py, usage_request).
USAGE_FIELDS = {"hostname", "pid", "kernel_cpu", "kernel_memory", "host_cpu_percent", "cpu_count", "host_virtual_memory"}


def usage(k: Kernel, grace: float = SECOND_REPLY_GRACE) -> dict:
    """Sends one usage_request on the control channel and returns the
    reply's content; fails unless exactly one reply comes, watching for a
    second one for grace seconds after the first."""
    req = k.kc.session.msg("usage_request", {})
    k.kc.control_channel.send(req)
    replies = []
    deadline = time.monotonic() + PANEL_TIMEOUT
    while (left := deadline - time.monotonic()) > 0:
        try:
            m = k.kc.control_channel.get_msg(timeout=left)
        except queue.Empty:
            break
        if m["parent_header"].get("msg_id") != req["header"]["msg_id"]:
            continue
        replies.append(m)
        if len(replies) == 1:
            deadline = time.monotonic() + grace
    assert replies, f"{k.spec}: no usage_reply within {PANEL_TIMEOUT}s; its log:\n{k.output()[-3000:]}"
    assert len(replies) == 1, f"{k.spec}: {len(replies)} replies to one usage_request: {[r['content'] for r in replies]}"
    assert replies[0]["msg_type"] == "usage_reply", replies[0]
    return replies[0]["content"]


def check_reply(r: dict, k: Kernel):
    """The fields the panel reads, as ipykernel fills them, and the guard's."""
    assert USAGE_FIELDS <= r.keys(), f"missing {USAGE_FIELDS - r.keys()} in {r}"
    assert r["hostname"] == socket.gethostname()
    assert r["pid"] in children_of(k.proc.pid), f"pid {r['pid']} is not the proxy's child (the kernel)"
    assert r["cpu_count"] == psutil.cpu_count(logical=True)
    assert isinstance(r["kernel_cpu"], (int, float)) and r["kernel_cpu"] >= 0
    assert 0 <= r["host_cpu_percent"] <= 100
    vm, theirs = r["host_virtual_memory"], psutil.virtual_memory()._asdict()
    assert vm.keys() == theirs.keys(), f"host_virtual_memory has {sorted(vm)}, psutil {sorted(theirs)}"
    assert vm["total"] == theirs["total"]
    assert near(vm["available"], theirs["available"], 0.2)
    guard = r["jupyter_guard"]
    assert guard["state"] == "idle", guard
    assert guard["measured_on"] == "tree_rss" and guard["used_bytes"] == r["kernel_memory"], guard
    assert guard["budget_bytes"] == 2 << 30 and guard["limit_source"] == "JUPYTER_GUARD_LIMIT", guard


def check_memory(r: dict, k: Kernel, at_least: int):
    rss = tree_rss(r["pid"])
    assert r["kernel_memory"] > at_least, f"{k.spec}: kernel_memory {r['kernel_memory'] / MiB:.1f} MiB"
    assert near(r["kernel_memory"], rss), \
        f"{k.spec}: kernel_memory {r['kernel_memory'] / MiB:.1f} MiB, /proc says the tree holds {rss / MiB:.1f} MiB"


# A process of the tree other than the kernel's own, holding 100 MiB: it
# prints once it holds them, and ends with its parent.
HOLDER = ("import os, time; b = b'x' * (100 << 20); parent = os.getppid(); print('held', flush=True)\n"
          "while os.getppid() == parent: time.sleep(0.2)")


@pytest.fixture(scope="module")
def k7(module_kernels) -> Kernel:
    with as_jupyter_starts_it(JUPYTER_GUARD_LIMIT="2GiB"):
        k = module_kernels.start(K7.guarded)
    k.ok("grown = b'x' * (200 << 20)")
    k.ok(f"import subprocess, sys\nholder = subprocess.Popen([sys.executable, '-c', {HOLDER!r}], stdout=subprocess.PIPE)\n"
         "holder.stdout.readline()")
    return k


def test_ipykernel_gets_one_reply_measured_on_its_tree(k7):
    r = usage(k7)
    print(r)
    check_reply(r, k7)
    assert r["pid"] == k7.pid().pid
    check_memory(r, k7, 300 * MiB)


def test_kernel_cpu_is_the_trees_cpu_since_the_last_request(k7):
    """As psutil's cpu_percent() summed over the tree: percent of one CPU
    since the previous request."""
    usage(k7, grace=0)
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.5: pass"
    k7.ok(spin)
    busy = usage(k7, grace=0)["kernel_cpu"]
    time.sleep(1.5)
    idle = usage(k7, grace=0)["kernel_cpu"]
    # A loaded machine may give the cell less than a whole CPU.
    assert 20 < busy <= 100 * psutil.cpu_count() + 10, busy
    assert idle < 15, idle


@pytest.fixture(scope="module")
def others_guarded(other_kernels, guardctl, tmp_path_factory) -> Path:  # noqa: F811
    """Guarded specs of bash_kernel and xeus-python, in a directory of
    their own: the suite's shared kernelspec dirs stay as other tests
    expect them."""
    prefix = tmp_path_factory.mktemp("prefix")
    subprocess.run([str(guardctl), "install", "--prefix", str(prefix), "--python", str(K7.python),
                    "--kernel", "bash", "--kernel", "xpython"], check=True, capture_output=True, text=True)
    return prefix / "share" / "jupyter" / "kernels"


def start_other(module_kernels, specs: Path, name: str) -> Kernel:
    def configure(km):
        km.kernel_spec_manager = KernelSpecManager(kernel_dirs=[str(specs)])
    with as_jupyter_starts_it(JUPYTER_GUARD_LIMIT="2GiB"):
        return module_kernels.start(name + "-guarded", configure=configure)


@pytest.fixture(scope="module")
def bash(module_kernels, others_guarded) -> Kernel:
    k = start_other(module_kernels, others_guarded, "bash")
    # In the background of bash, the cell ending once it holds its memory.
    k.ok(f"out=$(mktemp)\npython3 -c \"{HOLDER}\" > $out &\nuntil [ -s $out ]; do sleep 0.05; done")
    return k


def test_bash_kernel_answered_by_the_proxy(bash):
    r = usage(bash)
    print(r)
    check_reply(r, bash)
    check_memory(r, bash, 100 * MiB)


def test_xeus_python_answered_by_the_proxy(module_kernels, others_guarded):
    k = start_other(module_kernels, others_guarded, "xpython")
    k.ok("grown = b'x' * (150 << 20)")
    r = usage(k)
    check_reply(r, k)
    check_memory(r, k, 150 * MiB)


GROW = "import time\nb = []\nfor i in range(96):\n    b.append(bytearray(16 << 20)); time.sleep(0.02)\ntime.sleep(120)"


def paused_usage(k: Kernel) -> dict | None:
    r = usage(k, grace=0)
    return r if r["jupyter_guard"]["state"] == "paused" else None


def test_a_paused_kernel_is_answered_at_once(kernels):
    """The kernel's processes are stopped: the proxy answers alone, and says
    the kernel is paused. A notebook's kernel: a person can answer a pause."""
    with as_jupyter_starts_it(JUPYTER_GUARD_LIMIT="512MiB", JPY_SESSION_NAME="paused.ipynb"):
        k = kernels.start(K7.guarded)
    msg_id = k.kc.execute(GROW)
    r = wait_until(lambda: paused_usage(k), 60, "the pause")
    assert 256 * MiB < r["kernel_memory"] < 512 * MiB, r
    assert r["jupyter_guard"]["budget_bytes"] == 512 * MiB
    started = time.monotonic()
    usage(k, grace=0)
    assert time.monotonic() - started < 2, "a usage_request of a paused kernel waited"
    k.km.interrupt_kernel()
    assert collect(k.kc, msg_id).status == "error"


# ---------------------------------------------------------------- metrics


def metrics(guardctl: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    r = subprocess.run([str(guardctl), "metrics"], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, f"guardctl metrics exited {r.returncode}:\n{r.stderr}"
    return r.stdout


def test_metrics_pass_promtool_and_name_each_kernel(k7, bash, guardctl):
    out = metrics(guardctl)
    print(out)
    check = subprocess.run([promtool(), "check", "metrics"], input=out, capture_output=True, text=True)
    assert check.returncode == 0, f"promtool check metrics:\n{check.stdout}{check.stderr}"
    for k, holds in [(k7, 300 * MiB), (bash, 100 * MiB)]:
        labels = f'kernel_id="{k.kernel_id}",kernelspec="{k.spec}",notebook=""'
        used = re.search(rf"^jupyter_guard_memory_used_bytes\{{{re.escape(labels)},source=\"tree_rss\"\}} (\d+)$", out, re.M)
        assert used, f"no memory line for {k.kernel_id}"
        pid = usage(k, grace=0)["pid"]
        assert int(used[1]) > holds and near(int(used[1]), tree_rss(pid)), (int(used[1]) / MiB, tree_rss(pid) / MiB)
        for line in [f'jupyter_guard_memory_budget_bytes{{{labels},from="JUPYTER_GUARD_LIMIT"}} {2 << 30}',
                     f'jupyter_guard_memory_budget_used_bytes{{{labels},scope="kernel"}} {used[1]}',
                     f'jupyter_guard_state{{{labels},state="idle"}} 1',
                     f'jupyter_guard_state{{{labels},state="paused"}} 0',
                     f"jupyter_guard_pauses_total{{{labels}}} 0",
                     f'jupyter_guard_deaths_total{{{labels},cause="segfault"}} 0']:
            assert line in out.splitlines(), f"no line {line!r}"


def test_metrics_count_a_pause_and_a_death(kernels, guardctl):
    """A kernel paused once, then killed by a segfault: both are counted. A
    notebook's kernel: a person can answer a pause."""
    with as_jupyter_starts_it(JUPYTER_GUARD_LIMIT="512MiB", JPY_SESSION_NAME="counted.ipynb"):
        k = kernels.start(K7.guarded)
    msg_id = k.kc.execute(GROW)
    wait_until(lambda: paused_usage(k), 60, "the pause")
    k.km.interrupt_kernel()
    collect(k.kc, msg_id)
    msg_id = k.kc.execute("import ctypes; ctypes.string_at(0)")
    collect(k.kc, msg_id)
    labels = f'kernel_id="{k.kernel_id}",kernelspec="{k.spec}",notebook="counted.ipynb"'
    out = wait_until(lambda: (o := metrics(guardctl)) and f'jupyter_guard_deaths_total{{{labels},cause="segfault"}} 1' in o
                     and o, 30, "the death counted")
    assert f"jupyter_guard_pauses_total{{{labels}}} 1" in out.splitlines(), out
    assert f"jupyter_guard_warnings_total{{{labels}}} 1" in out.splitlines(), out
