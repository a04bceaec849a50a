"""The Jupyter server extension (jupyter_guard/): its REST API under
/jupyter-guard/ and the guard's figures on jupyter_server's /metrics, on a
real `jupyter server` with a guarded kernel started through its own REST
API; and the /metrics collector alone, against a fake guardctl.

The lab extension on top is e2e/extension.test.mjs."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from jupyter_client import BlockingKernelClient

from support import collect, jupyter_server, promtool, wait_until

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
MiB = 1 << 20


@pytest.fixture(scope="module")
def server(kernelspecs, jupyter_dirs, guardctl, tmp_path_factory):
    """`jupyter server` with the extension enabled as the wheel's config file
    does, jupyter_guard put on its sys.path by a config .py (not PYTHONPATH,
    which kernels would inherit), and a token."""
    tmp = tmp_path_factory.mktemp("server-ext")
    config = tmp / "config"
    (config / "jupyter_server_config.d").mkdir(parents=True)
    (config / "jupyter_server_config.d" / "jupyter_guard.json").write_text(
        (REPO / "jupyter-config" / "jupyter_server_config.d" / "jupyter_guard.json").read_text())
    pkgs = tmp / "python"
    pkgs.mkdir()
    (pkgs / "jupyter_guard").symlink_to(REPO / "jupyter_guard")
    (config / "jupyter_server_config.py").write_text(f"import sys\nsys.path.insert(0, {str(pkgs)!r})\n")
    root = tmp / "root"
    root.mkdir()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_GUARD_GUARDCTL=str(guardctl),
               JUPYTER_GUARD_LIMIT="2GiB")
    env.pop("JUPYTER_GUARD_RESTART")  # the proxy tells a server's kernels by itself
    with jupyter_server([PYTHON, "-m", "jupyter_server"], root, env, tmp / "server.log") as srv:
        yield srv


def open_notebook(server, path: str) -> tuple[str, str]:
    """A session for the notebook at path with a guarded kernel, as
    JupyterLab opens one; (session id, kernel id)."""
    status, session = server.call("POST", "/api/sessions", {"path": path, "type": "notebook", "name": "",
                                                            "kernel": {"name": "ipykernel7-guarded"}})
    assert status == 201, session
    return session["id"], session["kernel"]["id"]


@pytest.fixture(scope="module")
def kernel_id(server):
    session, kid = open_notebook(server, "analysis.ipynb")
    k = {"id": kid}

    def listed():
        st, ks = server.call("GET", "/jupyter-guard/kernels")
        return st == 200 and any(x["kernel_id"] == k["id"] and x["state"] == "idle" for x in ks)

    wait_until(listed, 60, "the guarded kernel to be listed idle by /jupyter-guard/kernels", interval=0.5)
    yield k["id"]
    server.call("DELETE", f"/api/sessions/{session}")


def test_kernels_needs_auth(server):
    status, _ = server.call("GET", "/jupyter-guard/kernels", token=None)
    assert status == 403
    status, _ = server.call("POST", "/jupyter-guard/kernels/abc/interrupt", token=None)
    assert status == 403


def test_kernels_lists_what_guardctl_status_does(server, kernel_id, guardctl):
    status, ks = server.call("GET", "/jupyter-guard/kernels")
    assert status == 200
    [k] = [x for x in ks if x["kernel_id"] == kernel_id]
    assert k["kernelspec"] == "ipykernel7-guarded"
    assert k["memory"]["budget_bytes"] == 2 << 30
    assert 10 * MiB < k["memory"]["used_bytes"] < 500 * MiB, k["memory"]
    assert k["memory"]["limit_source"] == "JUPYTER_GUARD_LIMIT"
    # The same as guardctl status --json run by the server's user.
    cli = json.loads(subprocess.run([str(guardctl), "status", "--json"], capture_output=True, text=True, check=True).stdout)
    assert {x["kernel_id"] for x in cli} == {x["kernel_id"] for x in ks}


def test_cells_of_a_kernel(server, kernel_id):
    status, cells = server.call("GET", f"/jupyter-guard/kernels/{kernel_id}/cells")
    assert status == 200 and cells == [], cells  # nothing has run: [] (not null)


def test_history_of_a_kernel(server, kernel_id):
    """The panel's picture: the kernel's measurements and the lines, the last
    point within 10 % of what the kernel list says (which measures anew)."""
    _, ks = server.call("GET", "/jupyter-guard/kernels")
    [k] = [x for x in ks if x["kernel_id"] == kernel_id]
    status, h = server.call("GET", f"/jupyter-guard/kernels/{kernel_id}/history")
    assert status == 200, h
    assert (h["budget_bytes"], h["scope"], h["kernel_source"]) == (2 << 30, "kernel", "tree_rss"), h
    assert h["warn_bytes"] < h["pause_bytes"] < h["budget_bytes"], h
    assert h["points"] and all(a["t"] <= b["t"] for a, b in zip(h["points"], h["points"][1:])), h["points"]
    last = h["points"][-1]
    assert abs(last["kernel"] - k["memory"]["kernel_bytes"]) <= 0.1 * k["memory"]["kernel_bytes"], (last, k["memory"])
    assert server.call("GET", "/jupyter-guard/kernels/ffffffff/history")[0] == 404


def test_actions(server, kernel_id):
    status, body = server.call("POST", f"/jupyter-guard/kernels/{kernel_id}/resume")
    assert status == 409 and "not paused" in body["error"], (status, body)
    status, body = server.call("POST", f"/jupyter-guard/kernels/{kernel_id}/interrupt")
    assert status == 200 and body["kernel_id"] == kernel_id, (status, body)
    assert body.get("actions", {}).get("interrupt", 0) == 0, "a user's interrupt is not the guard's"


def test_kernels_started_by_the_server_name_the_panel(server, kernel_id):
    """The server extension sets JUPYTER_GUARD_PANEL for the kernels the
    server starts: their pause notices name the panel (guard/notice)."""
    _, ks = server.call("GET", "/jupyter-guard/kernels")
    [k] = [x for x in ks if x["kernel_id"] == kernel_id]
    env = Path(f"/proc/{k['proxy_pid']}/environ").read_bytes().split(b"\0")
    assert b"JUPYTER_GUARD_PANEL=1" in env


def test_unknown_and_malformed_kernels(server, kernel_id):
    status, body = server.call("POST", "/jupyter-guard/kernels/ffffffff/interrupt")
    assert status == 404 and "no guarded kernel matches" in body["error"], (status, body)
    status, body = server.call("GET", "/jupyter-guard/kernels/ffffffff/cells")
    assert status == 404, (status, body)
    # Never passed to guardctl as an option, a notebook's name, or another action.
    for path in ["/jupyter-guard/kernels/--json/resume", "/jupyter-guard/kernels/grow.ipynb/cells",
                 f"/jupyter-guard/kernels/{kernel_id}/status", f"/jupyter-guard/kernels/{kernel_id}/install"]:
        assert server.call("POST", path)[0] == 404, path


def test_metrics_has_the_kernel(server, kernel_id):
    status, text = server.call("GET", "/metrics")
    assert status == 200
    lines = [ln for ln in text.splitlines() if f'kernel_id="{kernel_id}"' in ln]
    budget = [ln for ln in lines if ln.startswith("jupyter_guard_memory_budget_bytes{")]
    assert len(budget) == 1 and float(budget[0].rsplit(" ", 1)[1]) == 2 << 30, lines
    assert any(ln.startswith("jupyter_guard_state{") and 'state="idle"' in ln and ln.endswith(" 1.0") for ln in lines), lines
    # jupyter_server's own figures are still there.
    assert "http_request_duration_seconds" in text


def metric(text: str, name: str, kernel_id: str, **labels: str) -> float | None:
    """The value of the sample of name for kernel_id (and labels) in a
    /metrics page, or None when there is none."""
    for ln in text.splitlines():
        if ln.startswith(name + "{") and f'kernel_id="{kernel_id}"' in ln \
                and all(f'{k}="{v}"' in ln for k, v in labels.items()):
            return float(ln.rsplit(" ", 1)[1])
    return None


def test_metrics_of_two_kernels_one_dead_of_a_segfault(server, kernel_id):
    """A second guarded kernel of the server dies of a segfault: /metrics
    has both kernels' memory, and that death counted under its cause only.
    The proxy restarts the kernel in place: the server started it for a
    notebook."""
    session, kid = open_notebook(server, "crash.ipynb")
    k = {"id": kid}
    kc = BlockingKernelClient(connection_file=str(Path(os.environ["JUPYTER_RUNTIME_DIR"]) / f"kernel-{k['id']}.json"))
    kc.load_connection_file()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        run = collect(kc, kc.execute("import ctypes; ctypes.string_at(0)"))
        assert run.reply["content"]["status"] == "error", run.reply

        def counted():
            status, text = server.call("GET", "/metrics")
            assert status == 200
            # The guard restarts the kernel: its memory is the new one's once it is up.
            return text if metric(text, "jupyter_guard_deaths_total", k["id"], cause="segfault") == 1 \
                and metric(text, "jupyter_guard_state", k["id"], state="idle") == 1 else None

        text = wait_until(counted, 60, "the segfault counted on /metrics, the kernel back", interval=0.5)
        for kid in (kernel_id, k["id"]):
            used = metric(text, "jupyter_guard_memory_used_bytes", kid, source="tree_rss")
            assert used is not None and 10 * MiB < used < 500 * MiB, (kid, used)
        assert metric(text, "jupyter_guard_deaths_total", kernel_id, cause="segfault") == 0, text
        # The guard's families pass promtool as they are served (jupyter_server's own are its business).
        guard = "\n".join(ln for ln in text.splitlines() if "jupyter_guard_" in ln) + "\n"
        check = subprocess.run([promtool(), "check", "metrics"], input=guard, capture_output=True, text=True)
        assert check.returncode == 0, f"promtool check metrics:\n{check.stdout}{check.stderr}\n{guard}"
    finally:
        kc.stop_channels()
        server.call("DELETE", f"/api/sessions/{session}")


def test_restart(server, kernel_id):
    """Last of the module's tests on the kernel: it restarts."""
    _, ks = server.call("GET", "/jupyter-guard/kernels")
    [before] = [x for x in ks if x["kernel_id"] == kernel_id]
    status, body = server.call("POST", f"/jupyter-guard/kernels/{kernel_id}/restart")
    assert status == 200 and body["kernel_id"] == kernel_id, (status, body)

    def restarted():
        _, ks = server.call("GET", "/jupyter-guard/kernels")
        k = next((x for x in ks if x["kernel_id"] == kernel_id), None)
        return k if k and k["state"] == "idle" and k.get("kernel_pid") not in (None, before["kernel_pid"]) else None

    after = wait_until(restarted, 60, "the kernel to come back idle with a new process", interval=0.5)
    assert after["proxy_pid"] == before["proxy_pid"], "the proxy stays; the kernel behind it is new"


