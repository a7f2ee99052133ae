"""Structured Streaming queries on a real SparkSession (and a real Kafka broker): one run
per query run with START, RUNNING at the progress interval and COMPLETE/FAIL; the
datasets of file and Kafka sources and sinks as batch jobs name them; column lineage
through the query; a long query's bounded number of events."""

from __future__ import annotations

import logging
import math
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import Lineage
from tests.support.spark_packages import needs_connectors

pytestmark = [pytest.mark.spark, pytest.mark.slow]

logger = logging.getLogger(__name__)

APP_RUN_KEYS = ("eventType", "job", "run")


def _runs(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Streaming runs' events by run id, in the order they were sent."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        job_type = event["job"]["facets"].get("jobType", {})
        if job_type.get("processingType") == "STREAMING":
            runs.setdefault(event["run"]["runId"], []).append(event)
    return runs


def _one_run(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    runs = _runs(events)
    assert len(runs) == 1, {k: [e["eventType"] for e in v] for k, v in runs.items()}
    return next(iter(runs.values()))


def _types(run: list[dict[str, Any]]) -> list[str]:
    return [e["eventType"] for e in run]


def _assert_lifecycle(run: list[dict[str, Any]], end: str = "COMPLETE") -> None:
    types = _types(run)
    assert types[0] == "START" and types[-1] == end, types
    assert set(types[1:-1]) <= {"RUNNING"}, types
    times = [e["eventTime"] for e in run]
    assert times == sorted(times)


def _named(datasets: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(d["namespace"], d["name"]) for d in datasets]


def _progress(event: dict[str, Any]) -> dict[str, Any]:
    return event["run"]["facets"]["spark_streaming"]["progress"]


def _lineage_of(output: dict[str, Any], column: str) -> list[tuple[str, str, str]]:
    fields = output["facets"]["columnLineage"]["fields"][column]["inputFields"]
    return [(f["namespace"], f["name"], f["field"]) for f in fields]


def test_file_source_to_parquet_sink_available_now(spark, lineage, tmp_path: Path):
    source, target = tmp_path / "in", tmp_path / "out"
    spark.range(5).selectExpr("id", "CAST(id * 2 AS STRING) AS doubled").write.parquet(str(source))
    query = (
        spark.readStream.schema("id long, doubled string")
        .parquet(str(source))
        .selectExpr("id + 1 AS next_id", "doubled")
        .writeStream.format("parquet")
        .option("path", str(target))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert spark.read.parquet(str(target)).count() == 5

    events = lineage.events()
    run = _one_run(events)
    _assert_lifecycle(run)
    start, end = run[0], run[-1]
    assert {e["run"]["runId"] for e in run} == {start["run"]["runId"]}
    assert _named(start["inputs"]) == [("file", str(source))]
    assert _named(start["outputs"]) == [("file", str(target))]
    assert start["job"]["facets"]["jobType"] == {
        **start["job"]["facets"]["jobType"],
        "processingType": "STREAMING",
        "integration": "SPARK",
        "jobType": "JOB",
    }
    # {app}.{node}.{output} as an action's, the node being the query (unnamed here).
    assert start["job"]["name"] == f"headwater_agent_tests.streaming_query.{tmp_path.name}_out"
    # The parent is the application run, as an action's is.
    app = [e for e in events if e["job"]["name"] == lineage.agent.model.app_name]
    assert start["run"]["facets"]["parent"]["run"]["runId"] == app[0]["run"]["runId"]
    facet = start["run"]["facets"]["spark_streaming"]
    assert facet["queryId"] == str(query.id) and facet["runId"] == str(query.runId)
    assert "AvailableNow" in facet["trigger"] and "progress" not in facet
    progress = _progress(end)
    assert progress["numInputRows"] == 5 and progress["batchId"] == 0
    assert progress["sources"][0]["description"].startswith("FileStreamSource[")
    # FileSink[file:/...] on Spark 4, FileSink[/...] on 3.5: the dataset is named alike.
    assert progress["sink"]["description"].startswith("FileSink[")
    assert progress["sink"]["description"].endswith(f"{target}]")
    (output,) = end["outputs"]
    assert [f["name"] for f in output["facets"]["schema"]["fields"]] == ["next_id", "doubled"]
    assert _lineage_of(output, "next_id") == [("file", str(source), "id")]
    assert _lineage_of(output, "doubled") == [("file", str(source), "doubled")]
    # The same directory read by a batch job is the same dataset.
    spark.read.parquet(str(source)).write.parquet(str(tmp_path / "batch"))
    batch = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and e not in events]
    assert _named(batch[-1]["inputs"]) == [("file", str(source))]
    # The micro-batch was no action of its own.
    assert [e for e in batch if e["job"]["name"] != batch[-1]["job"]["name"]] == []


def test_trigger_once_ends_complete_and_a_named_query_names_its_job(spark, lineage, tmp_path: Path):
    source = tmp_path / "in"
    spark.range(3).write.json(str(source))
    query = (
        spark.readStream.schema("id long")
        .json(str(source))
        .writeStream.queryName("copy_ids")
        .format("csv")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(once=True)
        .start()
    )
    assert query.awaitTermination(120)

    run = _one_run(lineage.events())
    _assert_lifecycle(run)
    assert run[0]["job"]["name"] == f"headwater_agent_tests.copy_ids.{tmp_path.name}_out"
    assert run[-1]["run"]["facets"]["spark_streaming"]["name"] == "copy_ids"
    assert "OneTime" in run[0]["run"]["facets"]["spark_streaming"]["trigger"]
    assert _named(run[-1]["inputs"]) == [("file", str(source))]


@needs_connectors("delta")
def test_streams_into_delta_by_path_and_by_table_name(spark, lineage, tmp_path: Path):
    from headwater import naming

    source = tmp_path / "in"
    # Two files read one per micro-batch: each run commits two table versions.
    spark.range(4).repartition(2).write.parquet(str(source))
    stream = spark.readStream.schema("id long").option("maxFilesPerTrigger", 1).parquet(str(source))
    by_path = tmp_path / "delta"
    query = (
        stream.writeStream.format("delta")
        .option("checkpointLocation", str(tmp_path / "checkpoint-path"))
        .trigger(availableNow=True)
        .start(str(by_path))
    )
    assert query.awaitTermination(120)
    table = f"streamed_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (id long) USING delta")
    try:
        query = (
            stream.writeStream.format("delta")
            .option("checkpointLocation", str(tmp_path / "checkpoint-table"))
            .trigger(availableNow=True)
            .toTable(table)
        )
        assert query.awaitTermination(120)
        location = spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]["location"]
        versions = [
            spark.sql(f"DESCRIBE HISTORY {name}").agg({"version": "max"}).collect()[0][0]
            for name in (f"delta.`{by_path}`", table)
        ]
        runs = list(_runs(lineage.events()).values())
    finally:
        spark.sql(f"DROP TABLE {table}")
    assert len(runs) == 2
    for run in runs:
        _assert_lifecycle(run)
        assert _named(run[-1]["inputs"]) == [("file", str(source))]
        (output,) = run[-1]["outputs"]
        assert output["facets"]["storage"]["storageLayer"] == "delta"
        assert _lineage_of(output, "id") == [("file", str(source), "id")]
    assert _named(runs[0][-1]["outputs"]) == [("file", str(by_path))]
    assert _named(runs[1][-1]["outputs"]) == [naming.dataset_from_location(location)]
    # The table written with toTable is also named by its catalog name, as a batch
    # write into it is; the path has no table name.
    assert "symlinks" not in runs[0][-1]["outputs"][0]["facets"]
    (link,) = runs[1][-1]["outputs"][0]["facets"]["symlinks"]["identifiers"]
    assert (link["name"], link["type"]) == (f"default.{table}", "TABLE")
    # Each run's COMPLETE gives the table the version its last micro-batch committed,
    # as a batch write's event does; its START, before any commit of its own, none.
    assert versions == [1, 2]
    for run, version in zip(runs, versions, strict=True):
        assert "version" not in run[0]["outputs"][0]["facets"]
        assert run[-1]["outputs"][0]["facets"]["version"]["datasetVersion"] == str(version)
        assert run[-1]["run"]["facets"]["spark_streaming"]["progress"]["batches"] == 2


