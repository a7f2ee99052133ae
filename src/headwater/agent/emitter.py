"""Delivery of events without ever slowing or breaking the Spark job.

:meth:`Emitter.emit` puts the event on a bounded in-memory queue and returns at
once; a daemon thread takes batches off the queue and hands them to a
transport, retrying with exponential backoff. Repeated failures open a circuit
breaker: while it is open nothing is sent and batches go straight to the spool
(local JSONL files, see :mod:`headwater.transport.spool`). Spooled events are
replayed as soon as the destination accepts a request again, and by the next
emitter that starts (another run, another process). A full queue spools too. :meth:`Emitter.close`
(registered at interpreter exit) flushes for at most ``flush_timeout`` seconds
and spools whatever is still left — events are delayed, never lost.

Nothing here raises into the caller: every unexpected exception is logged once
per kind and swallowed.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from headwater.agent.config import AgentConfig, DeliveryConfig
from headwater.agent.emission import AgentMetrics
from headwater.transport.base import DeliveryError, Transport
from headwater.transport.breaker import CircuitBreaker
from headwater.transport.factory import create_transport
from headwater.transport.spool import Spool

__all__ = ["AgentMetrics", "CircuitBreaker", "Emitter", "build_emitter"]

logger = logging.getLogger(__name__)

Event = Mapping[str, Any]

#: Put on the queue by close() to wake the sender at once; never delivered.
_WAKE: Any = object()

#: How long the idle sender sleeps between checks for close (close wakes it sooner).
_IDLE_WAIT_SECONDS = 1.0


class _LogOnce:
    """Log each kind of unexpected failure once, so a broken agent cannot flood the job's log."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, where: str, exc: BaseException) -> None:
        key = f"{where}:{type(exc).__name__}"
        with self._lock:
            if key in self._seen:
                logger.debug("headwater agent: %s failed again: %r", where, exc)
                return
            self._seen.add(key)
        logger.warning("headwater agent: %s failed (the job goes on): %r", where, exc, exc_info=exc)


