"""What a user reads about a guarded kernel's memory is the kernel's own:
with no limit set, a kernel holding a 300 MiB bytes object shows 300-360
MiB (its process tree's RSS) in `guardctl status` (table and JSON), in
`guardctl metrics` and in the answer to jupyter-resource-usage's
usage_request, within 10 % of what plain ipykernel tells
jupyter-resource-usage for the same cell; the host's (or a shared
cgroup's) figure, which a budget of host memory counts, is shown apart
and named. An idle kernel's figure is measured anew, not left from its
last cell. MEM_LIMIT (JupyterHub's) is the budget when nothing else is
set, and says so. A normal start and shutdown write nothing to stderr.

The browser's side (the status bar, the panel, /metrics of the server) is
e2e/figures.test.mjs."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from conftest import KERNEL_ENVS, Kernel
from support import as_jupyter_starts_it, near, promtool, tree_rss, wait_until
from test_guardctl import Guardctl, size, table
from test_usage import usage

MiB = 1 << 20
GiB = 1 << 30
K7 = KERNEL_ENVS[0]
HOLD = "held = b'x' * (300 << 20)"


@pytest.fixture(scope="module")
def gctl(guardctl) -> Guardctl:
    return Guardctl(guardctl)


@pytest.fixture(scope="module")
def holding(module_kernels) -> Kernel:
    """A guarded kernel as Jupyter starts it for a notebook, with no limit
    set (neither JUPYTER_GUARD_LIMIT nor MEM_LIMIT), holding 300 MiB."""
    with as_jupyter_starts_it(JPY_SESSION_NAME="holding.ipynb"):
        k = module_kernels.start(K7.guarded)
    k.ok(HOLD)
    return k


def test_status_shows_the_kernels_own_memory_and_the_hosts_apart(holding, gctl):
    s = gctl.state_of(holding)
    m = s["memory"]
    print(json.dumps(m, indent=1))
    rss = tree_rss(s["kernel_pid"])
    assert 300 * MiB <= m["kernel_bytes"] <= 360 * MiB, m
    assert m["kernel_source"] == "tree_rss" and near(m["kernel_bytes"], rss), (m, rss)
    assert m["kernel_share"] == pytest.approx(m["kernel_bytes"] / m["budget_bytes"])
    # No limit set: the budget is the host's memory or a cgroup's limit,
    # and what it counts is that scope's, named, not the kernel's.
    assert m["budget_from"] in ("host", "cgroup") and m["scope"] == m["budget_from"], m
    assert m["used_bytes"] != m["kernel_bytes"], m
    assert m["warn_bytes"] < m["pause_bytes"] <= m["budget_bytes"] and m["action"] == "pause", m

    out = gctl.ok("status").stdout
    print(out)
    [row] = [r for r in table(out) if r["KERNEL"] == s["kernel_id"][:8]]
    kernel, budget, share = re.fullmatch(r"(.+) / (.+) \((\d+)%\)", row["MEMORY"]).groups()
    assert 300 * MiB <= size(kernel) <= 360 * MiB and size(budget) == pytest.approx(m["budget_bytes"], rel=0.01), row
    scope, used = re.fullmatch(r"(.+): (.+) used \(\d+%\)", row["BUDGET FROM"]).groups()
    assert scope.startswith(("host memory", "cgroup")) and size(used) == pytest.approx(m["used_bytes"], rel=0.05), row


def test_metrics_name_what_each_figure_measures(holding, gctl):
    out = gctl.ok("metrics").stdout
    check = subprocess.run([promtool(), "check", "metrics"], input=out, capture_output=True, text=True)
    assert check.returncode == 0, f"promtool check metrics:\n{check.stdout}{check.stderr}"
    labels = f'kernel_id="{holding.kernel_id}",kernelspec="{holding.spec}",notebook="holding.ipynb"'
    kernel = re.search(rf'^jupyter_guard_memory_used_bytes\{{{re.escape(labels)},source="tree_rss"\}} (\d+)$', out, re.M)
    assert kernel and 300 * MiB <= int(kernel[1]) <= 360 * MiB, out
    scope = re.search(rf'^jupyter_guard_memory_budget_used_bytes\{{{re.escape(labels)},scope="(host|cgroup)"\}} (\d+)$', out, re.M)
    assert scope and int(scope[2]) != int(kernel[1]), out
    assert re.search(rf'^jupyter_guard_memory_budget_bytes\{{{re.escape(labels)},from="{scope[1]}"\}} \d+$', out, re.M), out


def test_jupyter_resource_usage_reads_the_same_as_for_plain_ipykernel(holding, module_kernels, gctl):
    """jupyter-resource-usage's kernel panel shows the usage_reply's
    kernel_memory: for the guarded kernel the proxy's answer, the same
    figure as guardctl status; for plain ipykernel 7.4 its own (PSS over
    its tree). Holding the same 300 MiB, they agree within 10 %."""
    with as_jupyter_starts_it():
        plain = module_kernels.start(K7.id)
    plain.ok(HOLD)
    theirs = usage(plain, grace=0)["kernel_memory"]
    ours = usage(holding, grace=0)["kernel_memory"]
    status = gctl.state_of(holding)["memory"]["kernel_bytes"]
    print(f"plain ipykernel: {theirs / MiB:.1f} MiB; guarded: usage_reply {ours / MiB:.1f} MiB, status {status / MiB:.1f} MiB")
    assert near(ours, theirs) and near(status, theirs), (ours, status, theirs)


def test_an_idle_kernels_figure_is_current(holding, gctl):
    """Memory a kernel takes after its cell ended (a thread here) shows in
    the next status, measured anew, not the cell's end measurement."""
    before = gctl.state_of(holding)["memory"]
    holding.ok("import threading\nlater = []\n"
               "threading.Timer(0.5, lambda: later.append(b'y' * (100 << 20))).start()")
    time.sleep(2)
    after = gctl.state_of(holding)["memory"]
    print(before["kernel_bytes"] / MiB, after["kernel_bytes"] / MiB)
    assert after["kernel_bytes"] - before["kernel_bytes"] > 90 * MiB, (before, after)
    measured = time.time() - time.mktime(time.strptime(after["measured_at"][:19], "%Y-%m-%dT%H:%M:%S")) + time.timezone
    assert measured < 5, after["measured_at"]
    holding.ok("del later[:]")