@needs_connectors("delta")
def test_a_delta_stream_s_running_events_carry_the_versions_it_committed(spark, tmp_path: Path):
    source, table = tmp_path / "in", tmp_path / "delta"
    spark.range(6).repartition(3).write.parquet(str(source))
    tracker = Lineage(spark, tmp_path / "events.jsonl", streaming_progress_interval=0.0)
    try:
        query = (
            spark.readStream.schema("id long").option("maxFilesPerTrigger", 1).parquet(str(source))
            .writeStream.format("delta")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start(str(table))
        )
        assert query.awaitTermination(120)
        run = _one_run(tracker.events())
    finally:
        tracker.close()
    _assert_lifecycle(run)
    # A RUNNING after each micro-batch (interval 0): each names a version of this
    # run's three commits, never going back; the COMPLETE the last one.
    versions = [
        e["outputs"][0]["facets"].get("version", {}).get("datasetVersion") for e in run
    ]
    assert versions[0] is None and versions[-1] == "2", versions
    running = [int(v) for v in versions[1:-1]]
    assert len(running) >= 3 and running == sorted(running), versions
    assert set(running) <= {0, 1, 2}, versions


def test_a_failing_query_ends_in_fail_with_its_error(spark, lineage, tmp_path: Path):
    query = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 1)
        .load()
        .selectExpr("raise_error(CONCAT('headwater boom ', value)) AS failed")
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    with pytest.raises(Exception, match="headwater boom"):
        query.awaitTermination(120)

    run = _one_run(lineage.events())
    _assert_lifecycle(run, end="FAIL")
    error = run[-1]["run"]["facets"]["errorMessage"]
    assert "headwater boom" in error["message"]
    assert error["programmingLanguage"] == "JAVA"


