"""Events from a Kafka topic into the store, through the write path HTTP uses.

One loop, one thread. Each pass takes up to ``batch_size`` messages from the
partitions the consumer group gave this process, decodes them with the
server's strict JSON decoder and hands the events to
:func:`headwater.server.ingest.ingest_batch` (the one parse, the store's group
commit, the quarantine of refused events). Only after the store has committed
are the offsets committed, synchronously, so a process killed at any moment
leaves nothing behind: what it stored but did not commit is read again by
whoever owns the partition next, and the store keeps each event once by its
content hash.

A message the write path refuses — not JSON, or not a valid event, or refused
by the database — is what a 4xx is on HTTP: it goes to the quarantine table,
to the dead-letter topic when one is configured, and its offset is committed
with the rest. Nothing waits for it and nothing drops it without a trace.
Only an unavailable database (:class:`~headwater.errors.StoreError`) holds
the loop: the batch is retried, offsets uncommitted, until the database
answers or the process is told to stop.

Rebalances need no extra care: callbacks run inside :meth:`consume`, between
passes, when every message handed out has been stored and committed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from headwater.errors import StoreError

if TYPE_CHECKING:
    from confluent_kafka import Consumer, Message, Producer, TopicPartition

    from headwater.store import Store

__all__ = ["ConsumeStats", "TopicConsumer"]

logger = logging.getLogger(__name__)

#: Longest wait for a batch to fill before the messages at hand are written.
POLL_SECONDS = 0.5
#: First wait before a batch is tried again while the database is unavailable.
_STORE_RETRY_SECONDS = 1.0
_STORE_RETRY_MAX_SECONDS = 30.0


@dataclass
class ConsumeStats:
    """What this process has done so far, for its status line and its metrics."""

    consumed: int = 0
    stored: int = 0
    duplicates: int = 0
    quarantined: int = 0
    dead_lettered: int = 0
    batches: int = 0
    started: float = field(default_factory=time.monotonic)
    #: partition -> messages not yet committed by the group (None: unknown).
    lag: dict[tuple[str, int], int | None] = field(default_factory=dict)
    # (time, consumed) at the previous status line: the rate shown is the recent one.
    _mark: tuple[float, int] = field(default=(0.0, 0), repr=False)

    @property
    def total_lag(self) -> int | None:
        if not self.lag or any(value is None for value in self.lag.values()):
            return None
        return sum(value for value in self.lag.values() if value is not None)

    def line(self, *, overall: bool = False) -> str:
        """One status line: counts, events/s since the last line (or ``overall``) and lag."""
        now = time.monotonic()
        since, before = (self.started, 0) if overall or not self._mark[0] else self._mark
        rate = (self.consumed - before) / max(now - since, 1e-9)
        self._mark = (now, self.consumed)
        lag = self.total_lag
        lag_text = "unknown" if lag is None else f"{lag}"
        text = (f"consumed {self.consumed} ({self.stored} stored, {self.duplicates} duplicates, "
                f"{self.quarantined} quarantined")
        if self.dead_lettered:
            text += f", {self.dead_lettered} dead-lettered"
        return (text + f"); {rate:.0f} events/s; lag {lag_text} "
                f"over {len(self.lag)} partition(s)")


@dataclass(frozen=True)
class _Refusal:
    message: Message
    value: Any  # what to keep in the quarantine: the event, or the text that was not JSON
    reason: str
    field: str | None
    status: int


class TopicConsumer:
    """Reads ``topic`` in a consumer group and ingests each batch before committing it."""

    def __init__(
        self,
        store: Store,
        consumer: Consumer,
        *,
        batch_size: int = 500,
        dead_letter: Producer | None = None,
        dead_letter_topic: str | None = None,
        dead_letter_wait: float = 15.0,
        stats: ConsumeStats | None = None,
    ) -> None:
        self.store = store
        self.consumer = consumer
        self.batch_size = batch_size
        self.dead_letter = dead_letter
        self.dead_letter_topic = dead_letter_topic
        self.dead_letter_wait = dead_letter_wait
        self.stats = stats or ConsumeStats()

    def run(self, stop: threading.Event, status: Callable[[ConsumeStats], None],
            status_seconds: float) -> None:
        """Consume until ``stop`` is set; call ``status`` every ``status_seconds``."""
        next_status = time.monotonic() + status_seconds
        while not stop.is_set():
            self.step(stop)
            if time.monotonic() >= next_status:
                self.measure_lag()
                status(self.stats)
                next_status = time.monotonic() + status_seconds

    def step(self, stop: threading.Event | None = None) -> int:
        """One pass: consume, ingest, quarantine and dead-letter, commit. Returns messages read."""
        messages = [m for m in self.consumer.consume(self.batch_size, POLL_SECONDS)
                    if not _transient_error(m)]
        if not messages:
            return 0
        delay = _STORE_RETRY_SECONDS
        while True:
            try:
                self._ingest(messages)
                break
            except StoreError as exc:
                if stop is not None and stop.is_set():
                    return 0  # uncommitted: the group hands these messages out again
                logger.warning("store unavailable, retrying %d message(s) in %.0f s: %s",
                               len(messages), delay, exc)
                if stop is not None:
                    stop.wait(delay)
                else:
                    time.sleep(delay)
                delay = min(delay * 2, _STORE_RETRY_MAX_SECONDS)
        self._commit(messages)
        self.stats.batches += 1
        return len(messages)

    def _ingest(self, messages: Sequence[Message]) -> None:
        from headwater.server.body import decode_json
        from headwater.server.handlers import RequestError
        from headwater.server.ingest import INVALID, ingest_batch
        from headwater.store import quarantine

        decoded: list[tuple[Message, Any]] = []
        undecodable: list[_Refusal] = []
        for message in messages:
            raw = message.value() or b""
            try:
                decoded.append((message, decode_json(raw)))
            except RequestError as exc:
                text = raw.decode("utf-8", errors="backslashreplace")
                undecodable.append(_Refusal(message, text, str(exc), None, INVALID))
        outcome = ingest_batch(self.store, [event for _, event in decoded])
        refusals = list(undecodable)
        for failed in outcome.failed:  # ingest_batch has quarantined these already
            message, event = decoded[failed.index]
            refusals.append(_Refusal(message, event, failed.reason, failed.field, failed.status))
        refusals.sort(key=lambda r: (r.message.partition(), r.message.offset()))
        if undecodable:
            # HTTP answers a body that is not JSON with a 400 and keeps nothing; a
            # topic has no producer to answer, so the text is kept for a human.
            quarantine.keep(self.store.engine, [
                quarantine.Refused(r.value, r.reason, None, r.status) for r in undecodable])
        self.stats.consumed += len(messages)
        self.stats.stored += outcome.successful
        self.stats.duplicates += outcome.duplicates
        self.stats.quarantined += len(refusals)
        for refusal in refusals:
            where = f"{refusal.message.topic()}[{refusal.message.partition()}]@" \
                    f"{refusal.message.offset()}"
            logger.warning("refused %s: %s (quarantined)", where, refusal.reason)
        if refusals and self.dead_letter is not None and self.dead_letter_topic:
            self._dead_letter(refusals)

    def _dead_letter(self, refusals: Sequence[_Refusal]) -> None:
        from confluent_kafka import KafkaException

        assert self.dead_letter is not None and self.dead_letter_topic is not None
        failed: list[str] = []

        def report(error: Any, _message: Any) -> None:
            if error is not None:
                failed.append(error.str())

        for refusal in refusals:
            source = refusal.message
            headers = [("headwater.reason", refusal.reason.encode("utf-8", "backslashreplace")),
                       ("headwater.status", str(refusal.status).encode()),
                       ("headwater.source",
                        f"{source.topic()}/{source.partition()}/{source.offset()}".encode())]
            if refusal.field:
                headers.append(("headwater.field", refusal.field.encode("utf-8", "replace")))
            try:
                self.dead_letter.produce(self.dead_letter_topic, value=source.value(),
                                         key=source.key(), headers=headers, on_delivery=report)
            except (BufferError, KafkaException) as exc:
                failed.append(str(exc))
        # librdkafka reports each message by message.timeout.ms; the margin covers the
        # report's own way back.
        left = self.dead_letter.flush(self.dead_letter_wait)
        # The quarantine already holds each of these; a dead-letter topic that does
        # not answer is reported, and the partition is not held up for it.
        if left or failed:
            logger.error("dead-letter topic %s: %d of %d message(s) not delivered (%s); "
                         "they are in the quarantine", self.dead_letter_topic,
                         left + len(failed), len(refusals), "; ".join(sorted(set(failed))))
        self.stats.dead_lettered += len(refusals) - left - len(failed)

    def _commit(self, messages: Sequence[Message]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        highest: dict[tuple[str, int], int] = {}
        for message in messages:
            key = (message.topic(), message.partition())
            highest[key] = max(highest.get(key, -1), message.offset())
        offsets = [TopicPartition(topic, partition, offset + 1)
                   for (topic, partition), offset in sorted(highest.items())]
        try:
            self.consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            # Lost the partitions to a rebalance: their new owner reads from the last
            # committed offset, and the events stored here are duplicates it skips.
            logger.warning("offset commit refused (%s); the new owner re-reads them", exc)

    def measure_lag(self) -> None:
        """Messages of each assigned partition not yet committed: the group's lag."""
        from confluent_kafka import KafkaException

        assignment: list[TopicPartition] = self.consumer.assignment()
        lag: dict[tuple[str, int], int | None] = {}
        try:
            committed = self.consumer.committed(assignment, timeout=5) if assignment else []
        except KafkaException as exc:
            logger.info("lag unknown: %s", exc)
            committed = []
        positions = {(tp.topic, tp.partition): tp.offset for tp in committed}
        for tp in assignment:
            key = (tp.topic, tp.partition)
            try:
                # Every fetch response carries the partition's end: ask the broker only
                # for a partition nothing has been fetched from yet.
                low, high = self.consumer.get_watermark_offsets(tp, cached=True)
                if high < 0 or low < 0:
                    low, high = self.consumer.get_watermark_offsets(tp, timeout=5)
            except KafkaException:
                lag[key] = None
                continue
            offset = positions.get(key, -1)
            lag[key] = max(high - (offset if offset >= 0 else low), 0)
        self.stats.lag = lag


def _transient_error(message: Message) -> bool:
    """Errors ``consume`` hands out instead of messages: logged; librdkafka recovers."""
    error = message.error()
    if error is None:
        return False
    if error.fatal():
        from confluent_kafka import KafkaException

        raise KafkaException(error)
    logger.warning("kafka: %s", error.str())
    return True
