"""The host's Prometheus metrics (``GET /metrics``): a registry of its own per host (several
hosts may run in one process, the tests' do), whose collector reads the current values at
scrape time: the store's counts (one aggregate query each, :meth:`CompetitionStore.counts`), the
live bots connected, the supervised parts' states; beside them the HTTP responses by status
class (counted by :class:`ResponseCounter`, an ASGI middleware) and the process's own figures
(descriptors in use, memory, CPU: prometheus-client's process collector, on Linux).

Matches per minute is Prometheus's to derive: ``rate(arena_matches_finished_total[5m]) * 60``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.host.store import PHASES, CompetitionStore

#: The content type of :func:`HostMetrics.scrape`'s text.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class CompetitionCollector(Collector):
    """The competition's values, read when Prometheus scrapes (in the API's worker thread)."""

    def __init__(
        self,
        store: CompetitionStore,
        live_bots: Callable[[], int],
        parts: Callable[[], dict[str, str]],
    ) -> None:
        self._store, self._live_bots, self._parts = store, live_bots, parts

    def collect(self) -> Iterator[Metric]:
        counts = self._store.counts()
        matches = CounterMetricFamily(
            "arena_matches_finished", "Matches finished, by phase", labels=["phase"]
        )
        pending = GaugeMetricFamily(
            "arena_units_pending", "Units (deals) waiting to be played, by phase", labels=["phase"]
        )
        failed = CounterMetricFamily(
            "arena_units_failed", "Units that failed (not rated), by phase", labels=["phase"]
        )
        for phase in PHASES:
            matches.add_metric([phase], counts.matches.get(phase, 0))
            pending.add_metric([phase], counts.units.get((phase, "pending"), 0))
            failed.add_metric([phase], counts.units.get((phase, "failed"), 0))
        yield from (matches, pending, failed)
        yield GaugeMetricFamily(
            "arena_validation_queue",
            "Versions waiting for or in their validation",
            value=counts.validating,
        )
        yield GaugeMetricFamily(
            "arena_live_bots_connected", "Live bots connected now", value=self._live_bots()
        )
        faults = CounterMetricFamily(
            "arena_faults", "Faults in finished matches, by kind", labels=["kind"]
        )
        for kind, n in sorted(counts.faults.items()):
            faults.add_metric([kind], n)
        yield faults
        up = GaugeMetricFamily(
            "arena_part_up",
            "0 while a part of the host waits to restart after a failure, else 1",
            labels=["part"],
        )
        for name, state in sorted(self._parts().items()):
            up.add_metric([name], 0 if state == "restarting" else 1)
        yield up


class HostMetrics:
    """One host's registry: its competition's values (``collector``), its responses and its
    process."""

    def __init__(self, collector: CompetitionCollector) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        ProcessCollector(registry=self.registry)
        self.responses = Counter(
            "arena_http_responses",
            "HTTP responses, by status class",
            ["status_class"],
            registry=self.registry,
        )

    def scrape(self) -> bytes:
        """The text Prometheus reads (queries the store: call it from a worker thread)."""
        return generate_latest(self.registry)


class ResponseCounter:
    """ASGI middleware: each HTTP response counted by its status class (``2xx`` … ``5xx``)."""

    def __init__(self, app: ASGIApp, metrics: HostMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                self.metrics.responses.labels(f"{status // 100}xx").inc()
            await send(message)

        await self.app(scope, receive, counting)
