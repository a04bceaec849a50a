"""The guarded kernelspecs the suite runs on are the ones users get: Jupyter
itself lists them next to the plain ones, and they have the shape the rest
of the suite assumes."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import KERNEL_ENVS, REPO, install_available, wrap_by_hand


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
        assert specs[env.id + "-msg-guarded"]["spec"]["interrupt_mode"] == "message"


def test_install_writes_what_the_suite_would(kernelspecs, guardctl, tmp_path):
    """The suite falls back to writing guarded specs by hand where `guardctl
    install` is missing; both must agree, or the fallback tests something
    users never run."""
    if not install_available(guardctl):
        pytest.skip("guardctl install is not available in this checkout")
    for name in [KERNEL_ENVS[0].id, KERNEL_ENVS[0].id + "-msg"]:
        wrap_by_hand(guardctl, kernelspecs[name], tmp_path)
        by_hand = json.loads((tmp_path / (name + "-guarded") / "kernel.json").read_text())
        installed = json.loads((kernelspecs[name + "-guarded"] / "kernel.json").read_text())
        assert installed == by_hand
