"""Configuration-parsing tests (no worker runs these connectors): which datasets
each connector family names from a connector's configuration, the topic side
of classes no family knows, and the key/value schema from declared converters.
JDBC, S3 and Iceberg are tested here only; the file connectors, MirrorMaker 2
and Debezium PostgreSQL also run on a real worker (test_watch_worker.py,
test_mirror_worker.py, test_debezium_worker.py)."""

from __future__ import annotations

import pytest

from headwater.connect.connectors import lineage_of
from headwater.connect.connectors.base import Connector, NamingContext
from headwater.connect.connectors.debezium import literal_tables

BROKER = "broker-1:9092,broker-2:9092"
KAFKA = "kafka://broker-1:9092"


def _names(datasets) -> list[tuple[str, str, str]]:
    return [(d.namespace, d.name, d.kind) for d in datasets]


def _ctx(topics: dict[str, list[str]] | None = None) -> NamingContext:
    known = topics or {}
    return NamingContext(BROKER, lambda bootstrap: known.get(bootstrap, []))


def _lineage(
    config: dict[str, str],
    type_: str = "source",
    active: tuple[str, ...] = (),
    topics: dict[str, list[str]] | None = None,
):
    return lineage_of(Connector("c", type_, config, active), _ctx(topics))


def test_file_source_and_sink_by_alias_and_full_class():
    source = _lineage(
        {"connector.class": "FileStreamSource", "file": "/data/in//orders.txt", "topic": "orders"}
    )
    assert source.family == "file"
    assert _names(source.inputs) == [("file", "/data/in/orders.txt", "FILE")]
    assert _names(source.outputs) == [(KAFKA, "orders", "TOPIC")]
    sink = _lineage(
        {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "topics": "a, b",
            "file": "/out/x.txt",
        },
        "sink",
        active=("c",),
    )
    assert _names(sink.inputs) == [
        (KAFKA, "a", "TOPIC"),
        (KAFKA, "b", "TOPIC"),
        (KAFKA, "c", "TOPIC"),
    ]
    assert _names(sink.outputs) == [("file", "/out/x.txt", "FILE")]


def test_file_source_without_file_reads_standard_input_and_names_no_input():
    assert _lineage({"connector.class": "FileStreamSource", "topic": "t"}).inputs == ()


def test_topics_regex_matches_whole_names_on_the_workers_cluster():
    sink = _lineage(
        {"connector.class": "com.example.Unknown", "topics.regex": "orders-.*"},
        "sink",
        topics={BROKER: ["orders-eu", "orders-us", "x-orders-eu"]},
    )
    assert sink.family == "topics"
    assert [d.name for d in sink.inputs] == ["orders-eu", "orders-us"]
    assert sink.outputs == ()


def test_unknown_source_has_its_topic_side_from_used_topics():
    source = _lineage({"connector.class": "com.example.Custom"}, active=("t1", "t2"))
    assert _names(source.outputs) == [(KAFKA, "t1", "TOPIC"), (KAFKA, "t2", "TOPIC")]
    assert source.inputs == ()


def test_an_override_bootstrap_names_the_connectors_own_cluster():
    source = _lineage(
        {
            "connector.class": "FileStreamSource",
            "topic": "t",
            "producer.override.bootstrap.servers": "SASL_SSL://other:9093",
        }
    )
    assert _names(source.outputs) == [("kafka://other:9093", "t", "TOPIC")]


def test_no_known_cluster_names_no_topic():
    connector = Connector("c", "source", {"connector.class": "FileStreamSource", "topic": "t"})
    assert lineage_of(connector, NamingContext()).outputs == ()


@pytest.mark.parametrize(
    ("converter", "type_"),
    [
        ("org.apache.kafka.connect.storage.StringConverter", "string"),
        ("org.apache.kafka.connect.json.JsonConverter", "json"),
        ("org.apache.kafka.connect.converters.ByteArrayConverter", "bytes"),
        ("io.confluent.connect.avro.AvroConverter", "avro"),
        ("com.example.OwnConverter", "OwnConverter"),
    ],
)
def test_declared_converters_type_the_key_and_value(converter: str, type_: str):
    source = _lineage(
        {
            "connector.class": "FileStreamSource",
            "topic": "t",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": converter,
        }
    )
    assert source.outputs[0].fields == (("key", "string", ()), ("value", type_, ()))


