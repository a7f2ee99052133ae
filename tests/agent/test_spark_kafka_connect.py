"""Kafka Connect and PySpark in one graph: a FileStreamSource on the session's
real Connect worker copies a file into a topic, a PySpark batch job (the agent
on the session SparkSession) reads the topic into a table, and the events of
both producers, ingested into a real store through the in-process server,
form one connected graph file -> connector -> topic -> Spark job -> table."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.agent.spec import validate_event
from tests.connect.helpers import Collected, delete, put, running, wait_state, watcher_for
from tests.support.kafka_topics import read_messages
from tests.support.lineage_graph import downstream_path
from tests.support.spark_packages import needs_connectors

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.slow]


@needs_connectors("kafka")
def test_file_source_connector_then_spark_job_is_one_connected_graph(
    spark, lineage, kafka_bootstrap: str, connect_worker, tmp_path: Path
):
    suffix = uuid.uuid4().hex[:8]
    connector, topic, table = f"orders-file-{suffix}", f"orders-{suffix}", f"orders_{suffix}"
    source_file = tmp_path / "orders.txt"
    source_file.write_text("".join(f'{{"id": {i}, "amount": {i * 10}}}\n' for i in range(5)))
    put(
        connect_worker.url,
        connector,
        {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "file": str(source_file),
            "topic": topic,
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        },
    )
    wait_state(connect_worker.url, connector, running)
    sent = Collected()
    watcher = watcher_for(connect_worker.url, kafka_bootstrap, tmp_path / "state.json", sent)
    watcher.poll()

    # The connector copies the file asynchronously: wait until the topic holds every line.
    assert len(read_messages(kafka_bootstrap, topic, 5, timeout=60)) == 5
    (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .load()
        .selectExpr("CAST(value AS STRING) AS body")
        .write.mode("overwrite")
        .saveAsTable(table)
    )
    spark_events = lineage.events()
    watcher.poll()  # the topic the connector has used, now tracked by the worker
    delete(connect_worker.url, connector)
    connect_events = sent.of(connector)
    for event in connect_events:
        validate_event(event)

    writes = [
        e
        for e in spark_events
        if e["eventType"] == "COMPLETE"
        and any(o["name"].endswith(f"/{table}") for o in e["outputs"])
    ]
    assert writes, [(e["eventType"], e["job"]["name"]) for e in spark_events]
    spark_job = f"job:{writes[0]['job']['namespace']}:{writes[0]['job']['name']}"
    (table_out,) = [o for o in writes[0]["outputs"] if o["name"].endswith(f"/{table}")]
    table_node = f"dataset:{table_out['namespace']}:{table_out['name']}"
    connect_job = f"job:{connect_events[0]['job']['namespace']}:{connector}"

    store = Store.open(f"sqlite:///{tmp_path / 'lineage.db'}", migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            answer = client.post("/api/v1/lineage/batch", json=connect_events + spark_events)
            assert answer.status_code == 200, answer.text
            assert answer.json()["summary"]["failed"] == 0, answer.json()
            file_node = f"dataset:file:{source_file}"
            graph = client.get("/api/v1/lineage", params={"nodeId": file_node, "depth": 10})
            assert graph.status_code == 200, graph.text
            came_from = downstream_path(graph.json()["graph"], file_node)
    finally:
        store.close()

    topic_node = f"dataset:kafka://{kafka_bootstrap}:{topic}"
    assert table_node in came_from, sorted(came_from)
    path, node = [], table_node
    while node is not None:
        path.append(node)
        node = came_from[node]
    assert path[::-1] == [file_node, connect_job, topic_node, spark_job, table_node]