def test_a_long_query_sends_a_bounded_number_of_events(spark, tmp_path: Path):
    interval = 1.0
    tracker = Lineage(spark, tmp_path / "events.jsonl", streaming_progress_interval=interval)
    try:
        began = time.monotonic()
        query = (
            spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", 2)
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(processingTime="0 seconds")
            .start()
        )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            last = query.lastProgress
            if last is not None and last["batchId"] >= 200:
                break
            time.sleep(0.2)
        query.stop()
        elapsed = time.monotonic() - began
        events = tracker.events()
    finally:
        tracker.close()
    batches = query.lastProgress["batchId"] + 1
    assert batches >= 200

    run = _one_run(events)
    _assert_lifecycle(run)
    running = [e for e in run if e["eventType"] == "RUNNING"]
    # At most one RUNNING per interval, however many micro-batches ran: the count
    # depends on the time the query ran, not on its micro-batches.
    assert 1 <= len(running) <= math.ceil(elapsed / interval) + 1, (len(running), elapsed)
    sent = [_epoch(e) for e in running]
    assert all(b - a >= interval - 0.05 for a, b in zip(sent, sent[1:], strict=False)), sent
    progress = _progress(run[-1])
    assert progress["firstBatchId"] == 0 and progress["batches"] >= 200
    assert progress["numInputRows"] == 2 * progress["batches"]
    batch_ids = [_progress(e)["batchId"] for e in running]
    assert batch_ids == sorted(batch_ids) and batch_ids[-1] < progress["batchId"] + 1
    # Micro-batches are no actions of their own: nothing but the query's run and the application's.
    app = tracker.agent.model.app_name
    assert [e for e in events if e["job"]["name"] != app and e not in run] == []
    logger.info(
        "%d micro-batches in %.1f s: %d events (%d RUNNING)",
        batches, elapsed, len(run), len(running),
    )


def test_a_query_still_running_when_the_application_ends_completes(spark, tmp_path: Path):
    tracker = Lineage(spark, tmp_path / "events.jsonl")
    query = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 1)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 60
        while query.lastProgress is None and time.monotonic() < deadline:
            time.sleep(0.1)
        tracker.close()
    finally:
        query.stop()
    events = [e for e in _read(tmp_path / "events.jsonl")]
    run = _one_run(events)
    _assert_lifecycle(run)
    assert events[-1]["job"]["name"] == tracker.agent.model.app_name  # the application ends last


def _epoch(event: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00")).timestamp()


def _read(path: Path) -> list[dict[str, Any]]:
    import json

    from tests.agent.spec import validate_event

    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for event in events:
        validate_event(event)
    return events


# --- Kafka ---------------------------------------------------------------------------------


def _topic(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:8]}"


def _produce(spark: Any, bootstrap: str, topic: str, rows: int = 3) -> None:
    written = spark.range(rows).selectExpr("CAST(id AS STRING) AS key", "CONCAT('v', id) AS value")
    written.write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", topic
    ).save()


