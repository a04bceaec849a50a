"""A whole notebook, executed the ways users execute notebooks outside the
browser (nbclient, `jupyter nbconvert --execute`), comes out the same on the
guarded kernel as on the plain one."""

from __future__ import annotations

import subprocess

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import REPO

NOTEBOOK = REPO / "testdata" / "notebooks" / "basic.ipynb"


def with_nbclient(kernel_name: str):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name=kernel_name, timeout=120, startup_timeout=60).execute()
    return nb


def with_nbconvert(kernel_name: str, out_dir):
    subprocess.run([str(REPO / ".venv" / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                    f"--ExecutePreprocessor.kernel_name={kernel_name}", "--ExecutePreprocessor.timeout=120",
                    "--output-dir", str(out_dir), str(NOTEBOOK)],
                   check=True, capture_output=True, timeout=300)
    return nbformat.read(out_dir / NOTEBOOK.name, as_version=4)


def results(nb) -> list:
    """Each code cell's execution count and outputs: what a user sees. The
    execution timestamps nbclient writes into cell metadata are dropped."""
    nbformat.validate(nb)
    return [(c.execution_count, joined_streams(c.outputs)) for c in nb.cells if c.cell_type == "code"]


def joined_streams(outputs: list) -> list:
    """Outputs as the notebook shows them: consecutive stream outputs of one
    name run together. How a print is cut into stream messages depends on
    when the kernel's output thread flushes, which varies from run to run
    on a busy machine, plain kernel or guarded."""
    out = []
    for o in outputs:
        if o.get("output_type") == "stream" and out and out[-1].get("output_type") == "stream" \
                and out[-1].get("name") == o.get("name"):
            out[-1] = {**out[-1], "text": out[-1]["text"] + o["text"]}
        else:
            out.append(o)
    return out


@pytest.fixture(scope="module")
def plain_results(kenv, kernelspecs):
    return results(with_nbclient(kenv.id))


def check_content(res):
    """The notebook really ran: spot checks of what each kind of cell gives."""
    assert [count for count, _ in res] == list(range(1, len(res) + 1))
    texts = [[o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in outs] for _, outs in res]
    assert texts[0] == ["hello from the notebook\n", "a warning on stderr\n"]
    assert texts[1] == ["45"]
    assert texts[2] == ["line 0\nline 1\nline 2\n"]
    assert res[3][1][0]["data"]["text/html"] == "<b>bold</b> and <i>italic</i>"
    assert res[3][1][2]["data"]["application/json"] == {"answer": 42, "list": [1, 2, 3]}
    assert texts[4] == ["'final version'"]  # update_display_data replaced the output in place
    assert texts[5][0] == "66 int64\n" and texts[5][1].startswith("array([[ 0,  4,  8],")
    assert texts[7] == ["ünïcødé ✓ 漢字\n", "12"]


def test_nbclient_plain_and_guarded_agree(kenv, plain_results):
    guarded = results(with_nbclient(kenv.guarded))
    check_content(plain_results)
    assert guarded == plain_results


def test_nbconvert_execute_on_the_guarded_kernel(kenv, plain_results, tmp_path):
    guarded = results(with_nbconvert(kenv.guarded, tmp_path))
    check_content(guarded)
    assert guarded == plain_results