def test_no_declared_converter_no_schema():
    assert _lineage({"connector.class": "FileStreamSource", "topic": "t"}).outputs[0].fields == ()


# -- MirrorMaker 2 (configuration parsing) ----------------------------------------------

MM2 = {
    "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "source.cluster.alias": "east",
    "target.cluster.alias": "west",
    "source.cluster.bootstrap.servers": "east-1:9092,east-2:9092",
    "target.cluster.bootstrap.servers": "west-1:9092",
}


def test_mirror_source_maps_source_topics_to_prefixed_target_topics():
    mirror = _lineage(
        {**MM2, "topics": "orders.*, payments"},
        topics={
            "east-1:9092,east-2:9092": [
                "orders",
                "orders-eu",
                "payments",
                "audit",
                "__consumer_offsets",
                "mm2-offsets.west.internal",
            ]
        },
    )
    assert mirror.family == "mirrormaker2"
    assert _names(mirror.inputs) == [
        ("kafka://east-1:9092", t, "TOPIC") for t in ("orders", "orders-eu", "payments")
    ]
    assert _names(mirror.outputs) == [
        ("kafka://west-1:9092", f"east.{t}", "TOPIC") for t in ("orders", "orders-eu", "payments")
    ]


def test_mirror_default_topics_exclude_internal_ones_and_identity_policy_keeps_names():
    mirror = _lineage(
        {
            **MM2,
            "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
        },
        topics={"east-1:9092,east-2:9092": ["orders", "x.internal", "__x"]},
    )
    assert [d.name for d in mirror.inputs] == ["orders"]
    assert [d.name for d in mirror.outputs] == ["orders"]


def test_mirror_maps_used_target_topics_back_with_a_custom_separator():
    mirror = _lineage(
        {**MM2, "replication.policy.separator": "_", "topics": "nothing-listed"},
        active=("east_clicks",),
    )
    assert [d.name for d in mirror.inputs] == ["nothing-listed", "clicks"]
    assert [d.name for d in mirror.outputs] == ["east_nothing-listed", "east_clicks"]


# -- Debezium PostgreSQL (configuration parsing) ----------------------------------------

DEBEZIUM = {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "database.hostname": "PG.example.com",
    "database.port": "5433",
    "database.user": "cdc",
    "database.password": "secret",
    "database.dbname": "shop",
    "topic.prefix": "shopdb",
}


def test_debezium_postgres_names_tables_as_the_agent_names_jdbc_tables():
    cdc = _lineage(
        {
            **DEBEZIUM,
            "table.include.list": r"public.orders, public\.customers, "
            r"audit\..*",
        },
        active=("shopdb.sales.refunds", "shopdb.transaction"),
    )
    assert cdc.family == "debezium-postgres"
    assert _names(cdc.inputs) == [
        ("postgres://pg.example.com:5433", "shop.public.orders", "TABLE"),
        ("postgres://pg.example.com:5433", "shop.public.customers", "TABLE"),
        ("postgres://pg.example.com:5433", "shop.sales.refunds", "TABLE"),
    ]
    assert _names(cdc.outputs) == [
        (KAFKA, "shopdb.public.orders", "TOPIC"),
        (KAFKA, "shopdb.public.customers", "TOPIC"),
        (KAFKA, "shopdb.sales.refunds", "TOPIC"),
    ]


def test_debezium_1x_server_name_is_the_prefix_and_port_defaults_to_5432():
    config = {k: v for k, v in DEBEZIUM.items() if k not in ("topic.prefix", "database.port")}
    cdc = _lineage({**config, "database.server.name": "legacy", "table.whitelist": "s.t"})
    assert _names(cdc.inputs) == [("postgres://pg.example.com:5432", "shop.s.t", "TABLE")]
    assert [d.name for d in cdc.outputs] == ["legacy.s.t"]


def test_literal_tables_skip_patterns():
    assert literal_tables(r"a.b, a\.c, a.*, (x|y)\.z, onlyname") == [("a", "b"), ("a", "c")]