@pytest.mark.kafka
@needs_connectors("kafka")
@pytest.mark.parametrize("subscription", ["subscribe", "subscribePattern", "assign"])
def test_kafka_topic_to_kafka_topic(
    spark, lineage, kafka_bootstrap: str, tmp_path: Path, subscription: str
):
    source, target = _topic("stream-in"), _topic("stream-out")
    _produce(spark, kafka_bootstrap, source)
    option = {
        "subscribe": source,
        "subscribePattern": f"{source[:-4]}.*",
        "assign": f'{{"{source}": [0]}}',
    }[subscription]
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option(subscription, option)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "UPPER(CAST(value AS STRING)) AS value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", target)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)

    run = _one_run(lineage.events())
    _assert_lifecycle(run)
    namespace = f"kafka://{kafka_bootstrap}"
    read = source if subscription != "subscribePattern" else option
    for event in run:
        assert _named(event["inputs"]) == [(namespace, read)]
        assert _named(event["outputs"]) == [(namespace, target)]
    (output,) = run[-1]["outputs"]
    assert output["facets"]["datasetType"]["datasetType"] == "TOPIC"
    assert _lineage_of(output, "value") == [(namespace, read, "value")]
    assert _lineage_of(output, "key") == [(namespace, read, "key")]
    progress = _progress(run[-1])
    assert progress["numInputRows"] == 3
    assert progress["sources"][0]["description"].startswith("KafkaV2[")
    # The run's input names the offsets it read, per partition (a pattern input the
    # topics it matched); a first run began at its startingOffsets: no fromOffset.
    (read_input,) = run[-1]["inputs"]
    assert read_input["inputFacets"]["kafkaOffsets"]["partitions"] == [
        {"topic": source, "partition": 0, "untilOffset": 3}
    ]
    if subscription != "subscribe":
        return
    # A run restarted from the checkpoint reads on from where the last one stopped.
    _produce(spark, kafka_bootstrap, source, rows=2)
    restarted = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", source)
        .load()
        .selectExpr("key", "UPPER(CAST(value AS STRING)) AS value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", target)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert restarted.awaitTermination(120)
    (second,) = [r for r in _runs(lineage.events()).values() if r[0]["run"]["runId"] != run[0]["run"]["runId"]]
    assert second[-1]["inputs"][0]["inputFacets"]["kafkaOffsets"]["partitions"] == [
        {"topic": source, "partition": 0, "fromOffset": 3, "untilOffset": 5}
    ]
    # The listener appends no dataset name to a Kafka write's job, nor does a stream.
    assert run[0]["job"]["name"] == "headwater_agent_tests.streaming_query"


@pytest.mark.kafka
@needs_connectors("kafka", "delta")
def test_foreach_batch_writes_belong_to_the_query_run(
    spark, lineage, kafka_bootstrap: str, tmp_path: Path
):
    source = _topic("batches-in")
    _produce(spark, kafka_bootstrap, source, rows=4)
    lookup = tmp_path / "lookup"
    spark.createDataFrame([("0", "zero"), ("1", "one")], "key string, label string").write.parquet(
        str(lookup)
    )
    labels, raw = tmp_path / "labelled", tmp_path / "delta_raw"
    before = len(lineage.events())

    def write(batch: Any, batch_id: int) -> None:
        batch.selectExpr("key", "CAST(value AS STRING) AS value").write.format("delta").mode(
            "append"
        ).save(str(raw))
        keys = batch.selectExpr("CAST(key AS STRING) AS key")
        joined = keys.join(spark.read.parquet(str(lookup)), "key")
        joined.write.mode("append").parquet(str(labels))
        batch.count()  # a read-only action in the function: no dataset, no event

    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", 2)
        .load()
        .writeStream.queryName("label_orders")
        .foreachBatch(write)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert spark.read.format("delta").load(str(raw)).count() == 4

    events = lineage.events()[before:]
    run = _one_run(events)
    _assert_lifecycle(run)
    # Both micro-batches' writes belong to the query's run: no action runs of their own.
    assert [e["job"]["name"] for e in events if e not in run] == []
    namespace = f"kafka://{kafka_bootstrap}"
    start, end = run[0], run[-1]
    assert _named(start["inputs"]) == [(namespace, source)] and start["outputs"] == []
    assert sorted(_named(end["inputs"])) == sorted([(namespace, source), ("file", str(lookup))])
    assert sorted(_named(end["outputs"])) == sorted([("file", str(raw)), ("file", str(labels))])
    # One RUNNING per dataset the writes first reach (the two writes of the first
    # micro-batch), none for the second micro-batch, which reaches nothing new.
    assert _types(run).count("RUNNING") == 2, _types(run)
    outputs = {o["name"]: o for o in end["outputs"]}

    assert _lineage_of(outputs[str(raw)], "value") == [(namespace, source, "value")]
    assert _lineage_of(outputs[str(labels)], "label") == [("file", str(lookup), "label")]
    # The batch's key column is the topic's key, through the join's USING column.
    assert (namespace, source, "key") in _lineage_of(outputs[str(labels)], "key")
    assert outputs[str(raw)]["facets"]["storage"]["storageLayer"] == "delta"
    # Each write's statistics are one micro-batch's; the run's rows are in its progress.
    assert "outputStatistics" not in outputs[str(raw)].get("outputFacets", {})
    # Two micro-batches of two offsets each: the run read up to offset 4 of the topic.
    (topic_input,) = [i for i in end["inputs"] if i["namespace"] == namespace]
    assert topic_input["inputFacets"]["kafkaOffsets"]["partitions"] == [
        {"topic": source, "partition": 0, "untilOffset": 4}
    ]
    # Spark counts a batch's rows once per action that reads it (three here).
    assert _progress(end)["numInputRows"] == sum(p["numInputRows"] for p in query.recentProgress)
    assert end["run"]["facets"]["spark_streaming"]["name"] == "label_orders"
    assert {e["run"]["runId"] for e in run} == {start["run"]["runId"]}
