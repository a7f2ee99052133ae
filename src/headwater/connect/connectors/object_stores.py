"""Sinks into object stores and table formats (configuration-parsing tests only:
neither connector is on Maven Central).

- Confluent's ``S3SinkConnector``: each topic -> ``s3://<s3.bucket.name>`` +
  ``<topics.dir>/<topic>`` (``topics`` by default), the folder under which
  the connector writes the topic's partitions, named as the agent names a path.
- Apache Iceberg's ``IcebergSinkConnector`` (and Tabular's earlier
  ``io.tabular.iceberg.connect`` one): each table of ``iceberg.tables``; with a
  Hadoop catalog (``iceberg.catalog.type=hadoop``) the table is its location
  ``<iceberg.catalog.warehouse>/<namespace>/<table>``, as the agent names
  Iceberg tables by location; with a Hive catalog
  (``iceberg.catalog.uri=thrift://h:p``) ``hive://h:p`` + ``db.table``;
  a REST or other catalog names no table (its location is known only to the
  catalog), and dynamic routing (``iceberg.tables.dynamic-enabled``) none either.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from headwater.connect.connectors.base import (
    ConnectDataset,
    Connector,
    Lineage,
    NamingContext,
    listed,
    sink_topic_names,
    topic_datasets,
    worker_kafka_namespace,
)
from headwater.naming import dataset_from_location

__all__ = ["iceberg_sink", "s3_sink"]


def s3_sink(connector: Connector, ctx: NamingContext) -> Lineage:
    config = connector.config
    bucket = config.get("s3.bucket.name", "").strip()
    topics_dir = config.get("topics.dir", "topics").strip().strip("/") or "topics"
    topics = sink_topic_names(connector, ctx)
    outputs = []
    if bucket:
        for topic in topics:
            namespace, name = dataset_from_location(f"s3://{bucket}/{topics_dir}/{topic}")
            outputs.append(ConnectDataset(namespace, name, "FILE"))
    inputs = topic_datasets(worker_kafka_namespace(connector, ctx), topics, config)
    return Lineage("s3", inputs, tuple(outputs))


def _iceberg_table(config: dict[str, str], table: str) -> ConnectDataset | None:
    kind = config.get("iceberg.catalog.type", "").strip().lower()
    impl = config.get("iceberg.catalog.catalog-impl", "")
    warehouse = config.get("iceberg.catalog.warehouse", "").strip().rstrip("/")
    uri = config.get("iceberg.catalog.uri", "").strip()
    parts = table.split(".")
    if (kind == "hadoop" or impl.endswith("HadoopCatalog")) and warehouse:
        namespace, name = dataset_from_location(f"{warehouse}/{'/'.join(parts)}")
        return ConnectDataset(namespace, name, "TABLE")
    if (kind == "hive" or uri.startswith("thrift://")) and uri:
        address = urlsplit(uri.split(",")[0])
        return ConnectDataset(f"hive://{address.hostname}:{address.port or 9083}", table, "TABLE")
    return None


def iceberg_sink(connector: Connector, ctx: NamingContext) -> Lineage:
    config = dict(connector.config)
    topics = sink_topic_names(connector, ctx)
    outputs = [_iceberg_table(config, t) for t in listed(config.get("iceberg.tables"))]
    inputs = topic_datasets(worker_kafka_namespace(connector, ctx), topics, config)
    return Lineage("iceberg", inputs, tuple(o for o in outputs if o is not None))
