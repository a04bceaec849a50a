"""nbclient's own test suite (0.11.0, from its sdist: `make nbclient-suite`)
passes the same with the guarded kernel installed as `python3` as with
plain ipykernel 7.4: the same tests pass. Headless clients must find the
guarded kernel to be Jupyter's own kernel: silent on stderr at a normal
start and shutdown (the parallel-notebook tests check), and a kernel that
dies is a dead kernel (DeadKernelError), not one restarted behind their
back.

The two runs go side by side, each with Jupyter directories of its own;
the guarded one has the guarded spec, as `guardctl install` writes it, at
JUPYTER_PATH/kernels/python3, which comes before the environment's own.
nbclient's pytest configuration (its pyproject.toml: warnings are errors)
applies as upstream runs it. A test that passes in one run only is run
again, alone, both ways, before it counts as a difference: nbclient marks
some of its tests flaky."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import KERNEL_ENVS, REPO
from support import missing

SUITE = REPO / "bin" / "nbclient-suite"
PYTHON = KERNEL_ENVS[0].python  # .venv: ipykernel 7.4, nbclient 0.11.0
SUITE_SECONDS = 420


def jupyter_env(base: Path) -> dict[str, str]:
    """Jupyter directories of their own under base, the suite's extra
    packages on PYTHONPATH, .venv's scripts (jupyter-execute) on PATH, and
    none of this suite's settings."""
    dirs = {"JUPYTER_DATA_DIR": "data", "JUPYTER_PATH": "path", "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTER_CONFIG_DIR": "config", "IPYTHONDIR": "ipython"}
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS", "JUPYTER_GUARD_RESTART", "JUPYTER_GUARD_TEST_STRICT")}
    for var, name in dirs.items():
        (base / name).mkdir(parents=True)
        env[var] = str(base / name)
    (base / "runtime").chmod(0o700)
    env["PYTHONPATH"] = str(SUITE / "deps")
    env["PATH"] = f"{PYTHON.parent}:{env['PATH']}"
    return env


def guard_python3(env: dict[str, str], guardctl: Path) -> None:
    """The guarded form of .venv's python3 spec, as guardctl install writes
    it, installed as python3 where Jupyter looks first."""
    subprocess.run([str(guardctl), "install", "--user", "--python", str(PYTHON), "--kernel", "python3"],
                   env=env, check=True, capture_output=True, text=True)
    guarded = Path(env["JUPYTER_DATA_DIR"]) / "kernels" / "python3-guarded"
    shutil.copytree(guarded, Path(env["JUPYTER_PATH"]) / "kernels" / "python3")


def start(env: dict[str, str], report: Path, tests: list[str]) -> subprocess.Popen:
    args = [str(PYTHON), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "asyncio_default_fixture_loop_scope=function",
            f"--junitxml={report}", *tests]
    return subprocess.Popen(args, cwd=SUITE / "src", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def node_id(classname: str, name: str) -> str:
    """The pytest node id of a JUnit test case: tests.test_client.TestExecute
    and test_x are tests/test_client.py::TestExecute::test_x."""
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        if (SUITE / "src" / Path(*parts[:i])).with_suffix(".py").is_file():
            return "::".join(["/".join(parts[:i]) + ".py", *parts[i:], name])
    raise AssertionError(f"no test module for {classname}")


def passed(report: Path) -> tuple[set[str], set[str]]:
    """The tests that passed and all that ran, by pytest node id."""
    ok, ran = set(), set()
    for case in ET.parse(report).getroot().iter("testcase"):
        name = node_id(case.get("classname", ""), case.get("name", ""))
        ran.add(name)
        if not any(child.tag in ("failure", "error", "skipped") for child in case):
            ok.add(name)
    return ok, ran


def run_both(tmp: Path, guardctl: Path, tests: list[str]) -> tuple[dict[str, set[str]], str]:
    """Runs tests with plain ipykernel and with the guarded kernel, side by
    side; what passed in each, and the guarded run's output."""
    envs = {"plain": jupyter_env(tmp / "plain"), "guarded": jupyter_env(tmp / "guarded")}
    guard_python3(envs["guarded"], guardctl)
    procs = {how: start(env, tmp / f"{how}.xml", tests) for how, env in envs.items()}
    out = {}
    for how, p in procs.items():
        try:
            out[how], _ = p.communicate(timeout=SUITE_SECONDS)
        except subprocess.TimeoutExpired:
            for q in procs.values():
                q.kill()
            pytest.fail(f"nbclient's suite ({how}) did not end within {SUITE_SECONDS} s")
    result = {}
    for how in procs:
        result[how], ran = passed(tmp / f"{how}.xml")
        assert tests == ["tests"] or set(tests) <= ran, f"{how}: ran {sorted(ran)}, not {tests}:\n{out[how][-3000:]}"
    return result, out["guarded"]


@pytest.mark.timeout(2 * SUITE_SECONDS + 60)
def test_nbclient_suite_passes_the_same_with_the_guarded_kernel(kernelspecs, guardctl, tmp_path):
    if not (SUITE / ".installed").exists():
        missing("nbclient's test suite in bin/nbclient-suite: make nbclient-suite")
    ok, output = run_both(tmp_path / "all", guardctl, ["tests"])
    print(f"plain ipykernel: {len(ok['plain'])} passed; guarded: {len(ok['guarded'])} passed")
    # nbclient 0.11.0 has 127 tests, every one of which passes here with plain ipykernel.
    assert len(ok["plain"]) >= 120, f"the plain run passed only {len(ok['plain'])} tests"
    differ = sorted(ok["plain"] ^ ok["guarded"])
    if differ:
        print(f"passed in one run only: {differ}; again, alone")
        again, output = run_both(tmp_path / "again", guardctl, differ)
        differ = sorted(again["plain"] ^ again["guarded"])
    assert not differ, (f"passed in one run only: plain {sorted(set(differ) & ok['plain'])}, "
                        f"guarded {sorted(set(differ) & ok['guarded'])}\n--- the guarded run:\n{output[-6000:]}")