# ------------------------------------------------ the collector on its own


@pytest.fixture
def guard_pkg(tmp_path, monkeypatch):
    """jupyter_guard importable here, and nothing else of the repository's
    root (whose Go package directories would import as namespace packages)."""
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "jupyter_guard").symlink_to(REPO / "jupyter_guard")
    monkeypatch.syspath_prepend(str(tmp_path / "python"))


def fake_guardctl(tmp_path: Path, script: str) -> str:
    p = tmp_path / "guardctl"
    p.write_text("#!/bin/sh\n" + script)
    p.chmod(0o755)
    return str(p)


def test_collector_passes_guardctl_metrics_on(guard_pkg, tmp_path, monkeypatch):
    from prometheus_client import CollectorRegistry, generate_latest

    from jupyter_guard.metrics import GuardCollector

    monkeypatch.setenv("JUPYTER_GUARD_GUARDCTL", fake_guardctl(tmp_path, r"""
[ "$1" = metrics ] || exit 2
cat <<'END'
# HELP jupyter_guard_memory_used_bytes Memory.
# TYPE jupyter_guard_memory_used_bytes gauge
jupyter_guard_memory_used_bytes{kernel_id="k1",kernelspec="python3-guarded",notebook="a \"b\".ipynb"} 123456789
# HELP jupyter_guard_deaths_total Deaths.
# TYPE jupyter_guard_deaths_total counter
jupyter_guard_deaths_total{kernel_id="k1",kernelspec="python3-guarded",notebook="",cause="segfault"} 2
END
"""))
    reg = CollectorRegistry()
    reg.register(GuardCollector(__import__("logging").getLogger("t")))
    out = generate_latest(reg).decode()
    assert 'jupyter_guard_memory_used_bytes{kernel_id="k1",kernelspec="python3-guarded",notebook="a \\"b\\".ipynb"} 1.23456789e+08' in out, out
    assert "# TYPE jupyter_guard_deaths_total counter" in out, out
    assert any(ln.startswith("jupyter_guard_deaths_total{") and 'cause="segfault"' in ln and ln.endswith(" 2.0")
               for ln in out.splitlines()), out


def test_collector_failure_leaves_metrics_up(guard_pkg, tmp_path, monkeypatch, caplog):
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    from jupyter_guard.metrics import GuardCollector

    monkeypatch.setenv("JUPYTER_GUARD_GUARDCTL", fake_guardctl(tmp_path, "echo 'no runtime dir' >&2; exit 1\n"))
    reg = CollectorRegistry()
    Gauge("other_figure", "Another.", registry=reg).set(1)
    reg.register(GuardCollector(__import__("logging").getLogger("t")))
    out = generate_latest(reg).decode()
    assert "other_figure 1.0" in out and "jupyter_guard" not in out, out
    assert "no runtime dir" in caplog.text
