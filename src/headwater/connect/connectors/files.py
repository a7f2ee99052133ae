"""Apache Kafka's file connectors: ``FileStreamSource`` (file -> topic) and
``FileStreamSink`` (topics -> file). Tested against a real Connect worker."""

from __future__ import annotations

from headwater.connect.connectors.base import (
    ConnectDataset,
    Connector,
    Lineage,
    NamingContext,
    sink_topic_names,
    source_topic_names,
    topic_datasets,
    worker_kafka_namespace,
)
from headwater.naming import dataset_from_location

__all__ = ["file_sink", "file_source"]


def _file(connector: Connector) -> tuple[ConnectDataset, ...]:
    # No ``file`` means standard input or output: nothing to name.
    path = connector.config.get("file", "").strip()
    if not path:
        return ()
    namespace, name = dataset_from_location(path)
    return (ConnectDataset(namespace, name, "FILE"),)


def file_source(connector: Connector, ctx: NamingContext) -> Lineage:
    outputs = topic_datasets(
        worker_kafka_namespace(connector, ctx), source_topic_names(connector), connector.config
    )
    return Lineage("file", _file(connector), outputs)


def file_sink(connector: Connector, ctx: NamingContext) -> Lineage:
    inputs = topic_datasets(
        worker_kafka_namespace(connector, ctx), sink_topic_names(connector, ctx), connector.config
    )
    return Lineage("file", inputs, _file(connector))
