"""jupyter-guard's Jupyter server extension: the guard where users look;
and its kernel provisioner (provisioner.py), which guards every kernel
jupyter_client starts.

It serves, under /jupyter-guard/, what `guardctl status --json` and
`guardctl cells --json KERNEL` print, and runs `guardctl resume|interrupt|
restart KERNEL` on POST, for the lab extension's status-bar item and panel.
Everything goes through the guardctl binary, so the control API's owner
check applies exactly as it does for guardctl in a terminal: the server
sees the kernels of the user it runs as, and no others. It also adds the
figures of `guardctl metrics` to jupyter_server's own /metrics.

Enabled by jupyter-config/jupyter_server_config.d/jupyter_guard.json (the
wheel installs it under etc/jupyter/jupyter_server_config.d/)."""

from __future__ import annotations

import os


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyter_guard"}]


def _load_jupyter_server_extension(server_app) -> None:
    # Imported here, not with the package: the kernel provisioner
    # (jupyter_guard.provisioner) runs where there may be no jupyter_server
    # or prometheus_client (nbclient, papermill).
    from .handlers import setup_handlers
    from .metrics import register_collector

    # The kernels this server starts inherit it: their pause notices then
    # name the panel's buttons (guard/notice).
    os.environ["JUPYTER_GUARD_PANEL"] = "1"
    setup_handlers(server_app.web_app, server_app.log)
    register_collector(server_app.log)
    server_app.log.info("jupyter-guard: /jupyter-guard/ and /metrics figures from %s", _guardctl_for_log())


def _guardctl_for_log() -> str:
    from .guardctl import find_guardctl

    return find_guardctl() or "guardctl (not found yet: set JUPYTER_GUARD_GUARDCTL)"
