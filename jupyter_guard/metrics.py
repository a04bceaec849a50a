"""The guard's figures on jupyter_server's /metrics: a collector that runs
`guardctl metrics` at scrape time and passes its families on, so /metrics
and node_exporter's textfile collector show the same numbers."""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from . import guardctl


class GuardCollector:
    def __init__(self, log: logging.Logger):
        self.log = log

    def describe(self):
        # Nothing known before a scrape; saying so keeps registering from
        # running guardctl.
        return []

    def collect(self):
        try:
            text = guardctl.run_sync("metrics")
        except Exception as err:  # noqa: BLE001 -- a scrape of /metrics must not fail for the guard
            self.log.warning("jupyter-guard: guardctl metrics failed: %s", err)
            return
        yield from text_string_to_metric_families(text)


_registered: GuardCollector | None = None


def register_collector(log: logging.Logger, registry=REGISTRY) -> GuardCollector:
    """Registers the collector once per process."""
    global _registered
    if _registered is None:
        _registered = GuardCollector(log)
        registry.register(_registered)
    return _registered
