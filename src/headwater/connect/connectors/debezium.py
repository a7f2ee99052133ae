"""Debezium's PostgreSQL connector: tables -> ``<topic.prefix>.<schema>.<table>``.

Inputs are named as the agent names a PostgreSQL table read over JDBC
(:func:`headwater.jdbc_urls.jdbc_location` on
``jdbc:postgresql://<database.hostname>:<database.port>/<database.dbname>``):
``postgres://host:port`` + ``db.schema.table``. Tables come from the literal
entries of ``table.include.list`` (each a regex over ``schema.table``; an
entry with regex operators other than an escaped dot names no table by
itself) and from the topics the connector has written
(``<prefix>.<schema>.<table>``), so a pattern's tables appear once their
changes flow. ``topic.prefix`` (``database.server.name`` in Debezium 1.x) is
the topic prefix; topic routing transforms are not followed. Tested on a real
worker against a real PostgreSQL, and by configuration parsing.
"""

from __future__ import annotations

import re

from headwater.connect.connectors.base import (
    ConnectDataset,
    Connector,
    Lineage,
    NamingContext,
    listed,
    topic_datasets,
    worker_kafka_namespace,
)
from headwater.jdbc_urls import jdbc_location

__all__ = ["literal_tables", "postgres_source"]

_REGEX_OPERATORS = re.compile(r"[*+?\[\](){}|^$]|\\[^.]")


def literal_tables(include_list: str | None) -> list[tuple[str, str]]:
    """``(schema, table)`` of the entries of a table include list that are plain names."""
    tables = []
    for entry in listed(include_list):
        if _REGEX_OPERATORS.search(entry):
            continue
        parts = entry.replace("\\.", ".").split(".")
        if len(parts) == 2 and all(parts):
            tables.append((parts[0], parts[1]))
    return tables


def postgres_source(connector: Connector, ctx: NamingContext) -> Lineage:
    config = connector.config
    prefix = (config.get("topic.prefix") or config.get("database.server.name") or "").strip()
    tables = literal_tables(config.get("table.include.list") or config.get("table.whitelist"))
    if prefix:
        for topic in connector.active_topics:
            rest = topic[len(prefix) + 1 :] if topic.startswith(prefix + ".") else ""
            parts = rest.split(".")
            if len(parts) == 2 and all(parts):
                tables.append((parts[0], parts[1]))
    tables = list(dict.fromkeys(tables))
    host = config.get("database.hostname", "").strip()
    port = config.get("database.port", "5432").strip() or "5432"
    database = config.get("database.dbname", "").strip()
    inputs: tuple[ConnectDataset, ...] = ()
    if host and database:
        location = jdbc_location(f"jdbc:postgresql://{host}:{port}/{database}")
        inputs = tuple(
            ConnectDataset(location.namespace, location.table_name(t), "TABLE") for t in tables
        )
    topics = [f"{prefix}.{schema}.{table}" for schema, table in tables] if prefix else []
    outputs = topic_datasets(worker_kafka_namespace(connector, ctx), topics, config)
    return Lineage("debezium-postgres", inputs, outputs)
