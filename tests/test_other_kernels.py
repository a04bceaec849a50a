"""Kernels other than ipykernel, through the proxy as users run them.

Deno's kernel (PyPI `deno`, `deno jupyter`) answers on shell and control
without echoing the routing identities the request came with, where
ipykernel and xeus echo them: the proxy routes each reply by the request it
answers (parent_header.msg_id), or a Deno kernel never looks ready."""

from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, write_spec
from support import EXEC_TIMEOUT

DENO = REPO / ".venv" / "bin" / "deno"


@pytest.fixture(scope="module")
def deno_specs(kernelspecs, jupyter_dirs, guardctl) -> tuple[str, str]:
    """The spec `deno jupyter --install` writes (it ignores JUPYTER_DATA_DIR,
    so it is written here by hand, as the team notes say), and its guarded
    wrapper, installed the users' way."""
    if not DENO.exists():
        pytest.fail(f"{DENO} is missing: requirements/test.txt pins deno")
    write_spec(jupyter_dirs["JUPYTER_PATH"] / "kernels", "deno", {
        "argv": [str(DENO), "jupyter", "--kernel", "--conn", "{connection_file}"],
        "display_name": "Deno", "language": "typescript"})
    subprocess.run([str(guardctl), "install", "--user", "--kernel", "deno"], check=True, capture_output=True)
    return "deno", "deno-guarded"


def test_deno_answers_through_the_proxy(kernels, deno_specs):
    """Ready, a cell's output and result, and kernel_info after it: the same
    through the proxy as without it."""
    seen = {}
    for spec in deno_specs:
        k = kernels.start(spec)  # waits for kernel_info: it timed out guarded
        msg_id = k.kc.execute("console.log(6 * 7); 40 + 2")
        reply = k.kc.get_shell_msg(timeout=EXEC_TIMEOUT)
        assert reply["parent_header"]["msg_id"] == msg_id and reply["content"]["status"] == "ok", reply
        # Deno, guarded or not, may publish a cell's output after its idle:
        # read until both the idle and the result are in.
        out: dict[str, list] = {"status": [], "stream": [], "execute_result": []}
        while not (out["execute_result"] and "idle" in out["status"]):
            m = k.kc.get_iopub_msg(timeout=EXEC_TIMEOUT)
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] in out:
                c = m["content"]
                out[m["msg_type"]].append(c.get("execution_state") or c.get("text") or c["data"]["text/plain"])
        info = k.kc.kernel_info(reply=True, timeout=EXEC_TIMEOUT)["content"]
        seen[spec] = (out, info["implementation"], info["language_info"]["name"])
    assert seen["deno-guarded"] == seen["deno"], seen
    assert seen["deno"][0]["stream"] == ["42\n"]
