"""The agent's emission figures: what it queued, sent, retried, spooled and lost.

Platform teams watch lineage emission next to job latency, and the server
cannot see what a producer kept to itself (events still spooled on a node,
events dropped with the spool off). So the agent reports its own figures three
ways, all built here from the counters and timings :class:`AgentMetrics` keeps
(the emitter counts events, the capture times each action):

* :func:`emission_figures` -- a plain dict, what ``headwater.agent.stats()``
  returns;
* :func:`emission_facet` -- the ``headwater_emission`` run facet on the
  application run's COMPLETE or FAIL (left out with
  ``spark.openlineage.facets.headwater_emission.disabled=true``), which the
  headwater server shows per producer;
* :func:`log_summary` -- one line at application end, at INFO, or at WARNING
  when any event was spooled, refused or dropped.

The figures of the facet are those of the moment the application's last event
is built: that event itself is not counted yet.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from headwater.events.model import PRODUCER

__all__ = [
    "AgentMetrics",
    "EMISSION_FACET",
    "EMISSION_FACET_SCHEMA",
    "emission_facet",
    "emission_figures",
    "log_summary",
    "percentile",
]

logger = logging.getLogger("headwater.agent")

#: The run facet's name, as ``spark.openlineage.facets.<name>.disabled`` spells it.
EMISSION_FACET = "headwater_emission"
#: The facet's schema: the spec's base run facet, as the agent's other custom facets.
EMISSION_FACET_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"

_COUNTERS = ("queued", "sent", "retried", "spooled", "replayed", "rejected", "dropped")
# AgentMetrics names two of them differently: every event handed to emit() is
# queued, and a lost event is one neither delivered nor kept in a spool file.
_SOURCE = {"queued": "emitted", "dropped": "lost"}


class AgentMetrics:
    """Counters and per-action capture timings; cheap enough to call on every action.

    Two timings per action, each as wall time and as the CPU time of the thread
    that did the work (``time.thread_time``); the overhead benchmark reads them:

    * :attr:`capture_seconds` / :attr:`capture_cpu_seconds` — how long the
      agent's callback held Spark's listener-bus thread (:meth:`record_capture`);
    * :attr:`build_seconds` / :attr:`build_cpu_seconds` — how long the agent's
      worker thread took to capture the plan from the JVM and build the action's
      events (:meth:`record_build`). Its CPU excludes the JVM's share (serialising
      the plan, answering py4j calls), which runs on the JVM thread named in
      :attr:`jvm_threads`.

    :attr:`threads` names the agent's own Python threads (``"capture"``,
    ``"emitter"``) by native thread id and :attr:`jvm_threads` the JVM thread
    serving the capture worker's py4j calls by Java thread id, so a benchmark
    can measure the CPU they use. Nothing here is printed or logged.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.capture_seconds: list[float] = []
        self.capture_cpu_seconds: list[float] = []
        self.build_seconds: list[float] = []
        self.build_cpu_seconds: list[float] = []
        #: Seconds of each delivery attempt (one transport call: a batch or one event).
        self.send_seconds: list[float] = []
        self.threads: dict[str, int] = {}
        self.jvm_threads: dict[str, int] = {}
        self.emitted = 0
        self.sent = 0
        self.retried = 0
        self.spooled = 0
        self.rejected = 0
        self.replayed = 0
        self.lost = 0

    def record_capture(self, seconds: float, cpu_seconds: float | None = None) -> None:
        """Record the time one action's callback held the listener thread (seconds)."""
        with self._lock:
            self.capture_seconds.append(seconds)
            if cpu_seconds is not None:
                self.capture_cpu_seconds.append(cpu_seconds)

    def record_build(self, seconds: float, cpu_seconds: float | None = None) -> None:
        """Record the time the worker took to capture one action and build its events."""
        with self._lock:
            self.build_seconds.append(seconds)
            if cpu_seconds is not None:
                self.build_cpu_seconds.append(cpu_seconds)

    def record_send(self, seconds: float) -> None:
        """Record how long one delivery attempt took, answered or failed."""
        with self._lock:
            self.send_seconds.append(seconds)

    def add(self, name: str, count: int) -> None:
        """Add ``count`` to counter ``name`` (thread-safe)."""
        with self._lock:
            setattr(self, name, getattr(self, name) + count)

    def snapshot(self) -> dict[str, Any]:
        """A plain dict of the counters and the capture timings."""
        with self._lock:
            return {
                "emitted": self.emitted,
                "sent": self.sent,
                "retried": self.retried,
                "spooled": self.spooled,
                "rejected": self.rejected,
                "replayed": self.replayed,
                "lost": self.lost,
                "capture_seconds": list(self.capture_seconds),
                "capture_cpu_seconds": list(self.capture_cpu_seconds),
                "build_seconds": list(self.build_seconds),
                "build_cpu_seconds": list(self.build_cpu_seconds),
                "send_seconds": list(self.send_seconds),
                "threads": dict(self.threads),
                "jvm_threads": dict(self.jvm_threads),
            }


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile of ``values`` (None when there are none)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _millis(values: Sequence[float]) -> dict[str, Any]:
    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000.0, 3)

    return {
        "count": len(values),
        "p50": ms(percentile(values, 0.50)),
        "p95": ms(percentile(values, 0.95)),
        "max": ms(max(values) if values else None),
    }


def emission_figures(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of an ``AgentMetrics.snapshot()``: counters and timings in milliseconds.

    ``sendMs`` times each delivery attempt (one transport call: a batch or one
    event); ``captureMs`` is how long each action's callback held Spark's
    listener thread; ``buildMs`` how long the agent's worker took to read the
    action's plan and build its events.
    """
    figures: dict[str, Any] = {}
    for name in _COUNTERS:
        figures[name] = int(snapshot.get(_SOURCE.get(name, name), 0) or 0)
    figures["sendMs"] = _millis(list(snapshot.get("send_seconds", ()) or ()))
    figures["captureMs"] = _millis(list(snapshot.get("capture_seconds", ()) or ()))
    figures["buildMs"] = _millis(list(snapshot.get("build_seconds", ()) or ()))
    return figures


def emission_facet(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The ``headwater_emission`` run facet: the figures with ``_producer`` and ``_schemaURL``."""
    return {
        "_producer": PRODUCER,
        "_schemaURL": EMISSION_FACET_SCHEMA,
        **emission_figures(snapshot),
    }


def log_summary(app_name: str, snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Log one line of ``app_name``'s figures at application end; return the figures."""
    f = emission_figures(snapshot)
    troubled = f["spooled"] or f["rejected"] or f["dropped"]
    logger.log(
        logging.WARNING if troubled else logging.INFO,
        "headwater agent: application %s: %d events queued, %d sent, %d retried, %d spooled,"
        " %d replayed, %d refused, %d dropped; send p50 %s ms p95 %s ms over %d attempts;"
        " per action: listener thread p50 %s ms, capture p50 %s ms p95 %s ms over %d actions",
        app_name,
        f["queued"],
        f["sent"],
        f["retried"],
        f["spooled"],
        f["replayed"],
        f["rejected"],
        f["dropped"],
        f["sendMs"]["p50"],
        f["sendMs"]["p95"],
        f["sendMs"]["count"],
        f["captureMs"]["p50"],
        f["buildMs"]["p50"],
        f["buildMs"]["p95"],
        f["buildMs"]["count"],
    )
    return f
