"""Kafka transport: produce each event to a topic, configured as the OpenLineage listener is.

``topicName`` names the topic, ``properties.*`` are the producer's settings
(``properties.bootstrap.servers`` at least) and ``messageKey`` fixes every
message's key. The Python client's spellings (``topic``, ``config``,
``message_key``) and the listener's older ``localServerId`` work too.

Without ``messageKey`` the key follows the OpenLineage clients: a run event is
keyed ``run:{namespace}/{name}`` of its root parent's job, else its parent's
job, else its own job, so an application's run and every action run under it
land in one partition and are read back in the order they were produced;
dataset and job events are keyed ``dataset:`` / ``job:`` and their name.

A batch is produced and then waited for until librdkafka reports the fate of
every message (``message.timeout.ms``, 10 s unless set), so the emitter learns
what got through and retries, spools or rejects the rest as for HTTP. The
Java producer's own settings that librdkafka does not know
(``key.serializer``, ``value.serializer``, ``max.block.ms`` …), which the
listener's documented examples carry, are logged and left out rather than
failing the transport.

``confluent-kafka`` is an optional extra (``pip install 'headwater[kafka]'``),
imported only when a Kafka transport is built.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from headwater.errors import ConfigError
from headwater.transport.base import BatchFailure, DeliveryError, Event, TransportBase

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message, Producer

__all__ = ["KafkaConfig", "KafkaTransport", "message_key"]

logger = logging.getLogger(__name__)

# Delivery answers the producer waits for by default: every in-sync replica, so a
# message reported delivered survives the loss of the leader.
_DEFAULTS = {"acks": "all", "message.timeout.ms": "10000", "linger.ms": "5"}
# A message librdkafka has said nothing about by the deadline may still be sent
# later; sent again meanwhile, the copy is a duplicate the server drops.
_NO_REPORT = ("kafka: no delivery report in time", True)
_UNKNOWN_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')
# librdkafka error names for messages the broker refuses for what they are:
# retrying the same bytes cannot help. Anything else (timeouts, leaders moving,
# an unknown topic, authorisation) may pass once the cluster or its ACLs change.
_CONTENT_ERRORS = frozenset({
    "MSG_SIZE_TOO_LARGE", "_MSG_SIZE_TOO_LARGE", "INVALID_MSG", "INVALID_RECORD",
    "RECORD_LIST_TOO_LARGE", "INVALID_MSG_SIZE", "CORRUPT_MESSAGE",
})


@dataclass(frozen=True)
class KafkaConfig:
    """Settings of the Kafka transport, spelled as the OpenLineage listener spells them."""

    topic: str
    properties: Mapping[str, str] = field(default_factory=dict)
    message_key: str | None = None

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> KafkaConfig:
        """Build from a transport mapping (``topicName``, ``properties``, ``messageKey``)."""
        topic = str(config.get("topicName") or config.get("topic") or "").strip()
        if not topic:
            raise ConfigError("transport.topicName is required for the kafka transport")
        properties = config.get("properties") or config.get("config") or {}
        if not isinstance(properties, Mapping):
            raise ConfigError("transport.properties must be a key/value map")
        flat = {str(k): str(v) for k, v in properties.items()}
        if not flat.get("bootstrap.servers"):
            raise ConfigError("transport.properties.bootstrap.servers is required "
                              "for the kafka transport")
        key = config.get("messageKey") or config.get("message_key") or config.get("localServerId")
        return cls(topic=topic, properties=flat, message_key=str(key) if key else None)

    @property
    def delivery_timeout(self) -> float:
        """Seconds librdkafka takes at most to report each message delivered or failed."""
        try:
            return float(self.properties.get("message.timeout.ms",
                                             _DEFAULTS["message.timeout.ms"])) / 1000.0
        except ValueError:
            return float(_DEFAULTS["message.timeout.ms"]) / 1000.0


def message_key(event: Event) -> str | None:
    """The OpenLineage clients' default key of ``event`` (None if it names nothing)."""
    run = event.get("run")
    job = event.get("job")
    if isinstance(run, Mapping):
        owner = job
        facets = run.get("facets")
        parent = facets.get("parent") if isinstance(facets, Mapping) else None
        if isinstance(parent, Mapping):
            root = parent.get("root")
            for candidate in ((root.get("job") if isinstance(root, Mapping) else None),
                              parent.get("job")):
                if _named(candidate):
                    owner = candidate
                    break
        return f"run:{_path(owner)}" if _named(owner) else None
    dataset = event.get("dataset")
    if _named(dataset):
        return f"dataset:{_path(dataset)}"
    if _named(job):
        return f"job:{_path(job)}"
    return None


