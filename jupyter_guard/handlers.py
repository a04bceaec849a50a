"""REST handlers under /jupyter-guard/, for the lab extension.

  GET  /jupyter-guard/kernels                   guardctl status --json
  GET  /jupyter-guard/kernels/ID/cells          guardctl cells --json ID
  GET  /jupyter-guard/kernels/ID/history        guardctl history --json ID
  POST /jupyter-guard/kernels/ID/resume         guardctl resume --json ID
  POST /jupyter-guard/kernels/ID/interrupt      ... interrupt
  POST /jupyter-guard/kernels/ID/restart        ... restart

ID is a kernel id (or a prefix of one): hex digits and dashes only, so it
can never be read as one of guardctl's options or as a notebook's name.
Errors answer {"error": what guardctl said}: 404 for no such kernel, 409
for an action the kernel's state refuses (resume of a kernel that is not
paused), 502 when guardctl itself failed."""

from __future__ import annotations

import asyncio
import json
import time

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from . import guardctl

KERNEL_ID = r"(?P<kernel_id>[0-9a-fA-F][0-9a-fA-F-]{0,63})"

# Several tabs polling at once share one `guardctl status` run per interval.
STATUS_TTL = 0.5


class _StatusCache:
    def __init__(self):
        self.at = 0.0
        self.value = None
        self.pending: asyncio.Future | None = None

    async def get(self):
        if self.value is not None and time.monotonic() - self.at < STATUS_TTL:
            return self.value
        if self.pending is None:
            self.pending = asyncio.ensure_future(guardctl.run_json("status", "--json"))
            try:
                self.value = await self.pending
                self.at = time.monotonic()
            finally:
                self.pending = None
            return self.value
        return await asyncio.shield(self.pending)

    def forget(self):
        self.value = None


STATUS = _StatusCache()


class _Base(APIHandler):
    def fail(self, err: guardctl.GuardctlError) -> None:
        msg = str(err)
        if "no guarded kernel matches" in msg:
            code = 404
        elif err.returncode == 1 and "kernel " in msg:
            code = 409  # guardctl reached the kernel, which refused
        else:
            code = 502
        self.set_status(code)
        self.finish(json.dumps({"error": msg}))


class KernelsHandler(_Base):
    @web.authenticated
    async def get(self):
        try:
            states = await STATUS.get()
        except guardctl.GuardctlError as err:
            return self.fail(err)
        self.finish(json.dumps(states))


class KernelReadHandler(_Base):
    """A kernel's ledger (cells) or its memory over the last minutes
    (history)."""

    @web.authenticated
    async def get(self, kernel_id: str, what: str):
        try:
            answer = await guardctl.run_json(what, "--json", kernel_id)
        except guardctl.GuardctlError as err:
            return self.fail(err)
        self.finish(json.dumps(answer))


class ActionHandler(_Base):
    @web.authenticated
    async def post(self, kernel_id: str, action: str):
        try:
            state = await guardctl.run_json(action, "--json", kernel_id)
        except guardctl.GuardctlError as err:
            return self.fail(err)
        finally:
            STATUS.forget()
        self.log.info("jupyter-guard: %s of kernel %s by %s", action, kernel_id, getattr(self.current_user, "username", self.current_user))
        self.finish(json.dumps(state))


def setup_handlers(web_app, log=None) -> None:
    base = url_path_join(web_app.settings["base_url"], "jupyter-guard")
    web_app.add_handlers(".*$", [
        (url_path_join(base, "kernels"), KernelsHandler),
        (url_path_join(base, "kernels", KERNEL_ID, r"(?P<what>cells|history)"), KernelReadHandler),
        (url_path_join(base, "kernels", KERNEL_ID, r"(?P<action>resume|interrupt|restart)"), ActionHandler),
    ])
