"""``GET /metrics``: the server's figures in Prometheus text format (``prometheus-client``).

What is counted, and where, so no request pays a database round trip for it:

* requests by route template, method and status, with a latency histogram
  (:class:`MetricsMiddleware`, the outermost ASGI layer, so it sees the
  ingestion POSTs that :class:`~headwater.server.ingest_endpoint.IngestEndpoint`
  answers before the routing, and every error answer);
* events received, stored, duplicate and refused by status (400: not valid
  OpenLineage, 422: the database refused it) on the two ingestion POSTs
  (:meth:`Metrics.ingested`, called by their handlers with the outcome
  they already have);
* the store's committed transactions: events per transaction (the group
  commit's lot sizes) and seconds per transaction, through the store's
  ``on_commit`` hook, which takes no lock and runs no SQL;
* drift webhook deliveries by outcome and seconds per POST
  (:mod:`headwater.server.drift_webhook`); the drifts still queued are the
  ``drift_outbox`` table's rows;
* quarantine size and rows per table, counted at most every
  :data:`SAMPLE_SECONDS` (a scrape in between gets the last sample), since
  counting a large table is a scan; the per-producer figures likewise
  (:mod:`headwater.server.producer_metrics`).

With ``serve --workers N`` each process counts its own requests and events
and Prometheus' multiprocess mode adds them up (``run.py`` gives the workers
a shared ``PROMETHEUS_MULTIPROC_DIR``); the sampled row counts are the
database's, the same whichever worker answers.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from headwater.errors import HeadwaterError
from headwater.server.producer_metrics import ProducerSampler

if TYPE_CHECKING:
    from headwater.server.ingest import BatchOutcome
    from headwater.store import Store

__all__ = [
    "SAMPLE_SECONDS", "WEBHOOK_OUTCOMES", "Metrics", "MetricsMiddleware", "install_metrics",
    "router",
]

logger = logging.getLogger(__name__)

#: Least seconds between two countings of the tables.
SAMPLE_SECONDS = 30.0
#: The environment variable that puts prometheus-client in multiprocess mode.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# The database refuses (422) only one kind of event on this field: one older than the
# retention floor (store/retention.py); a malformed eventTime is a 400.
RETENTION_FIELD = "eventTime"

#: What can become of a queued drift (``headwater_drift_webhook_deliveries``).
WEBHOOK_OUTCOMES = ("delivered", "retried", "given_up", "rejected", "skipped", "gone")

# Up to the store's largest lot (LOT_EVENTS).
_LOT_BUCKETS = (1, 2, 5, 10, 25, 50, 100, 250, 500)
_INGEST_PATHS = frozenset({"/api/v1/lineage", "/api/v1/lineage/batch"})

router = APIRouter(tags=["health"])


class Metrics:
    """The counters of one app, in a registry of its own (each test builds its own app)."""

    def __init__(self, store: Store, *, sample_seconds: float = SAMPLE_SECONDS) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        r = self.registry
        self.requests = Counter("headwater_http_requests", "HTTP requests answered.",
                                ["route", "method", "status"], registry=r)
        self.latency = Histogram("headwater_http_request_duration_seconds",
                                 "Seconds from request to the end of the answer.",
                                 ["route", "method"], registry=r)
        self.received = Counter("headwater_events_received",
                                "Events posted to the ingestion routes.", registry=r)
        self.stored = Counter("headwater_events_stored",
                              "Events stored (new or duplicate).", registry=r)
        self.duplicates = Counter("headwater_events_duplicate",
                                  "Stored events that were already in the store.", registry=r)
        self.refused = Counter("headwater_events_refused",
                               "Events refused: 400 not valid OpenLineage, 422 by the database.",
                               ["status"], registry=r)
        self.lot_events = Histogram("headwater_store_transaction_events",
                                    "Events per committed write transaction (group commit).",
                                    buckets=_LOT_BUCKETS, registry=r)
        self.transaction_seconds = Histogram("headwater_store_transaction_seconds",
                                             "Seconds per committed write transaction.",
                                             registry=r)
        self.before_retention = Counter(
            "headwater_events_before_retention",
            "Events refused because their eventTime is before the retention floor "
            "(a spool replay or consumer rewind of deleted runs); also in refused{status=422}.",
            registry=r)
        self.webhook = Counter(
            "headwater_drift_webhook_deliveries",
            "Drift webhook outcomes: delivered; retried (an attempt failed, tried again "
            "later); given_up (still failing a day after the drift); rejected (a 4xx "
            "answer); skipped (compatible, with breaking-only); gone (the drift no longer "
            "exists).", ["outcome"], registry=r)
        self.webhook_seconds = Histogram("headwater_drift_webhook_post_seconds",
                                         "Seconds per drift webhook POST.", registry=r)
        for outcome in WEBHOOK_OUTCOMES:
            self.webhook.labels(outcome)
        for status in ("400", "422"):
            self.refused.labels(status)  # both series exist from the start, at 0
        self.sampler = TableSampler(store, sample_seconds)
        self.producers = ProducerSampler(store, sample_seconds)
        self.sampler.registry.register(self.producers)

    def ingested(self, outcome: BatchOutcome) -> None:
        """Count what happened to one ingestion request's events."""
        self.received.inc(outcome.received)
        self.stored.inc(outcome.successful)
        self.duplicates.inc(outcome.duplicates)
        for failed in outcome.failed:
            self.refused.labels(str(failed.status)).inc()
            if failed.status == 422 and failed.field == RETENTION_FIELD:
                self.before_retention.inc()

    def ingested_one(self, *, duplicate: bool = False, refused: int | None = None,
                     field: str | None = None) -> None:
        """Count one single-event POST: stored (maybe a duplicate) or refused with a status."""
        self.received.inc()
        if refused is not None:
            self.refused.labels(str(refused)).inc()
            if refused == 422 and field == RETENTION_FIELD:
                self.before_retention.inc()
            return
        self.stored.inc()
        if duplicate:
            self.duplicates.inc()

    def committed(self, events: int, seconds: float) -> None:
        self.lot_events.observe(events)
        self.transaction_seconds.observe(seconds)

    def render(self) -> bytes:
        """The text exposition: this process's counters, or every worker's, and the sample."""
        if os.environ.get(MULTIPROC_ENV):
            from prometheus_client import multiprocess

            registry = CollectorRegistry(auto_describe=False)
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry) + generate_latest(self.sampler.registry)
        return generate_latest(self.registry) + generate_latest(self.sampler.registry)


