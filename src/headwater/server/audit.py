"""The audit log's writer: rows queued in memory, written in batches by one thread.

Every write request is audited (ingestion once per request, whatever its number
of events), and a request costs a list append, not a database round trip: a
background thread writes what is queued every :data:`FLUSH_SECONDS` (sooner once
:data:`FLUSH_ROWS` are waiting), in one transaction, and :meth:`AuditLog.close`
writes the rest at shutdown. Rows the database could not take stay queued for
the next attempt, up to :data:`MAX_QUEUED`; past that the oldest are dropped and
the drop is logged.

Refused requests (401/403) are rate-limited per client address: at most
``refusals_per_minute`` rows per client per minute, then one row counting the
rest of that minute's refusals (``count``), so a client hammering with bad
tokens cannot flood the table. With ``mirror`` set, each written row is also
appended to that file as one JSON line.

With ``retention`` (seconds) the same thread deletes the rows older than that
at start and then every :data:`PRUNE_SECONDS`, and audits each prune as one row
(operation ``audit.prune``). Deleting is the one change the database allows,
and only of rows older than a day (migration ``0008``), so a retention is at
least a day. Several server processes on one database each prune; the second
finds nothing left to delete.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from headwater.errors import HeadwaterError
from headwater.store import access
from headwater.store.access import AuditRow
from headwater.store.transactions import now_utc

__all__ = ["FLUSH_ROWS", "FLUSH_SECONDS", "MAX_QUEUED", "PRUNE_SECONDS", "AuditLog"]

logger = logging.getLogger(__name__)

FLUSH_SECONDS = 1.0
FLUSH_ROWS = 500
MAX_QUEUED = 100_000
PRUNE_SECONDS = 3600.0
_WINDOW_SECONDS = 60.0


@dataclass
class _Window:
    """One client's refusals in the current minute."""

    started: float
    written: int = 0
    suppressed: int = 0


class AuditLog:
    """Queue audit rows; a daemon thread appends them to the store in batches."""

    def __init__(self, engine: Any, *, refusals_per_minute: int = 10,
                 mirror: Path | None = None, flush_seconds: float = FLUSH_SECONDS,
                 retention: float | None = None, prune_seconds: float = PRUNE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._engine = engine
        self._limit = refusals_per_minute
        self._mirror = mirror
        self._flush_seconds = flush_seconds
        self._clock = clock
        self._retention = retention
        self._prune_seconds = prune_seconds
        self._pruned_at = float("-inf")
        self._queue: list[AuditRow] = []
        self._windows: dict[str | None, _Window] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the writing thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="headwater-audit", daemon=True)
            self._thread.start()

    def record(self, row: AuditRow) -> None:
        with self._lock:
            self._queue.append(row)
            if len(self._queue) > MAX_QUEUED:
                dropped = len(self._queue) - MAX_QUEUED
                del self._queue[:dropped]
                logger.error("audit queue full: dropped the %d oldest rows", dropped)
            full = len(self._queue) >= FLUSH_ROWS
        if full:
            self._wake.set()

    def refused(self, client: str | None, token_name: str | None, operation: str,
                target: str | None, outcome: str, status: int) -> None:
        """Audit a refused request, at most ``refusals_per_minute`` rows per client."""
        now = self._clock()
        with self._lock:
            summary = self._roll(client, now)
            window = self._windows.setdefault(client, _Window(now))
            admitted = window.written < self._limit
            if admitted:
                window.written += 1
            else:
                window.suppressed += 1
        if summary is not None:
            self.record(summary)
        if admitted:
            self.record(AuditRow(now_utc(), token_name, client, operation, target, outcome,
                                 status))

    def _roll(self, client: str | None, now: float) -> AuditRow | None:
        """End ``client``'s window if its minute is over; the row counting what it held back."""
        window = self._windows.get(client)
        if window is None or now - window.started < _WINDOW_SECONDS:
            return None
        del self._windows[client]
        if window.suppressed == 0:
            return None
        return AuditRow(now_utc(), None, client, "auth", None, "refused (rate-limited)", None,
                        window.suppressed)

    def flush(self) -> None:
        """Write everything queued now, and the counts of refusal windows that are over."""
        now = self._clock()
        with self._lock:
            summaries = [row for client in list(self._windows)
                         if (row := self._roll(client, now)) is not None]
        for row in summaries:
            self.record(row)
        with self._write_lock:
            with self._lock:
                rows, self._queue = self._queue, []
            if not rows:
                return
            try:
                access.append_audit(self._engine, rows)
            except HeadwaterError as exc:
                logger.warning("audit rows not written yet (%s); retrying", exc)
                with self._lock:
                    self._queue[:0] = rows
                return
            if self._mirror is not None:
                self._append_mirror(rows)

    def _append_mirror(self, rows: list[AuditRow]) -> None:
        try:
            with self._mirror.open("a", encoding="utf-8") as out:  # type: ignore[union-attr]
                for row in rows:
                    out.write(json.dumps(row.as_json(), separators=(",", ":")) + "\n")
        except OSError as exc:
            logger.error("audit file %s not written: %s", self._mirror, exc)

    def close(self) -> None:
        """Stop the thread and write what is left (including open refusal counts)."""
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        with self._lock:
            summaries = [row for client in list(self._windows)
                         if (row := self._roll(client, float("inf"))) is not None]
        for row in summaries:
            self.record(row)
        self.flush()

    def prune(self) -> int:
        """Delete the rows older than the retention now; how many (0 without a retention)."""
        if self._retention is None:
            return 0
        self._pruned_at = self._clock()
        cutoff = now_utc() - timedelta(seconds=self._retention)
        try:
            deleted = access.prune_audit(self._engine, cutoff)
        except HeadwaterError as exc:
            logger.warning("audit rows older than %s not pruned yet: %s", cutoff, exc)
            return 0
        if deleted:
            logger.info("pruned %d audit rows older than %s", deleted, cutoff)
            self.record(AuditRow(now_utc(), None, None, "audit.prune",
                                 f"{deleted} rows before {cutoff.isoformat()}Z", "ok"))
        return deleted

    def _run(self) -> None:
        while not self._closed.is_set():
            if (self._retention is not None
                    and self._clock() - self._pruned_at >= self._prune_seconds):
                try:
                    self.prune()
                except Exception:  # noqa: BLE001 - the thread must outlive a bug in one prune
                    logger.exception("audit prune failed")
            self._wake.wait(self._flush_seconds)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - the thread must outlive a bug in one flush
                logger.exception("audit flush failed")
