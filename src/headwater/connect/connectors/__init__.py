"""Which datasets a connector reads and writes, one module per connector family.

===========================================================  =================  ===========
connector class                                              family (module)    tested with
===========================================================  =================  ===========
``org.apache.kafka.connect.file.FileStreamSourceConnector``  file (files)       real worker
``org.apache.kafka.connect.file.FileStreamSinkConnector``    file (files)       real worker
``org.apache.kafka.connect.mirror.MirrorSourceConnector``    mirrormaker2       real worker
``io.debezium.connector.postgresql.PostgresConnector``       debezium-postgres  real worker
``io.confluent.connect.jdbc.JdbcSourceConnector``            jdbc               config
``io.confluent.connect.jdbc.JdbcSinkConnector``              jdbc               config
``io.debezium.connector.jdbc.JdbcSinkConnector``             jdbc               config
``io.confluent.connect.s3.S3SinkConnector``                  s3                 config
``org.apache.iceberg.connect.IcebergSinkConnector``          iceberg            config
``io.tabular.iceberg.connect.IcebergSinkConnector``          iceberg            config
===========================================================  =================  ===========

"real worker": a test runs the connector on a real Connect worker; "config":
configuration-parsing tests only (the connector is not run in the suite).
Any other class gets the topic side only (:func:`topics_only`): a sink's
``topics`` / ``topics.regex``, a source's ``topic``, and the topics the worker
reports it has used. Classes are matched by their simple name with or without
the ``Connector`` suffix, as Connect itself accepts aliases.
"""

from __future__ import annotations

from collections.abc import Callable

from headwater.connect.connectors.base import (
    Connector,
    Lineage,
    NamingContext,
    sink_topic_names,
    source_topic_names,
    topic_datasets,
    worker_kafka_namespace,
)
from headwater.connect.connectors.debezium import postgres_source
from headwater.connect.connectors.files import file_sink, file_source
from headwater.connect.connectors.jdbc import jdbc_sink, jdbc_source
from headwater.connect.connectors.mirror import mirror_source
from headwater.connect.connectors.object_stores import iceberg_sink, s3_sink

__all__ = ["FAMILIES", "lineage_of", "topics_only"]

Family = Callable[[Connector, NamingContext], Lineage]

#: Fully qualified connector class -> the function that names its datasets.
FAMILIES: dict[str, Family] = {
    "org.apache.kafka.connect.file.FileStreamSourceConnector": file_source,
    "org.apache.kafka.connect.file.FileStreamSinkConnector": file_sink,
    "org.apache.kafka.connect.mirror.MirrorSourceConnector": mirror_source,
    "io.debezium.connector.postgresql.PostgresConnector": postgres_source,
    "io.confluent.connect.jdbc.JdbcSourceConnector": jdbc_source,
    "io.confluent.connect.jdbc.JdbcSinkConnector": jdbc_sink,
    "io.debezium.connector.jdbc.JdbcSinkConnector": jdbc_sink,
    "io.confluent.connect.s3.S3SinkConnector": s3_sink,
    "org.apache.iceberg.connect.IcebergSinkConnector": iceberg_sink,
    "io.tabular.iceberg.connect.IcebergSinkConnector": iceberg_sink,
}

_ALIASES: dict[str, Family] = {}
for _class, _family in FAMILIES.items():
    _simple = _class.rsplit(".", 1)[-1]
    _ALIASES.setdefault(_simple, _family)
    _ALIASES.setdefault(_simple.removesuffix("Connector"), _family)


def topics_only(connector: Connector, ctx: NamingContext) -> Lineage:
    """The topic side of a connector no family knows."""
    namespace = worker_kafka_namespace(connector, ctx)
    if connector.type == "sink":
        return Lineage(
            "topics",
            inputs=topic_datasets(namespace, sink_topic_names(connector, ctx), connector.config),
        )
    return Lineage(
        "topics", outputs=topic_datasets(namespace, source_topic_names(connector), connector.config)
    )


def lineage_of(connector: Connector, ctx: NamingContext) -> Lineage:
    """The connector's datasets, by its family (or its topic side only)."""
    name = connector.config.get("connector.class", "").strip()
    family = FAMILIES.get(name) or _ALIASES.get(name) or topics_only
    return family(connector, ctx)