# -- JDBC (configuration parsing) -------------------------------------------------------


def test_jdbc_source_tables_to_prefixed_topics_without_credentials_in_names():
    jdbc = _lineage(
        {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": "jdbc:postgresql://db:5432/sales?user=u&password=p",
            "table.whitelist": "public.orders,customers",
            "topic.prefix": "pg-",
        }
    )
    assert jdbc.family == "jdbc"
    assert _names(jdbc.inputs) == [
        ("postgres://db:5432", "sales.public.orders", "TABLE"),
        ("postgres://db:5432", "sales.customers", "TABLE"),
    ]
    assert [d.name for d in jdbc.outputs] == ["pg-orders", "pg-customers"]


def test_jdbc_source_query_mode_writes_the_prefix_topic_and_names_no_table():
    jdbc = _lineage(
        {
            "connector.class": "JdbcSourceConnector",
            "connection.url": "jdbc:mysql://my:3306/shop",
            "query": "SELECT * FROM orders",
            "topic.prefix": "orders-q",
        }
    )
    assert jdbc.inputs == ()
    assert [d.name for d in jdbc.outputs] == ["orders-q"]


@pytest.mark.parametrize(
    "cls",
    ["io.confluent.connect.jdbc.JdbcSinkConnector", "io.debezium.connector.jdbc.JdbcSinkConnector"],
)
def test_jdbc_sink_topics_to_tables_by_name_format(cls: str):
    jdbc = _lineage(
        {
            "connector.class": cls,
            "topics": "orders,refunds",
            "connection.url": "jdbc:mysql://my.example.com/shop",
            "table.name.format": "kafka_${topic}",
        },
        "sink",
    )
    assert _names(jdbc.inputs) == [(KAFKA, "orders", "TOPIC"), (KAFKA, "refunds", "TOPIC")]
    assert _names(jdbc.outputs) == [
        ("mysql://my.example.com:3306", "shop.kafka_orders", "TABLE"),
        ("mysql://my.example.com:3306", "shop.kafka_refunds", "TABLE"),
    ]


# -- S3 and Iceberg sinks (configuration parsing) ---------------------------------------


def test_s3_sink_names_each_topics_folder():
    s3 = _lineage(
        {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": "orders",
            "s3.bucket.name": "lake",
            "topics.dir": "raw/kafka/",
            "aws.secret.access.key": "x",
        },
        "sink",
    )
    assert s3.family == "s3"
    assert _names(s3.outputs) == [("s3://lake", "raw/kafka/orders", "FILE")]
    default = _lineage(
        {"connector.class": "S3SinkConnector", "topics": "t", "s3.bucket.name": "lake"}, "sink"
    )
    assert _names(default.outputs) == [("s3://lake", "topics/t", "FILE")]


def test_iceberg_sink_hadoop_catalog_tables_by_location_hive_by_metastore_rest_none():
    base = {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics": "orders",
        "iceberg.tables": "db.orders, db.refunds",
    }
    hadoop = _lineage(
        {
            **base,
            "iceberg.catalog.type": "hadoop",
            "iceberg.catalog.warehouse": "s3a://lake/warehouse/",
        },
        "sink",
    )
    assert hadoop.family == "iceberg"
    assert _names(hadoop.outputs) == [
        ("s3://lake", "warehouse/db/orders", "TABLE"),
        ("s3://lake", "warehouse/db/refunds", "TABLE"),
    ]
    hive = _lineage(
        {
            **base,
            "connector.class": "io.tabular.iceberg.connect.IcebergSinkConnector",
            "iceberg.catalog.type": "hive",
            "iceberg.catalog.uri": "thrift://hms:9083",
        },
        "sink",
    )
    assert _names(hive.outputs) == [
        ("hive://hms:9083", "db.orders", "TABLE"),
        ("hive://hms:9083", "db.refunds", "TABLE"),
    ]
    rest = _lineage(
        {
            **base,
            "iceberg.catalog.type": "rest",
            "iceberg.catalog.uri": "https://catalog.example.com",
        },
        "sink",
    )
    assert rest.outputs == ()
    assert _names(rest.inputs) == [(KAFKA, "orders", "TOPIC")]