class TableSampler(Collector):
    """Rows per table and the quarantine's size, counted at most every ``every`` seconds."""

    def __init__(self, store: Store, every: float) -> None:
        self.store = store
        self.every = every
        self._lock = threading.Lock()
        self._at: float | None = None
        self._counts: dict[str, int] = {}
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    def collect(self) -> Iterable[Metric]:
        counts = self._sample()
        rows = GaugeMetricFamily("headwater_table_rows", "Rows per store table (sampled).",
                                 labels=["table"])
        for table, n in sorted(counts.items()):
            rows.add_metric([table], n)
        yield rows
        if "quarantine" in counts:
            yield GaugeMetricFamily("headwater_quarantine_values",
                                    "Distinct refused values kept in the quarantine (sampled).",
                                    value=counts["quarantine"])

    def _sample(self) -> dict[str, int]:
        with self._lock:
            now = time.monotonic()
            if self._at is None or now - self._at >= self.every:
                try:
                    self._counts = self.store.counts()
                except HeadwaterError as exc:
                    # The last sample stands; the next scrape tries again.
                    logger.warning("could not count the store's rows: %s", exc)
                else:
                    self._at = now
            return self._counts


class MetricsMiddleware:
    """Counts each HTTP request by route template and status, and times it."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # an exception escaping the app is answered 500 by the server

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = _route_label(scope)
            method = scope["method"]
            self.metrics.requests.labels(route, method, str(status)).inc()
            self.metrics.latency.labels(route, method).observe(time.perf_counter() - start)


def _route_label(scope: Scope) -> str:
    """The matched route's template; paths nothing matched share one label, to bound series."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    if scope["path"] in _INGEST_PATHS:
        return str(scope["path"])
    return "unmatched"


@router.get("/metrics", summary="Server metrics (Prometheus text format)",
            response_class=Response,
            responses={200: {"description": "Prometheus text exposition format 0.0.4.",
                             "content": {"text/plain": {"schema": {"type": "string"}}}}})
async def metrics(request: Request) -> Response:
    body = await run_in_threadpool(request.app.state.metrics.render)
    return Response(body, media_type=CONTENT_TYPE_PLAIN_0_0_4)


def install_metrics(app: FastAPI, store: Store) -> Metrics:
    """Count ``app``'s requests and ``store``'s commits, and serve ``GET /metrics``."""
    found = Metrics(store)
    app.state.metrics = found
    store.on_commit = found.committed
    app.include_router(router)
    app.add_middleware(MetricsMiddleware, metrics=found)
    return found