def test_mem_limit_is_the_budget_when_nothing_else_is_set(kernels, gctl, kernelspecs, tmp_path):
    """JupyterHub's spawners set MEM_LIMIT (in bytes), as jupyter-resource-
    usage reads it: alone, it is the budget, counted on the kernel's tree,
    and guardctl status and guardctl run say where it comes from."""
    with as_jupyter_starts_it(MEM_LIMIT=str(GiB)):
        k = kernels.start(K7.guarded)
    m = gctl.state_of(k)["memory"]
    assert m["budget_bytes"] == GiB and m["budget_from"] == "MEM_LIMIT" and m["limit_source"] == "MEM_LIMIT", m
    assert m["scope"] == "kernel" and m["used_bytes"] == m["kernel_bytes"], m
    [row] = [r for r in table(gctl.ok("status").stdout) if r["KERNEL"] == k.kernel_id[:8]]
    assert row["BUDGET FROM"] == "MEM_LIMIT" and row["MEMORY"].split(" / ")[1].startswith("1 GiB ("), row

    nb = tmp_path / "ok.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {},
                                         "outputs": [], "source": "x = 1"}],
                              "metadata": {"kernelspec": {"name": K7.id, "display_name": K7.id, "language": "python"}},
                              "nbformat": 4, "nbformat_minor": 5}))
    env = gctl.env()
    env["MEM_LIMIT"] = str(GiB)
    r = subprocess.run([str(gctl.path), "run", str(nb)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "guardctl run: budget 1 GiB from MEM_LIMIT: " in r.stderr, r.stderr


@pytest.mark.parametrize("debug", [False, True], ids=["quiet", "debug"])
def test_a_normal_start_and_shutdown_write_nothing(kernels, debug):
    """As a plain kernel writes nothing to stderr at a normal start and
    shutdown (nbclient's parallel-notebook tests check), the proxy writes
    nothing either: not the budget, not that no GPU is measured, not that
    the interrupt jupyter_client sends before a shutdown found no cell.
    JUPYTER_GUARD_DEBUG=1 shows those lines."""
    with as_jupyter_starts_it(**({"JUPYTER_GUARD_DEBUG": "1"} if debug else {})):
        k = kernels.start(K7.guarded)
    k.ok("x = 1")
    k.shutdown()
    ours = [line for line in k.log.read_text().splitlines() if "jupyter-guard" in line]
    if not debug:
        assert ours == [], ours
        return
    print("\n".join(ours))
    said = "\n".join(ours)
    assert "jupyter-guard: debug: " in said and "memory guard: budget " in said, said
    assert "interrupt: no cell is running" in said, said
    assert all(line.startswith("jupyter-guard: debug: ") for line in ours), said