class Emitter:
    """A bounded queue and one background sender thread in front of a transport."""

    def __init__(
        self,
        transport: Transport,
        delivery: DeliveryConfig | None = None,
        *,
        spool: Spool | None = None,
        replay_spool: bool = True,
        metrics: AgentMetrics | None = None,
    ) -> None:
        self.transport = transport
        self.delivery = delivery or DeliveryConfig()
        self.spool = spool
        self.metrics = metrics or AgentMetrics()
        self.breaker = CircuitBreaker(
            self.delivery.breaker_failure_threshold, self.delivery.breaker_reset_seconds
        )
        self._log_once = _LogOnce()
        self._queue: queue.Queue[Event] = queue.Queue(maxsize=self.delivery.queue_size)
        # Events accepted but not yet finished (sent, spooled or given up); flush waits on it.
        self._unfinished = 0
        self._idle = threading.Condition()
        self._inflight: list[Event] = []
        self._stopping = threading.Event()  # no more events; exit once the queue is empty
        self._abandon = threading.Event()  # stop retrying now; spool what is in hand
        self._closed = False
        self._close_lock = threading.Lock()
        self._replay_spool = replay_spool and spool is not None
        # Set when events went to the spool; once the destination accepts a request
        # again, the sender replays them in this same run instead of waiting for the next.
        self._spooled_since_replay = False
        self._destination_up = False
        if self._replay_spool:
            self._unfinished += 1  # the start-up replay; flush() waits for it like for events
        self._thread = threading.Thread(target=self._run, name="headwater-emitter", daemon=True)
        self._thread.start()
        if self._thread.native_id is not None:
            self.metrics.threads["emitter"] = self._thread.native_id

    # -- caller side: never raises, never blocks ---------------------------------------

    def emit(self, event: Event) -> None:
        """Queue ``event`` for delivery; spool it if the queue is full or the emitter closed."""
        try:
            self.metrics.add("emitted", 1)
            if self._closed:
                self._spool([event], "emit after close")
                return
            with self._idle:
                self._unfinished += 1
            try:
                self._queue.put_nowait(event)
            except queue.Full:
                self._finish(1)
                self._spool([event], "queue full")
        except Exception as exc:  # the job must go on whatever happens here
            self._log_once("emit", exc)

    def flush(self, timeout: float) -> bool:
        """Wait until every queued event is delivered or spooled; False on timeout."""
        try:
            deadline = time.monotonic() + max(timeout, 0.0)
            with self._idle:
                while self._unfinished > 0:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not self._thread.is_alive():
                        return False
                    self._idle.wait(min(remaining, 0.1))
            return True
        except Exception as exc:
            self._log_once("flush", exc)
            return False

    def close(self, timeout: float = 5.0) -> None:
        """Flush for at most ``timeout`` seconds, spool the rest, stop the thread. Idempotent."""
        try:
            with self._close_lock:
                if self._closed:
                    return
                self._closed = True
            deadline = time.monotonic() + max(timeout, 0.0)
            self.flush(timeout)
            self._stopping.set()
            self._abandon.set()
            try:
                self._queue.put_nowait(_WAKE)
            except queue.Full:
                pass  # a full queue does not let the sender sleep anyway
            self._thread.join(max(deadline - time.monotonic(), 0.0) + 0.05)
            leftovers: list[Event] = []
            if self._thread.is_alive():
                # The sender is stuck in a transport call; keep a copy of what it holds.
                # If that call succeeds after all, the server's dedupe absorbs the copy.
                leftovers.extend(self._inflight)
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not _WAKE:
                    leftovers.append(item)
            if leftovers:
                self._spool(leftovers, "close timeout")
            try:
                self.transport.close(max(deadline - time.monotonic(), 0.0))
            except Exception as exc:
                self._log_once("transport close", exc)
        except Exception as exc:
            self._log_once("close", exc)

    # -- sender thread ----------------------------------------------------------------

    def _run(self) -> None:
        if self._replay_spool:
            try:
                self._replay()
            except Exception as exc:
                self._log_once("spool replay", exc)
            finally:
                self._finish(1)
        while True:
            try:
                batch = self._take_batch()
                if not batch:
                    if self._stopping.is_set():
                        return
                    continue
                self._inflight = list(batch)
                replay_due = False
                try:
                    self._deliver(batch)
                finally:
                    self._inflight = []
                    replay_due = (self._spooled_since_replay and self._destination_up
                                  and self.spool is not None and not self._abandon.is_set())
                    if replay_due:
                        with self._idle:
                            self._unfinished += 1  # flush() waits for the replay too
                    self._finish(len(batch))
                if replay_due:
                    try:
                        self._spooled_since_replay = False
                        assert self.spool is not None
                        self.spool.rotate()
                        self._replay()
                    finally:
                        self._finish(1)
            except Exception as exc:
                self._log_once("sender", exc)

    def _take_batch(self) -> list[Event]:
        # An idle sender sleeps on the queue rather than polling it (a poll every
        # 50 ms cost a steady ~0.1 % of a core); close() wakes it with _WAKE.
        try:
            first = self._queue.get(timeout=_IDLE_WAIT_SECONDS)
        except queue.Empty:
            return []
        batch = [first] if first is not _WAKE else []
        while len(batch) < self.delivery.batch_size:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _WAKE:
                batch.append(item)
        return batch

    def _finish(self, count: int) -> None:
        with self._idle:
            self._unfinished -= count
            if self._unfinished <= 0:
                self._idle.notify_all()

    def _deliver(self, batch: Sequence[Event]) -> bool:
        """Send ``batch`` with retries; spool what cannot be sent. True if all of it got through."""
        pending = list(batch)
        attempt = 0
        while True:
            if self._abandon.is_set() or not self.breaker.allow():
                self._spool(pending, "destination unavailable")
                return False
            began = time.perf_counter()
            try:
                try:
                    failures = self.transport.emit_batch(pending)
                finally:
                    self.metrics.record_send(time.perf_counter() - began)
            except DeliveryError as exc:
                if not exc.retriable:
                    self.breaker.record_success()  # the destination answered; it is up
                    self._destination_up = True
                    self._reject(pending, str(exc))
                    return False
                self.breaker.record_failure()
                logger.info("headwater agent: delivery failed (attempt %d): %s", attempt + 1, exc)
                failures = None
            except Exception as exc:
                self._log_once("transport", exc)
                self._spool(pending, "transport error")
                return False
            self._destination_up = failures is not None
            if failures is not None:
                self.breaker.record_success()
                rejected = [pending[f.index] for f in failures if not f.retriable]
                retry = [pending[f.index] for f in failures if f.retriable]
                self.metrics.add("sent", len(pending) - len(rejected) - len(retry))
                if rejected:
                    self._reject(rejected, "; ".join({f.reason for f in failures if not f.retriable}))
                if not retry:
                    return not rejected
                pending = retry
            attempt += 1
            if attempt > self.delivery.retries:
                self._spool(pending, "retries exhausted")
                return False
            self.metrics.add("retried", len(pending))
            self._abandon.wait(self.delivery.retry_backoff * (2 ** (attempt - 1)))

    def _replay(self) -> None:
        assert self.spool is not None
        for claimed, events in self.spool.claim():
            if self._abandon.is_set():
                self.spool.append(events)
                claimed.unlink(missing_ok=True)
                continue
            logger.info("headwater agent: replaying %d spooled events from %s", len(events), claimed)
            size = self.delivery.batch_size
            for start in range(0, len(events), size):
                chunk = events[start : start + size]
                if self._deliver(chunk):
                    self.metrics.add("replayed", len(chunk))
            # Everything is now sent, re-spooled into our own file, or kept as rejected.
            claimed.unlink(missing_ok=True)

    # -- where undeliverable events go ------------------------------------------------

    def _spool(self, events: Sequence[Event], why: str) -> None:
        if not events:
            return
        if self.spool is None or not self.delivery.spool_enabled:
            self.metrics.add("lost", len(events))
            self._log_once(f"delivery ({why}; spool disabled, {len(events)} events dropped)",
                           RuntimeError(why))
            return
        try:
            self.spool.append(events)
            self._spooled_since_replay = True
            self.metrics.add("spooled", len(events))
            logger.info("headwater agent: spooled %d events to %s (%s)", len(events),
                        self.spool.path, why)
        except Exception as exc:
            self.metrics.add("lost", len(events))
            self._log_once("spool write", exc)

    def _reject(self, events: Sequence[Event], reason: str) -> None:
        self.metrics.add("rejected", len(events))
        logger.warning("headwater agent: destination refused %d events: %s", len(events), reason)
        if self.spool is not None and self.delivery.spool_enabled:
            try:
                self.spool.reject(events)
            except Exception as exc:
                self._log_once("rejected-events write", exc)


