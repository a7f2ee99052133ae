"""``serve --drift-webhook URL``: each new or changed schema drift POSTed with its impact.

Ingestion never waits for the receiver. The write transaction that writes a drift
row queues the drift in ``drift_outbox`` (:mod:`headwater.store.drift_outbox`), so a
drift committed is a drift queued, whatever happens to the server afterwards; the
store's commit hook only wakes this worker, a thread of its own, which reads the
queue (also every :data:`POLL_SECONDS`, for drifts that another process, such as
``headwater consume``, wrote). One POST at a time, oldest drift first:

* the body is the drift as ``GET /api/v2/drift/{driftId}`` answers it, with its
  impact computed at delivery (``{"type": "headwater.drift", "drift": {...}}``);
* a 2xx answer delivers it; a connection error, a timeout, a 408, 429 or 5xx is
  tried again after an exponential backoff with jitter (:func:`backoff`), for up
  to :data:`GIVE_UP_SECONDS` after the drift was queued, then given up; any other
  4xx is rejected at once (the receiver will not take this body);
* with a secret, ``X-Headwater-Signature: sha256=<hex>`` is the HMAC-SHA256 of
  ``<X-Headwater-Timestamp>.<body>``, so a receiver can check both and refuse replays.

Several server processes on one store take turns: each claims a row before it
posts it. Delivery is at least once: a server stopped between a receiver's 2xx
and the row's deletion posts the drift again (``X-Headwater-Delivery`` names the
queued row, for receivers that deduplicate).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import random
import threading
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import httpx

from headwater import __version__
from headwater.errors import HeadwaterError
from headwater.store import drift_outbox
from headwater.store.transactions import now_utc

if TYPE_CHECKING:
    from headwater.server.metrics import Metrics
    from headwater.store import Store

__all__ = ["GIVE_UP_SECONDS", "POLL_SECONDS", "DriftWebhook", "backoff", "signature"]

logger = logging.getLogger(__name__)

#: Seconds between reads of the queue when no commit wakes the worker.
POLL_SECONDS = 30.0
#: A drift still undelivered this long after it was queued is given up.
GIVE_UP_SECONDS = 86_400.0
#: First and longest wait between two attempts at one drift.
BASE_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 600.0
# Rows read per pass; a claim holds a row this long while it is posted.
_BATCH = 20
_CLAIM_SECONDS = 120.0
# Least seconds between two reads of the queue woken by commits: a busy ingest
# wakes the worker at every commit, and one read covers them all.
_WAKE_SPACING = 0.2
_RETRIED_STATUSES = frozenset({408, 429})


def backoff(
    attempts: int,
    base: float = BASE_DELAY_SECONDS,
    cap: float = MAX_DELAY_SECONDS,
    draw: float | None = None,
) -> float:
    """Seconds before the next attempt after ``attempts`` failed ones: ``base * 2**(n-1)``
    up to ``cap``, of which a random half is waited (so receivers coming back are not hit
    by every server at once). ``draw`` in [0, 1] replaces the random number."""
    ceiling = min(cap, base * 2 ** max(0, attempts - 1))
    share = random.random() if draw is None else draw  # noqa: S311 - jitter, not a secret
    return ceiling / 2 + share * ceiling / 2


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` of HMAC-SHA256(secret, ``timestamp.body``)."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


class DriftWebhook:
    """Posts queued drifts to ``url`` from a thread of its own until :meth:`close`."""

    def __init__(
        self,
        store: Store,
        url: str,
        *,
        secret: str | None = None,
        breaking_only: bool = False,
        metrics: Metrics | None = None,
        timeout: float = 10.0,
        poll: float = POLL_SECONDS,
        base_delay: float = BASE_DELAY_SECONDS,
        max_delay: float = MAX_DELAY_SECONDS,
        give_up: float = GIVE_UP_SECONDS,
    ) -> None:
        self.store = store
        self.url = url
        self.secret = secret
        self.breaking_only = breaking_only
        self.metrics = metrics
        self.poll = poll
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.give_up = timedelta(seconds=give_up)
        self._client = httpx.Client(timeout=timeout, follow_redirects=False)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, name="headwater-drift-webhook", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Ask for a read of the queue soon (the store's commit hook: quick, never raises)."""
        self._wake.set()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self._client.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.deliver_due()
            except HeadwaterError as exc:  # the store is away: the next pass tries again
                logger.warning("drift webhook: cannot read the queue (%s)", exc)
            except Exception:
                logger.exception("drift webhook: a pass failed")
            self._wake.wait(self._next_wait())
            self._wake.clear()
            self._stop.wait(_WAKE_SPACING)

    def _next_wait(self) -> float:
        """Until the next due attempt, at most :attr:`poll` seconds."""
        try:
            upcoming = drift_outbox.due(
                self.store.engine, 1, now_utc() + timedelta(seconds=self.poll)
            )
        except HeadwaterError:
            return self.poll
        if not upcoming:
            return self.poll
        return max(0.0, (upcoming[0].next_attempt_at - now_utc()).total_seconds())

    def deliver_due(self) -> int:
        """Attempt each queued drift that is due now, once; how many were attempted."""
        engine = self.store.engine
        attempted = 0
        queued = drift_outbox.due(engine, _BATCH)
        while queued and not self._stop.is_set():
            for item in queued:
                if self._stop.is_set():
                    break
                held = now_utc() + timedelta(seconds=_CLAIM_SECONDS)
                if drift_outbox.claim(engine, item, held):
                    self._attempt(item)
                    attempted += 1
            # A full batch: more may be due behind it (those just retried wait their turn).
            queued = drift_outbox.due(engine, _BATCH) if len(queued) == _BATCH else []
        return attempted

    def _attempt(self, item: drift_outbox.Queued) -> None:
        if now_utc() - item.enqueued_at >= self.give_up:
            # Queued while no webhook was configured, too long ago to announce now.
            self._finish(item, "given_up")
            return
        drift = self._drift(item.drift_key)
        if drift is None:
            self._finish(item, "gone")
            return
        if self.breaking_only and not drift["breaking"]:
            self._finish(item, "skipped")
            return
        body = json.dumps(
            {"type": "headwater.drift", "drift": drift}, separators=(",", ":")
        ).encode()
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"headwater/{__version__}",
            "X-Headwater-Event": "drift",
            "X-Headwater-Delivery": f"{item.id}:{item.drift_key}",
            "X-Headwater-Timestamp": stamp,
        }
        if self.secret:
            headers["X-Headwater-Signature"] = signature(self.secret, stamp, body)
        started = time.perf_counter()
        try:
            answer = self._client.post(self.url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            self._failed(item, f"{exc.__class__.__name__}: {exc}")
            return
        finally:
            if self.metrics is not None:
                self.metrics.webhook_seconds.observe(time.perf_counter() - started)
        status = answer.status_code
        if 200 <= status < 300:
            self._finish(item, "delivered")
        elif status >= 500 or status in _RETRIED_STATUSES:
            self._failed(item, f"HTTP {status}")
        else:
            logger.error(
                "drift webhook: %s refused drift %s with HTTP %d; not retried",
                self.url,
                drift["id"],
                status,
            )
            self._finish(item, "rejected")

    def _failed(self, item: drift_outbox.Queued, error: str) -> None:
        now = now_utc()
        if now - item.enqueued_at >= self.give_up:
            logger.error(
                "drift webhook: giving up on %s after %d attempts (%s)",
                item.drift_key,
                item.attempts + 1,
                error,
            )
            self._finish(item, "given_up")
            return
        delay = backoff(item.attempts + 1, self.base_delay, self.max_delay)
        logger.info(
            "drift webhook: %s failed (%s); next attempt in %.1f s", item.drift_key, error, delay
        )
        drift_outbox.retry(self.store.engine, item, now + timedelta(seconds=delay), error)
        self._count("retried")

    def _finish(self, item: drift_outbox.Queued, outcome: str) -> None:
        drift_outbox.remove(self.store.engine, item)
        self._count(outcome)

    def _count(self, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.webhook.labels(outcome).inc()

    def _drift(self, key: str) -> dict[str, Any] | None:
        """The queued drift as the API answers it, with its impact; None when it is gone."""
        from headwater.server.routes.drift import Drift, DriftImpactQuery, with_impact
        from headwater.store.reads.common import Page
        from headwater.store.reads.drift import DriftFilter, drifts

        parsed = drift_outbox.parse_key(key)
        where = DriftFilter(
            kind="contract" if parsed.kind == "contract" else "version",
            dataset_id=parsed.dataset_id,
            version_uuid=parsed.version_uuid,
            job_id=parsed.job_id,
        )
        with self.store.engine.connect() as conn:
            rows, _ = drifts(conn, where, Page(limit=1, offset=0))
            if not rows:
                return None
            found = with_impact(conn, rows, DriftImpactQuery())[0]
        body: dict[str, Any] = Drift.model_validate(found).model_dump(mode="json")
        return body
