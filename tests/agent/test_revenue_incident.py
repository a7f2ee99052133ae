"""The revenue incident, end to end on a real SparkSession and a real broker.

A producer job writes order events to a Kafka topic as JSON; a Structured
Streaming job parses them (declaring ``amount`` a double) into a silver table; a
batch job sums ``amount`` into the gold table's ``revenue``. Every event the agent
sends is stored through the server's ingestion API. Then the producer starts
writing ``amount`` as a string: the store flags that the schema the producer
writes no longer matches what the streaming job declares it reads (a breaking
contract drift naming the consumer), records the topic's own schema change, and
each drift's own answer names the gold ``revenue`` column as impacted, with the
path through each job (as the impact of the topic's ``value`` column does).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.agent.conftest import Lineage
from tests.support.spark_packages import needs_connectors

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.slow, needs_connectors("kafka")]

_ORDERS = [(1, 9.5, "2026-11-01"), (2, 3.25, "2026-11-01"), (3, 12.0, "2026-11-02")]


def _produce(spark: Any, bootstrap: str, topic: str, amount: str) -> None:
    orders = spark.createDataFrame(_ORDERS, "order_id long, amount double, day string")
    orders.selectExpr(
        "CAST(order_id AS STRING) AS key",
        f"to_json(named_struct('order_id', order_id, 'amount', {amount}, 'day', day)) AS value",
    ).write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", topic
    ).save()


def _post(client: TestClient, events: list[dict[str, Any]]) -> None:
    posted = client.post("/api/v1/lineage/batch", json=events)
    assert posted.status_code == 200, posted.text
    assert posted.json()["summary"]["failed"] == 0, posted.text


def test_a_type_change_in_a_topic_is_flagged_and_reaches_the_revenue_column(
    spark: Any, lineage: Lineage, kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    silver, gold = tmp_path / "silver_orders", tmp_path / "gold_revenue"
    _produce(spark, kafka_bootstrap, topic, "amount")
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("from_json(CAST(value AS STRING), 'order_id long, amount double, day string') AS o")
        .selectExpr("o.order_id", "o.amount", "o.day")
        .writeStream.queryName("clean_orders")
        .format("parquet")
        .option("path", str(silver))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    spark.read.parquet(str(silver)).groupBy("day").agg({"amount": "sum"}).withColumnRenamed(
        "sum(amount)", "revenue"
    ).write.parquet(str(gold))
    before_change = lineage.events()
    # The producer's new release writes amount as a string.
    _produce(spark, kafka_bootstrap, topic, "CAST(amount AS STRING)")
    after_change = lineage.events()[len(before_change):]

    topic_id = f"kafka://{kafka_bootstrap}:{topic}"
    store = Store.open(f"sqlite:///{tmp_path / 'lineage.db'}", migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            _post(client, before_change)
            assert client.get("/api/v2/drift", params={"kind": "contract"}).json()["drifts"] == []
            _post(client, after_change)
            drifts = client.get("/api/v2/drift").json()["drifts"]
            impact = client.get(
                "/api/v2/impact", params={"nodeId": f"datasetField:{topic_id}:value"}
            ).json()
            contract_id = next(d["id"] for d in drifts if d["kind"] == "contract")
            contract_alone = client.get(f"/api/v2/drift/{quote(contract_id, safe='')}").json()
    finally:
        store.close()

    streaming_job = [e["job"]["name"] for e in before_change if "clean_orders" in e["job"]["name"]][0]
    (contract,) = [d for d in drifts if d["kind"] == "contract"]
    assert contract["datasetId"] == f"dataset:{topic_id}" and contract["breaking"] is True
    assert contract["consumer"]["name"] == streaming_job
    assert [(c["path"], c["old"], c["new"]) for c in contract["changes"]] == [
        ("value.amount", "string", "double")
    ]
    (version,) = [d for d in drifts if d["kind"] == "version" and d["datasetId"] == f"dataset:{topic_id}"]
    assert [(c["path"], c["old"], c["new"]) for c in version["changes"]] == [
        ("value.amount", "double", "string")
    ]
    revenue = f"datasetField:file:{gold}:revenue"
    reached = {n["id"]: n for n in impact["nodes"]}
    assert reached[revenue]["impact"] == "direct"
    namespace = lineage.agent.model.namespace
    assert reached[revenue]["path"] == [
        f"datasetField:{topic_id}:value",
        f"job:{namespace}:{streaming_job}",
        f"datasetField:file:{silver}:amount",
        reached[revenue]["path"][3],
        revenue,
    ]
    assert reached[revenue]["path"][3].startswith(f"job:{namespace}:")
    # The drift answer itself names revenue, by the same path through each job.
    for drift in (contract, version, contract_alone):
        in_drift = {n["id"]: n for n in drift["impact"]["nodes"]}
        assert in_drift[revenue]["impact"] == "direct", drift["kind"]
        assert in_drift[revenue]["path"] == reached[revenue]["path"], drift["kind"]
        assert in_drift[f"dataset:file:{gold}"]["impact"] == "direct"
        assert in_drift[reached[revenue]["path"][3]]["type"] == "JOB"
        assert drift["impact"]["truncated"] is False