class _NullTransport:
    """Used when the agent is disabled or its transport cannot be built: accepts and drops."""

    def emit(self, event: Event) -> None:
        return None

    def emit_batch(self, events: Sequence[Event]) -> list[Any]:
        return []

    def close(self, timeout: float) -> None:
        return None


_live_emitters: weakref.WeakSet[Emitter] = weakref.WeakSet()


def _close_all_at_exit() -> None:
    for emitter in list(_live_emitters):
        emitter.close(emitter.delivery.flush_timeout)


atexit.register(_close_all_at_exit)


def build_emitter(config: AgentConfig, *, transport: Transport | None = None) -> Emitter:
    """The emitter ``config`` asks for, closed (bounded flush) at interpreter exit.

    ``transport`` overrides the configured one (tests pass an in-process client).
    Never raises: a transport that cannot be built is logged and replaced by one
    that spools nothing and drops every event, so the job still runs.
    """
    delivery = config.delivery
    if config.disabled:
        return Emitter(_NullTransport(), delivery, spool=None, replay_spool=False)
    spool: Spool | None = None
    try:
        if transport is None:
            transport = create_transport(config.transport)
        if delivery.spool_enabled:
            spool = Spool(delivery.spool_dir)
    except Exception as exc:
        logger.error("headwater agent: transport %s unusable, events will be dropped: %s",
                     dict(config.transport).get("type"), exc)
        transport = _NullTransport()
    emitter = Emitter(transport, delivery, spool=spool)
    _live_emitters.add(emitter)
    return emitter