def _named(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value.get("namespace")) and bool(value.get("name"))


def _path(value: Any) -> str:
    return f"{value['namespace']}/{value['name']}"


class KafkaTransport(TransportBase):
    """Produce events with confluent-kafka; a batch waits for every delivery report."""

    def __init__(self, config: KafkaConfig, producer: Producer | None = None) -> None:
        self.config = config
        self._producer = producer if producer is not None else _build_producer(config.properties)

    def emit(self, event: Event) -> None:
        failures = self.emit_batch([event])
        if failures:
            raise DeliveryError(failures[0].reason, retriable=failures[0].retriable)

    def emit_batch(self, events: Sequence[Event]) -> list[BatchFailure]:
        from confluent_kafka import KafkaException

        wait = self.config.delivery_timeout + 1.0
        deadline = time.monotonic() + wait
        # index -> None (delivered) or the reason and whether to retry; absent = no report yet.
        reports: dict[int, tuple[str, bool] | None] = {}

        def reporter(index: int) -> Any:
            def report(error: KafkaError | None, _message: Message) -> None:
                reports[index] = None if error is None else (
                    f"kafka: {error.str()}", error.name() not in _CONTENT_ERRORS)
            return report

        for index, event in enumerate(events):
            value = json.dumps(event, separators=(",", ":")).encode("utf-8")
            key = self.config.message_key or message_key(event)
            while True:
                try:
                    self._producer.produce(self.config.topic, value=value,
                                           key=key.encode("utf-8") if key else None,
                                           on_delivery=reporter(index))
                    break
                except BufferError:
                    # librdkafka's local queue is full: serve delivery reports to drain it.
                    if time.monotonic() >= deadline:
                        reports[index] = ("kafka: the producer's local queue stayed full", True)
                        break
                    self._producer.poll(0.1)
                except KafkaException as exc:
                    error = exc.args[0] if exc.args else None
                    name = error.name() if hasattr(error, "name") else ""
                    reports[index] = (f"kafka: {exc}", name not in _CONTENT_ERRORS)
                    break
        self._producer.flush(max(deadline - time.monotonic(), 0.0))
        failures = []
        for index in range(len(events)):
            report = reports.get(index, _NO_REPORT)
            if report is not None:
                failures.append(BatchFailure(index, *report))
        if events and len(failures) == len(events) and all(f.retriable for f in failures):
            # Nothing got through: the emitter retries with backoff and counts it
            # towards the circuit breaker, as for an unreachable HTTP server.
            raise DeliveryError(failures[0].reason, retriable=True)
        return failures

    def close(self, timeout: float) -> None:
        left = self._producer.flush(max(timeout, 0.0))
        if left:
            logger.warning("kafka transport closed with %d message(s) not yet acknowledged", left)


def _build_producer(properties: Mapping[str, str]) -> Producer:
    try:
        from confluent_kafka import KafkaException, Producer
    except ImportError as exc:
        raise ConfigError("the kafka transport needs confluent-kafka: "
                          "pip install 'headwater[kafka]'") from exc
    settings = {**_DEFAULTS, **properties}
    while True:
        try:
            return Producer(settings)
        except KafkaException as exc:
            match = _UNKNOWN_PROPERTY.search(str(exc))
            if match is None or match.group(1) not in settings:
                raise ConfigError(f"kafka producer settings refused: {exc}") from exc
            logger.warning("kafka transport: librdkafka has no setting %r (a Java producer "
                           "setting?); left out", match.group(1))
            del settings[match.group(1)]
