"""Kafka topics on a real SparkSession and a real broker: batch reads (subscribe,
assign, subscribePattern; the V1 relation and the DSv2 scan) and writes (a topic
option, a topic column), their namespace, name, schema and dataset type, and the
namespace resolver that names the cluster."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.agent.namespace_resolvers import parse_namespace_resolvers
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.agent.conftest import Lineage
from tests.support.spark_packages import needs_connectors

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.slow, needs_connectors("kafka")]

#: The columns of a Kafka read, as the suite's expected events list them.
READ_FIELDS = [
    ("key", "binary"),
    ("value", "binary"),
    ("topic", "string"),
    ("partition", "integer"),
    ("offset", "long"),
    ("timestamp", "timestamp"),
    ("timestampType", "integer"),
]


def _topic(label: str) -> str:
    # The broker is shared by the session: each test writes topics of its own.
    return f"{label}-{uuid.uuid4().hex[:8]}"


def _fields(dataset: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["name"], f["type"]) for f in dataset["facets"]["schema"]["fields"]]


def _complete(events: list[dict[str, Any]], job_part: str) -> dict[str, Any]:
    found = [e for e in events if e["eventType"] == "COMPLETE" and job_part in e["job"]["name"]]
    assert len(found) == 1, [(e["eventType"], e["job"]["name"]) for e in events]
    return found[0]


def _named(datasets: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((d["namespace"], d["name"]) for d in datasets)


def _write(spark: Any, bootstrap: str, topic: str, rows: int = 3) -> None:
    (
        spark.range(rows)
        .selectExpr("CAST(id AS STRING) AS key", "CONCAT('v', id) AS value")
        .write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .save()
    )


def _reader(spark: Any, bootstrap: str) -> Any:
    return spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)


def test_write_with_a_topic_option_names_the_topic(spark, lineage, kafka_bootstrap: str):
    topic = _topic("orders")
    _write(spark, kafka_bootstrap, topic)

    event = _complete(lineage.action_events(), "execute_save_into_data_source_command")
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == (f"kafka://{kafka_bootstrap}", topic)
    assert output["facets"]["datasetType"]["datasetType"] == "TOPIC"
    assert output["facets"]["dataSource"]["uri"] == f"kafka://{kafka_bootstrap}"
    assert _fields(output) == [("key", "string"), ("value", "string")]
    # The listener appends no dataset name to a Kafka write's job.
    assert event["job"]["name"] == "headwater_agent_tests.execute_save_into_data_source_command"


def test_subscribe_read_into_files_names_topic_and_column_lineage(
    spark, lineage, kafka_bootstrap: str, tmp_path: Path
):
    topic = _topic("events")
    _write(spark, kafka_bootstrap, topic)
    target = tmp_path / "events"
    (
        _reader(spark, kafka_bootstrap)
        .option("subscribe", topic)
        .load()
        .selectExpr("CAST(value AS STRING) AS body", "offset")
        .write.parquet(str(target))
    )

    event = _complete(lineage.action_events(), "execute_insert_into_hadoop_fs_relation_command")
    (source,) = event["inputs"]
    assert (source["namespace"], source["name"]) == (f"kafka://{kafka_bootstrap}", topic)
    assert source["facets"]["datasetType"]["datasetType"] == "TOPIC"
    assert _fields(source) == READ_FIELDS
    lineage_fields = event["outputs"][0]["facets"]["columnLineage"]["fields"]
    assert [(f["namespace"], f["name"], f["field"]) for f in lineage_fields["body"]["inputFields"]] == [
        (f"kafka://{kafka_bootstrap}", topic, "value")
    ]


def test_subscribe_to_several_topics_and_headers(spark, tmp_path: Path, kafka_bootstrap: str):
    first, second = _topic("a"), _topic("b")
    _write(spark, kafka_bootstrap, first)
    _write(spark, kafka_bootstrap, second)
    tracker = Lineage(spark, tmp_path / "events.jsonl", capture_read_only_actions=True)
    try:
        _reader(spark, kafka_bootstrap).option("subscribe", f"{first}, {second}").option(
            "includeHeaders", "true"
        ).load().limit(100).collect()
        event = _complete(tracker.action_events(), "collect_limit")
    finally:
        tracker.close()
    namespace = f"kafka://{kafka_bootstrap}"
    assert _named(event["inputs"]) == sorted([(namespace, first), (namespace, second)])
    fields = _fields(event["inputs"][0])
    assert fields[: len(READ_FIELDS)] == READ_FIELDS
    assert fields[-1] == ("headers", "array")


def test_assign_read_names_each_assigned_topic_once(spark, lineage, kafka_bootstrap: str, tmp_path: Path):
    first, second = _topic("assigned-a"), _topic("assigned-b")
    _write(spark, kafka_bootstrap, first)
    _write(spark, kafka_bootstrap, second)
    target = tmp_path / "assigned"
    (
        _reader(spark, kafka_bootstrap)
        .option("assign", f'{{"{first}": [0], "{second}": [0]}}')
        .load()
        .select("topic", "partition")
        .write.parquet(str(target))
    )

    event = _complete(lineage.action_events(), "execute_insert_into_hadoop_fs_relation_command")
    namespace = f"kafka://{kafka_bootstrap}"
    assert _named(event["inputs"]) == sorted([(namespace, first), (namespace, second)])
    assert all(_fields(d) == READ_FIELDS for d in event["inputs"])


def test_pattern_read_is_named_by_its_pattern(spark, lineage, kafka_bootstrap: str, tmp_path: Path):
    prefix = _topic("patterned")
    _write(spark, kafka_bootstrap, f"{prefix}-1")
    target = tmp_path / "patterned"
    _reader(spark, kafka_bootstrap).option("subscribePattern", f"{prefix}-.*").load().select(
        "value"
    ).write.parquet(str(target))

    event = _complete(lineage.action_events(), "execute_insert_into_hadoop_fs_relation_command")
    (source,) = event["inputs"]
    assert (source["namespace"], source["name"]) == (f"kafka://{kafka_bootstrap}", f"{prefix}-.*")
    assert source["facets"]["datasetType"]["datasetType"] == "TOPIC"


def test_write_with_a_literal_topic_column_names_those_topics(spark, lineage, kafka_bootstrap: str):
    first, second = _topic("lit-a"), _topic("lit-b")
    rows = spark.range(2).selectExpr("CAST(id AS STRING) AS value")
    rows.selectExpr(f"'{first}' AS topic", "value").union(
        rows.selectExpr(f"'{second}' AS topic", "value")
    ).write.format("kafka").option("kafka.bootstrap.servers", kafka_bootstrap).save()

    event = _complete(lineage.action_events(), "execute_save_into_data_source_command")
    namespace = f"kafka://{kafka_bootstrap}"
    assert _named(event["outputs"]) == sorted([(namespace, first), (namespace, second)])
    assert all(_fields(d) == [("topic", "string"), ("value", "string")] for d in event["outputs"])


def test_write_with_a_computed_topic_column_names_no_topic(spark, lineage, kafka_bootstrap: str):
    prefix = _topic("computed")
    spark.range(2).selectExpr(f"CONCAT('{prefix}-', id) AS topic", "CAST(id AS STRING) AS value").write.format(
        "kafka"
    ).option("kafka.bootstrap.servers", kafka_bootstrap).save()

    event = _complete(lineage.action_events(), "execute_save_into_data_source_command")
    assert event["outputs"] == []


def test_host_list_resolver_names_the_cluster(spark, tmp_path: Path, kafka_bootstrap: str):
    host, port = kafka_bootstrap.rsplit(":", 1)
    resolvers = parse_namespace_resolvers(
        {
            "spark.openlineage.dataset.namespaceResolvers.kafka-cluster-prod.type": "hostList",
            "spark.openlineage.dataset.namespaceResolvers.kafka-cluster-prod.hosts": f"[kafka-host;{host}]",
        }
    )
    topic = _topic("resolved")
    tracker = Lineage(spark, tmp_path / "events.jsonl", namespace_resolvers=resolvers)
    try:
        _write(spark, kafka_bootstrap, topic)
        _reader(spark, kafka_bootstrap).option("subscribe", topic).load().select("value").write.parquet(
            str(tmp_path / "copy")
        )
        events = tracker.action_events()
    finally:
        tracker.close()
    cluster = f"kafka://kafka-cluster-prod:{port}"
    (written,) = _complete(events, "execute_save_into_data_source_command")["outputs"]
    assert (written["namespace"], written["name"]) == (cluster, topic)
    assert written["facets"]["dataSource"] == {**written["facets"]["dataSource"], "name": cluster, "uri": cluster}
    copy = _complete(events, "execute_insert_into_hadoop_fs_relation_command")
    assert _named(copy["inputs"]) == [(cluster, topic)]
    # Namespaces the resolver does not name stay as they are.
    assert copy["outputs"][0]["namespace"] == "file"


def test_dsv2_read_and_write_are_named_by_their_options(
    spark, lineage, kafka_bootstrap: str, tmp_path: Path
):
    topic, written = _topic("dsv2"), _topic("dsv2-out")
    _write(spark, kafka_bootstrap, topic)
    key = "spark.sql.sources.useV1SourceList"
    previous = spark.conf.get(key)
    spark.conf.set(key, ",".join(s for s in previous.split(",") if s.strip() != "kafka"))
    try:
        frame = _reader(spark, kafka_bootstrap).option("subscribe", topic).load()
        assert frame._jdf.queryExecution().optimizedPlan().nodeName() == "DataSourceV2ScanRelation"
        frame.select("value").write.parquet(str(tmp_path / "dsv2"))
        # DSv2 writes to Kafka take append (or overwrite) only.
        spark.range(2).selectExpr("CAST(id AS STRING) AS value").write.format("kafka").mode(
            "append"
        ).option("kafka.bootstrap.servers", kafka_bootstrap).option("topic", written).save()
    finally:
        spark.conf.set(key, previous)

    events = lineage.action_events()
    namespace = f"kafka://{kafka_bootstrap}"
    read = _complete(events, "execute_insert_into_hadoop_fs_relation_command")
    (source,) = read["inputs"]
    assert (source["namespace"], source["name"]) == (namespace, topic)
    assert source["facets"]["datasetType"]["datasetType"] == "TOPIC"
    assert _fields(source) == READ_FIELDS
    append = _complete(events, "append_data")
    assert _named(append["outputs"]) == [(namespace, written)]
    assert append["outputs"][0]["facets"]["datasetType"]["datasetType"] == "TOPIC"


def _nested(fields: list[dict[str, Any]]) -> list[Any]:
    return [(f["name"], f["type"], _nested(f.get("fields", []))) if f.get("fields") else (f["name"], f["type"])
            for f in fields]


def test_the_struct_a_producer_serialises_and_a_consumer_declares_are_on_the_topic(
    spark, lineage, kafka_bootstrap: str, tmp_path: Path
):
    topic = _topic("orders-json")
    orders = spark.createDataFrame(
        [(1, 9.5, "Lyon"), (2, 3.25, "Oslo")], "order_id long, amount double, city string"
    )
    orders.selectExpr(
        "CAST(order_id AS STRING) AS key",
        "to_json(named_struct('order_id', order_id, 'amount', CAST(amount AS STRING),"
        " 'shipping', named_struct('city', city), 'note', upper(city))) AS value",
    ).write.format("kafka").option("kafka.bootstrap.servers", kafka_bootstrap).option(
        "topic", topic
    ).save()
    produced = _complete(lineage.action_events(), "execute_save_into_data_source_command")
    (written,) = produced["outputs"]
    # The value column is the struct it serialises; a field made by another function
    # than a cast has no known type.
    assert _nested(written["facets"]["schema"]["fields"]) == [
        ("key", "string"),
        ("value", "struct", [
            ("order_id", "long"), ("amount", "string"),
            ("shipping", "struct", [("city", "string")]), ("note", "unknown"),
        ]),
    ]

    parsed = (
        _reader(spark, kafka_bootstrap).option("subscribe", topic).load()
        .selectExpr("from_json(CAST(value AS STRING), 'order_id long, amount double') AS o")
        .selectExpr("o.order_id", "o.amount")
    )
    parsed.write.parquet(str(tmp_path / "parsed"))
    consumed = [
        e for e in lineage.action_events()
        if e["eventType"] == "COMPLETE" and _named(e["inputs"]) == [(f"kafka://{kafka_bootstrap}", topic)]
    ]
    (read,) = consumed[-1]["inputs"]
    declared = read["inputFacets"]["declaredSchema"]
    assert _nested(declared["fields"]) == [
        ("value", "struct", [("order_id", "long"), ("amount", "double")])
    ]
    # The producer writes amount as a string, the consumer reads a double: both facts are here.
    value = written["facets"]["schema"]["fields"][1]
    assert [f["type"] for f in value["fields"] if f["name"] == "amount"] == ["string"]

    # ... and the store flags them as a breaking contract drift naming the consumer.
    store = Store.open(f"sqlite:///{tmp_path / 'lineage.db'}", migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            posted = client.post("/api/v1/lineage/batch", json=[produced, consumed[-1]])
            assert posted.status_code == 200 and posted.json()["summary"]["failed"] == 0
            (drift,) = client.get("/api/v2/drift", params={"kind": "contract"}).json()["drifts"]
    finally:
        store.close()
    assert drift["breaking"] is True
    assert drift["datasetId"] == f"dataset:kafka://{kafka_bootstrap}:{topic}"
    assert drift["consumer"]["name"] == consumed[-1]["job"]["name"]
    assert [(c["kind"], c["path"], c["old"], c["new"]) for c in drift["changes"]] == [
        ("type_narrowed", "value.amount", "string", "double")
    ]
