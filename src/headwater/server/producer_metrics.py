"""Per-producer figures on ``/metrics``, sampled from the store like the row counts.

Read from the store's ``producer_hours`` and ``producer_agents`` (see
:mod:`headwater.store.producers`) at most every ``every`` seconds, so every
worker and replica shows the same figures and no request pays for them:

* ``headwater_producer_events_total`` and ``headwater_producer_rejected_total``
  -- events stored and refused per producer and job namespace over the hours
  the store keeps (retention drops older hours: Prometheus sees a counter
  reset, which ``rate()`` handles);
* ``headwater_producer_last_seen_timestamp_seconds`` -- the last arrival;
* ``headwater_producer_agent_events{outcome}`` and
  ``headwater_producer_agent_send_seconds{quantile}`` -- the latest emission
  figures a headwater agent sent for that producer and namespace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from datetime import UTC
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from headwater.errors import HeadwaterError

if TYPE_CHECKING:
    from headwater.store import Store
    from headwater.store.producers import ProducerFigures

__all__ = ["AGENT_OUTCOMES", "ProducerSampler"]

logger = logging.getLogger(__name__)

#: The agent's counters shown per producer, in the facet's names.
AGENT_OUTCOMES = ("queued", "sent", "retried", "spooled", "replayed", "rejected", "dropped")
_LABELS = ["producer", "namespace"]


class ProducerSampler(Collector):
    """The producers' figures, read from the store at most every ``every`` seconds."""

    def __init__(self, store: Store, every: float) -> None:
        self.store = store
        self.every = every
        self._lock = threading.Lock()
        self._at: float | None = None
        self._figures: list[ProducerFigures] = []

    def collect(self) -> Iterable[Metric]:
        figures = self._sample()
        events = CounterMetricFamily(
            "headwater_producer_events",
            "Events stored per producer and job namespace (sampled).",
            labels=_LABELS,
        )
        rejected = CounterMetricFamily(
            "headwater_producer_rejected",
            "Events refused per producer and job namespace (sampled).",
            labels=_LABELS,
        )
        seen = GaugeMetricFamily(
            "headwater_producer_last_seen_timestamp_seconds",
            "Unix time of the producer's last arrival (sampled).",
            labels=_LABELS,
        )
        last_hour = GaugeMetricFamily(
            "headwater_producer_events_last_hour",
            "Events stored in the last 60 minutes (sampled).",
            labels=_LABELS,
        )
        agent = GaugeMetricFamily(
            "headwater_producer_agent_events",
            "The headwater agent's own counters, from its latest headwater_emission facet.",
            labels=[*_LABELS, "outcome"],
        )
        send = GaugeMetricFamily(
            "headwater_producer_agent_send_seconds",
            "The headwater agent's send latency, from its latest headwater_emission facet.",
            labels=[*_LABELS, "quantile"],
        )
        for f in figures:
            key = [f.producer, f.namespace]
            events.add_metric(key, f.events)
            rejected.add_metric(key, f.rejected)
            seen.add_metric(key, f.last_seen.replace(tzinfo=UTC).timestamp())
            last_hour.add_metric(key, f.events_last_hour)
            found = f.agent["figures"] if f.agent is not None else None
            if not isinstance(found, dict):
                continue
            for outcome in AGENT_OUTCOMES:
                value = found.get(outcome)
                if isinstance(value, int | float):
                    agent.add_metric([*key, outcome], value)
            send_ms = found.get("sendMs")
            if isinstance(send_ms, dict):
                for quantile, name in (("0.5", "p50"), ("0.95", "p95")):
                    value = send_ms.get(name)
                    if isinstance(value, int | float):
                        send.add_metric([*key, quantile], value / 1000.0)
        yield from (events, rejected, seen, last_hour, agent, send)

    def _sample(self) -> list[ProducerFigures]:
        with self._lock:
            now = time.monotonic()
            if self._at is None or now - self._at >= self.every:
                try:
                    self._figures = self.store.producer_figures()
                except HeadwaterError as exc:
                    # The last sample stands; the next scrape tries again.
                    logger.warning("could not read the producers' figures: %s", exc)
                else:
                    self._at = now
            return self._figures
