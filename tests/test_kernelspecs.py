"""The guarded kernelspecs the suite runs on are the ones users get: Jupyter
itself lists them next to the plain ones, and they have the shape the rest
of the suite assumes."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import KERNEL_ENVS, REPO


def test_jupyter_lists_plain_and_guarded(kernelspecs):
    out = subprocess.run([str(REPO / ".venv" / "bin" / "jupyter"), "kernelspec", "list", "--json"],
                         check=True, capture_output=True, text=True).stdout
    specs = json.loads(out)["kernelspecs"]
    for env in KERNEL_ENVS:
        plain, guarded = specs[env.id]["spec"], specs[env.guarded]["spec"]
        assert guarded["display_name"] == plain["display_name"] + " (guarded)"
        assert guarded["language"] == plain["language"]
        assert guarded["argv"][-len(plain["argv"]):] == plain["argv"]
        assert guarded["metadata"]["jupyter_guard"] == {"wraps": env.id}
        # The proxy is the CurveZMQ server, whatever its kernel offers.
        assert guarded["metadata"]["supported_encryption"] == ["curve"]
        assert guarded["metadata"]["debugger"] is True
        assert specs[env.id + "-msg-guarded"]["spec"]["interrupt_mode"] == "message"
