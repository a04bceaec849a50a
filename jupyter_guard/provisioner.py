"""jupyter-guard's kernel provisioner: every kernel jupyter_client starts
runs under the guard, under its own kernelspec name, so that notebooks
record `python3`, not `python3-guarded`, and run unchanged where
jupyter-guard is not installed.

Registered under the entry point group jupyter_client.kernel_provisioners
as `jupyter-guard` (pyproject.toml). Jupyter uses it for a kernelspec that
names it in metadata.kernel_provisioner, and for every kernelspec that
names none once it is the default: KernelProvisionerFactory.
default_provisioner_name in Jupyter's config (`guardctl install --all`
writes it), or JUPYTER_DEFAULT_PROVISIONER_NAME=jupyter-guard in the
environment (the one switch jupyter console, nbclient, nbconvert and
papermill follow: they read no config for it).

It is jupyter_client's LocalProvisioner with one change: the command it
launches is the one `guardctl kernel-argv` makes of the kernel's own, the
guard's proxy with the kernel after "--", exactly what a wrapped
kernelspec runs (kernelspec.LaunchArgv, in Go). Interrupts, restarts and
shutdowns then go to the proxy as they go to a wrapped spec's: signals to
its process group, interrupt_request on its control port.

Settings for one kernel (a limit) go in the kernelspec:

    "metadata": {"kernel_provisioner": {"provisioner_name": "jupyter-guard",
                                        "config": {"limit": "4GiB"}}}

or, for all, in the environment (JUPYTER_GUARD_LIMIT and the like)."""

from __future__ import annotations

import json
import os
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

from . import guardctl


class GuardProvisioner(LocalProvisioner):
    def __init__(self, **kwargs: Any):
        # KernelProvisionerFactory passes metadata.kernel_provisioner.config
        # as keyword arguments. guardctl reads the guard's settings from the
        # kernelspec itself (and refuses unknown ones), so they are not
        # traits here: only traitlets' own arguments go on.
        traits = set(self.class_trait_names())
        super().__init__(**{k: v for k, v in kwargs.items() if k in traits})

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = await super().pre_launch(**kwargs)
        kwargs["cmd"] = await self._guarded(kwargs["cmd"], kwargs["env"])
        return kwargs

    async def _guarded(self, cmd: list[str], env: dict[str, str]) -> list[str]:
        km = self.parent
        if km is None:
            raise RuntimeError("jupyter-guard's provisioner needs the KernelManager that starts the kernel")
        request = {
            "kernel_name": km.kernel_name,
            "kernelspec": self.kernel_spec.to_dict(),
            "resource_dir": self.kernel_spec.resource_dir,
            # The file the kernel's argv was given, as format_kernel_cmd
            # resolved it.
            "connection_file": os.path.realpath(km.connection_file),
            "argv": cmd,
            # A KernelManager that nobody made its parent is a library's or a
            # script's (nbclient's, so nbconvert's and papermill's too), not a
            # Jupyter server's or a console's: nobody to answer a pause.
            "headless": km.parent is None,
        }
        try:
            # In the kernel's environment: the guard's settings there are
            # checked before anything starts.
            out = await guardctl.run("kernel-argv", input=json.dumps(request).encode(), env=env)
        except guardctl.GuardctlError as err:
            raise RuntimeError(f"jupyter-guard cannot start kernel {km.kernel_name} under the guard: {err}") from None
        reply = json.loads(out)
        if reply.get("note"):
            self.log.info("jupyter-guard: %s", reply["note"])
        return reply["argv"]
