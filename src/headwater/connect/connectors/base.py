"""What every connector family shares: datasets, the topic side, converter schemas.

The topic side of a connector is named on the Kafka cluster its worker
produces to and consumes from (``--bootstrap-servers``, or the connector's own
``producer.override.bootstrap.servers`` / ``consumer.override.bootstrap.servers``)
with :func:`headwater.naming.kafka_namespace`, the function the agent names
topics with, so a topic a connector writes and a Spark job reads is one node.

Topic names come from ``topics`` (comma-separated), ``topics.regex`` (matched
whole, as Java's ``Pattern.matches``, against the broker's topic list), a
source's ``topic``, and the topics the worker reports the connector has used
(``GET /connectors/<name>/topics``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from headwater.events.facets import SchemaField
from headwater.naming import kafka_namespace

__all__ = [
    "ConnectDataset",
    "Connector",
    "Lineage",
    "NamingContext",
    "converter_fields",
    "listed",
    "matching",
    "sink_topic_names",
    "source_topic_names",
    "topic_datasets",
    "worker_bootstrap",
    "worker_kafka_namespace",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConnectDataset:
    """A dataset a connector reads or writes; ``kind`` is the OpenLineage datasetType."""

    namespace: str
    name: str
    kind: str
    fields: tuple[SchemaField, ...] = ()


@dataclass(frozen=True)
class Lineage:
    """A connector's inputs and outputs, and which family named them."""

    family: str
    inputs: tuple[ConnectDataset, ...] = ()
    outputs: tuple[ConnectDataset, ...] = ()


@dataclass(frozen=True)
class Connector:
    """What a family reads: the connector's name, type and (unredacted) configuration."""

    name: str
    type: str
    config: Mapping[str, str]
    active_topics: tuple[str, ...] = ()


@dataclass
class NamingContext:
    """The watcher's view of the Kafka side.

    ``list_topics(bootstrap)`` answers a cluster's topic names (``topics.regex``,
    MirrorMaker's ``topics``); it is called at most once per cluster per poll.
    """

    bootstrap_servers: str | None = None
    list_topics: Callable[[str], Sequence[str]] | None = None
    _topics: dict[str, list[str]] = field(default_factory=dict)

    def topics_of(self, bootstrap: str | None) -> list[str]:
        if not bootstrap or self.list_topics is None:
            return []
        if bootstrap not in self._topics:
            try:
                self._topics[bootstrap] = sorted(self.list_topics(bootstrap))
            except Exception:  # noqa: BLE001 - a broker down leaves the regex side unknown
                logger.warning("could not list the topics of %s", bootstrap, exc_info=True)
                self._topics[bootstrap] = []
        return self._topics[bootstrap]


def listed(value: str | None) -> list[str]:
    """A comma-separated configuration list, each item stripped, empties dropped."""
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def matching(patterns: Iterable[str], names: Iterable[str]) -> list[str]:
    """``names`` that one of ``patterns`` matches whole (Java ``Pattern.matches``)."""
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error:
            logger.warning("topic pattern %r is not a regular expression Python reads", pattern)
    return [n for n in names if any(p.fullmatch(n) for p in compiled)]


def worker_bootstrap(connector: Connector, ctx: NamingContext) -> str | None:
    config = connector.config
    own = (
        config.get("producer.override.bootstrap.servers")
        if connector.type == "source"
        else config.get("consumer.override.bootstrap.servers")
    )
    return own or ctx.bootstrap_servers


def worker_kafka_namespace(connector: Connector, ctx: NamingContext) -> str | None:
    """``kafka://host:port`` of the cluster the connector's tasks use."""
    return kafka_namespace(worker_bootstrap(connector, ctx))


def sink_topic_names(connector: Connector, ctx: NamingContext) -> list[str]:
    """A sink's topics: ``topics``, ``topics.regex`` resolved on the broker, and those used."""
    names = listed(connector.config.get("topics"))
    pattern = connector.config.get("topics.regex", "").strip()
    if pattern:
        names += matching([pattern], ctx.topics_of(worker_bootstrap(connector, ctx)))
    names += connector.active_topics
    return list(dict.fromkeys(names))


def source_topic_names(connector: Connector, configured: Iterable[str] = ()) -> list[str]:
    """A source's topics: ``configured`` ones, a ``topic`` key, and those used."""
    names = [*configured, *listed(connector.config.get("topic")), *connector.active_topics]
    return list(dict.fromkeys(names))


_CONVERTER_TYPES = {
    "StringConverter": "string",
    "ByteArrayConverter": "bytes",
    "JsonConverter": "json",
    "IntegerConverter": "int",
    "LongConverter": "long",
    "ShortConverter": "short",
    "FloatConverter": "float",
    "DoubleConverter": "double",
    "BooleanConverter": "boolean",
    "AvroConverter": "avro",
    "ProtobufConverter": "protobuf",
    "JsonSchemaConverter": "json",
}


def converter_fields(config: Mapping[str, str]) -> tuple[SchemaField, ...]:
    """``key`` and ``value`` fields typed by the converters the connector declares.

    Only the connector's own ``key.converter`` / ``value.converter`` are visible
    through the REST API (a worker's defaults are not), and a record's own
    schema (JsonConverter's envelope, a registry's Avro schema) travels with the
    data, which the watcher does not read: the field's type says the encoding.
    """
    fields: list[SchemaField] = []
    for side in ("key", "value"):
        converter = config.get(f"{side}.converter", "").strip()
        if converter:
            simple = converter.rsplit(".", 1)[-1]
            fields.append((side, _CONVERTER_TYPES.get(simple, simple), ()))
    return tuple(fields)


def topic_datasets(
    namespace: str | None, names: Iterable[str], config: Mapping[str, str]
) -> tuple[ConnectDataset, ...]:
    """TOPIC datasets on ``namespace`` (none when the cluster is unknown)."""
    if namespace is None:
        return ()
    fields = converter_fields(config)
    return tuple(ConnectDataset(namespace, n, "TOPIC", fields) for n in dict.fromkeys(names))
