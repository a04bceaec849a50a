"""Fixtures for the integration suite: the guardctl binary, a private set of
Jupyter directories, the kernelspecs installed there (plain and guarded, for
each kernel environment), and kernels started the way users start them
(jupyter_client's KernelManager and BlockingKernelClient)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager

from support import EXEC_TIMEOUT, START_TIMEOUT, Proc, Run, execute, processes_mentioning

REPO = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent


# ------------------------------------------------------------ environments


@dataclass(frozen=True)
class KernelEnv:
    """A Python environment a kernelspec can point at."""

    id: str  # also the plain kernelspec's name
    venv: Path
    ipykernel: str  # the version prefix its ipykernel must have

    @property
    def python(self) -> Path:
        # Not resolved: a venv's bin/python is a symlink to the base
        # interpreter, and only the venv path gives the venv's packages.
        return self.venv / "bin" / "python"

    @property
    def guarded(self) -> str:
        return self.id + "-guarded"

    @property
    def major(self) -> int:
        return int(self.ipykernel.split(".")[0])


KERNEL_ENVS = [
    KernelEnv("ipykernel7", REPO / ".venv", "7.4."),
    KernelEnv("ipykernel6", REPO / ".venv-ipykernel6", "6.29."),
]


@pytest.fixture(scope="session", params=KERNEL_ENVS, ids=lambda e: e.id)
def kenv(request) -> KernelEnv:
    """Each kernel environment in turn. Session scope groups the tests by
    environment, so module-scoped kernels are started once per environment."""
    env: KernelEnv = request.param
    if not env.python.exists():
        pytest.fail(f"{env.python} is missing: run `bash .ci/run` (or create it from requirements/)")
    return env


# ------------------------------------------------------------------ guardctl


@pytest.fixture(scope="session")
def guardctl(tmp_path_factory) -> Path:
    """The guardctl under test: $JUPYTER_GUARD_BIN (make test builds
    bin/guardctl), else built from this checkout once per session, so a bare
    `pytest tests` never runs a stale binary."""
    given = os.environ.get("JUPYTER_GUARD_BIN")
    if given:
        path = Path(given).resolve()
        assert path.is_file() and os.access(path, os.X_OK), f"JUPYTER_GUARD_BIN={given} is not an executable"
        return path
    out = tmp_path_factory.mktemp("bin") / "guardctl"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/guardctl"], cwd=REPO, check=True)
    return out


# ------------------------------------------------------- jupyter directories


@pytest.fixture(scope="session")
def jupyter_dirs(tmp_path_factory):
    """Private Jupyter directories for the session, so the user's own
    kernelspecs, history and runtime files neither leak in nor get touched.
    Everything started afterwards (guardctl install, kernels, nbconvert)
    inherits them through the environment."""
    root = tmp_path_factory.mktemp("jupyter")
    dirs = {
        "JUPYTER_DATA_DIR": root / "data",
        "JUPYTER_PATH": root / "path",
        "JUPYTER_RUNTIME_DIR": root / "runtime",
        "JUPYTER_CONFIG_DIR": root / "config",
        "IPYTHONDIR": root / "ipython",
    }
    saved = {k: os.environ.get(k) for k in dirs}
    for k, d in dirs.items():
        d.mkdir()
        os.environ[k] = str(d)
    # The test harness's own stack must not leak into the kernels' Pythons.
    os.environ.pop("PYTHONPATH", None)
    yield dirs
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def write_spec(kernels_dir: Path, name: str, spec: dict) -> Path:
    d = kernels_dir / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.json").write_text(json.dumps(spec, indent=1))
    return d


@pytest.fixture(scope="session")
def kernelspecs(jupyter_dirs, guardctl) -> dict[str, Path]:
    """Installs, for each kernel environment, the plain spec users have
    (`<venv>/bin/python -m ipykernel_launcher -f {connection_file}`) and its
    guarded wrapper; plus variants for the interrupt modes and a sleeper
    "kernel" that ignores Jupyter entirely. Returns name → spec directory."""
    plain_dir = jupyter_dirs["JUPYTER_PATH"] / "kernels"
    user_dir = jupyter_dirs["JUPYTER_DATA_DIR"] / "kernels"
    plain: list[str] = []
    for env in KERNEL_ENVS:
        argv = [str(env.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        # As `python -m ipykernel install` writes it: ipykernel 7.3+ offers CurveZMQ.
        metadata = {"debugger": True, **({"supported_encryption": ["curve"]} if env.major >= 7 else {})}
        base = {"argv": argv, "language": "python", "metadata": metadata}
        write_spec(plain_dir, env.id, {**base, "display_name": env.id})
        # A wrapped kernel that wants interrupts as messages: the proxy must
        # pass interrupt_request through to it.
        write_spec(plain_dir, env.id + "-msg", {**base, "display_name": env.id + " msg", "interrupt_mode": "message"})
        plain += [env.id, env.id + "-msg"]
    write_spec(plain_dir, "sleeper", {
        "argv": [str(KERNEL_ENVS[0].python), str(TESTS / "kernels" / "sleeper.py"), "{connection_file}"],
        "display_name": "sleeper", "language": "python"})
    plain.append("sleeper")

    args = [str(guardctl), "install", "--user", "--python", str(KERNEL_ENVS[0].python)]
    for name in plain:
        args += ["--kernel", name]
    subprocess.run(args, check=True, capture_output=True, text=True)

    # The frontend asks by message, the wrapped ipykernel takes signals: the
    # proxy must turn interrupt_request into SIGINT. No installer writes this
    # combination; it is the guarded spec with only the front mode changed.
    for env in KERNEL_ENVS:
        spec = json.loads((user_dir / env.guarded / "kernel.json").read_text())
        assert spec["argv"][4:6] == ["--interrupt-mode", "signal"], spec["argv"]
        spec["interrupt_mode"] = "message"
        spec["display_name"] += " (message interrupts)"
        write_spec(user_dir, env.guarded + "-msgfront", spec)

    specs = {d.name: d for d in [*plain_dir.iterdir(), *user_dir.iterdir()]}
    for name in plain:
        assert name + "-guarded" in specs, f"no guarded spec for {name}: {sorted(specs)}"
        guarded = json.loads((specs[name + "-guarded"] / "kernel.json").read_text())
        assert guarded["argv"][0] == str(guardctl), guarded["argv"]
    return specs


# ------------------------------------------------------------------ kernels


class Kernel:
    """A kernel started through jupyter_client, with its stdout and stderr
    (for a guarded kernel: guardctl's log and the child's output) in a file."""

    def __init__(self, spec: str, log: Path, wait: bool = True, configure=None):
        self.spec = spec
        self.log = log
        self._log_file = open(log, "wb")
        self.km = KernelManager(kernel_name=spec)
        if configure is not None:
            configure(self.km)  # e.g. another transport, before the connection file is written
        self.km.start_kernel(stdout=self._log_file, stderr=self._log_file)
        self.proc = Proc.of(self.km.provisioner.process.pid)
        self.kernel_id = Path(self.km.connection_file).stem.removeprefix("kernel-")
        self.kc = None
        if wait:
            self.connect()

    def connect(self):
        """Connects a client and waits until the kernel answers on shell and
        iopub, as jupyter_client.start_new_kernel does."""
        self.kc = self.km.client()
        self.kc.start_channels()
        try:
            self.kc.wait_for_ready(timeout=START_TIMEOUT)
        except RuntimeError as e:
            raise AssertionError(f"{self.spec} did not start: {e}\n--- its output:\n{self.output()}") from e
        self.flush_shell()

    def flush_shell(self):
        """wait_for_ready asks for kernel_info until one reply arrives; the
        replies to its earlier asks may still be on their way."""
        while True:
            try:
                self.kc.get_shell_msg(timeout=0.2)
            except queue.Empty:
                return

    def run(self, code: str, timeout: float = EXEC_TIMEOUT, **kwargs) -> Run:
        try:
            return execute(self.kc, code, timeout=timeout, **kwargs)
        except TimeoutError as e:
            # Say what the proxy was doing (paused by the memory guard? dead?).
            state = "running" if self.proc.running() else "gone"
            raise AssertionError(f"{self.spec}: no answer to {code!r} in {timeout}s ({e}); "
                                 f"process {self.proc.pid} is {state}; its output:\n{self.output()[-5000:]}") from e

    def ok(self, code: str, **kwargs) -> Run:
        """Runs code that must succeed."""
        r = self.run(code, **kwargs)
        assert r.status == "ok", f"{code!r} failed on {self.spec}: {r.reply['content']}\n--- output:\n{self.output()}"
        return r

    def pid(self) -> Proc:
        """The process running the cells, as the kernel itself reports."""
        return Proc.of(int(self.ok("import os; print(os.getpid())").stdout))

    def output(self) -> str:
        self._log_file.flush()
        return self.log.read_text(errors="replace")

    def processes(self) -> list[int]:
        return processes_mentioning(self.kernel_id)

    def shutdown(self):
        if self.kc is not None:
            self.kc.stop_channels()
        try:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=False)
        finally:
            # A failed test must not leave its processes for the next one:
            # anything still naming this kernel's id was started by it.
            for pid in processes_mentioning(self.kernel_id):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._log_file.close()


class Kernels:
    """Starts kernels and shuts down every one it started."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.started: list[Kernel] = []

    def start(self, spec: str, wait: bool = True, configure=None) -> Kernel:
        log = self.log_dir / f"{len(self.started):02d}-{spec}.log"
        k = Kernel(spec, log, wait=wait, configure=configure)
        self.started.append(k)
        return k

    def shutdown_all(self):
        errors = []
        for k in self.started:
            try:
                k.shutdown()
            except Exception as e:  # noqa: BLE001 — report all, shut down the rest
                errors.append(f"{k.spec}: {e!r}")
        self.started.clear()
        assert not errors, errors


@pytest.fixture
def kernels(kernelspecs, tmp_path) -> Kernels:
    """Kernels for one test, shut down after it."""
    ks = Kernels(tmp_path)
    yield ks
    ks.shutdown_all()


@pytest.fixture(scope="module")
def module_kernels(kernelspecs, tmp_path_factory) -> Kernels:
    """Kernels shared by the tests of one module (for the tests that only
    read), shut down after the module."""
    ks = Kernels(tmp_path_factory.mktemp("kernels"))
    yield ks
    ks.shutdown_all()


@pytest.fixture(scope="module")
def plain(module_kernels, kenv) -> Kernel:
    """The environment's kernel as users have it, without the proxy."""
    return module_kernels.start(kenv.id)


@pytest.fixture(scope="module")
def guarded(module_kernels, kenv) -> Kernel:
    """The same kernel behind guardctl."""
    return module_kernels.start(kenv.guarded)
