"""Confluent's JDBC connectors and Debezium's JDBC sink (configuration-parsing
tests only: neither is on Maven Central).

Tables are named as the agent names JDBC tables
(:func:`headwater.jdbc_urls.jdbc_location` on ``connection.url``, whose
credentials never reach a name).

- ``JdbcSourceConnector``: each table of ``table.include.list`` (or
  ``table.whitelist``) -> topic ``<topic.prefix><table>`` (the table's own
  name, without its schema, as the connector forms it); with ``query`` set,
  one topic, ``topic.prefix`` itself, and no table named (the query is not
  parsed).
- ``JdbcSinkConnector``: each topic -> the table ``table.name.format``
  (``${topic}`` by default; Debezium 3's ``collection.name.format`` too) names.
"""

from __future__ import annotations

from headwater.connect.connectors.base import (
    ConnectDataset,
    Connector,
    Lineage,
    NamingContext,
    listed,
    sink_topic_names,
    source_topic_names,
    topic_datasets,
    worker_kafka_namespace,
)
from headwater.jdbc_urls import jdbc_location

__all__ = ["jdbc_sink", "jdbc_source"]


def _table(url: str, name: str) -> ConnectDataset:
    location = jdbc_location(url)
    return ConnectDataset(location.namespace, location.table_name(name.split(".")), "TABLE")


def jdbc_source(connector: Connector, ctx: NamingContext) -> Lineage:
    config = connector.config
    url = config.get("connection.url", "").strip()
    prefix = config.get("topic.prefix", "")
    if config.get("query", "").strip():
        topics = [prefix] if prefix else []
        tables: list[str] = []
    else:
        tables = listed(config.get("table.include.list") or config.get("table.whitelist"))
        topics = [prefix + t.split(".")[-1] for t in tables]
    inputs = tuple(_table(url, t) for t in tables) if url else ()
    outputs = topic_datasets(
        worker_kafka_namespace(connector, ctx), source_topic_names(connector, topics), config
    )
    return Lineage("jdbc", inputs, outputs)


def jdbc_sink(connector: Connector, ctx: NamingContext) -> Lineage:
    config = connector.config
    url = config.get("connection.url", "").strip()
    topics = sink_topic_names(connector, ctx)
    name_format = (
        config.get("table.name.format") or config.get("collection.name.format") or "${topic}"
    )
    outputs = tuple(_table(url, name_format.replace("${topic}", t)) for t in topics) if url else ()
    inputs = topic_datasets(worker_kafka_namespace(connector, ctx), topics, config)
    return Lineage("jdbc", inputs, outputs)
