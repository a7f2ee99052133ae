"""File reads and writes on a real SparkSession: datasets, schema, lifecycle, statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark


def _complete(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["eventType"] == "COMPLETE"]


def _fields(dataset: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["name"], f["type"]) for f in dataset["facets"]["schema"]["fields"]]


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "orc"])
def test_read_filter_write_names_datasets_and_schema(spark, lineage, tmp_path: Path, fmt: str):
    source = tmp_path / f"src_{fmt}"
    target = tmp_path / f"dst_{fmt}"
    spark.createDataFrame([(1, "a"), (2, "b")], ["k", "v"]).write.format(fmt).save(str(source))
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.schema("k long, v string")
    reader.load(str(source)).filter("k > 1").write.mode("overwrite").format(fmt).save(str(target))

    events = lineage.action_events()
    write = [e for e in _complete(events) if e["outputs"] and e["outputs"][0]["name"] == str(target)]
    assert len(write) == 1, [e["job"]["name"] for e in events]
    event = write[0]
    assert [(d["namespace"], d["name"]) for d in event["inputs"]] == [("file", str(source))]
    output = event["outputs"][0]
    assert output["namespace"] == "file"
    assert _fields(output) == [("k", "long"), ("v", "string")]
    assert _fields(event["inputs"][0]) == [("k", "long"), ("v", "string")]
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert output["facets"]["dataSource"]["name"] == "file"
    stats = output["outputFacets"]["outputStatistics"]
    assert stats["rowCount"] == 1
    assert stats["size"] > 0
    # The job name is {app}.{node}.{last two path elements of the output}.
    assert event["job"]["name"] == (
        "headwater_agent_tests.execute_insert_into_hadoop_fs_relation_command."
        f"{tmp_path.name}_dst_{fmt}"
    )
    # START comes first, with the same run id, and carries no statistics.
    starts = [e for e in events if e["eventType"] == "START" and e["run"]["runId"] == event["run"]["runId"]]
    assert len(starts) == 1
    assert "outputStatistics" not in starts[0]["outputs"][0]["outputFacets"]


def test_text_read_and_append(spark, lineage, tmp_path: Path):
    text = tmp_path / "words.txt"
    text.write_text("a b\nc\n")
    out = tmp_path / "out"
    spark.read.text(str(text)).write.mode("append").parquet(str(out))
    event = _complete(lineage.action_events())[-1]
    assert event["inputs"][0]["name"] == str(text)
    assert _fields(event["inputs"][0]) == [("value", "string")]
    assert event["outputs"][0]["name"] == str(out)
    # Append is not a lifecycle change.
    assert "lifecycleStateChange" not in event["outputs"][0]["facets"]


def test_partitioned_write_and_partition_dirs_are_trimmed(spark, lineage, tmp_path: Path):
    out = tmp_path / "parts"
    df = spark.createDataFrame([(1, "2024-01-01"), (2, "2024-01-02")], ["k", "day"])
    df.write.partitionBy("day").parquet(str(out))
    spark.read.parquet(str(out / "day=2024-01-01")).write.mode("overwrite").parquet(str(tmp_path / "one"))
    events = _complete(lineage.action_events())
    assert events[0]["outputs"][0]["name"] == str(out)
    assert events[-1]["inputs"][0]["name"] == str(out)


def test_read_only_actions_emit_nothing(spark, lineage, tmp_path: Path):
    spark.createDataFrame([(1,)], ["k"]).write.parquet(str(tmp_path / "p"))
    before = len(lineage.action_events())
    df = spark.read.parquet(str(tmp_path / "p"))
    df.count()
    df.selectExpr("k + 1 AS k1").collect()
    df.groupBy("k").count().collect()
    assert len(lineage.action_events()) == before


def test_read_only_actions_emit_when_enabled(spark, tmp_path: Path):
    from tests.agent.conftest import Lineage

    spark.createDataFrame([(1,)], ["k"]).write.parquet(str(tmp_path / "p"))
    tracker = Lineage(spark, tmp_path / "events.jsonl", capture_read_only_actions=True)
    try:
        spark.read.parquet(str(tmp_path / "p")).selectExpr("k + 1 AS k1").collect()
        events = tracker.action_events()
    finally:
        tracker.close()
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert events[1]["inputs"][0]["name"] == str(tmp_path / "p")
    assert events[1]["outputs"] == []


def test_plain_select_of_a_relation_reports_its_input(spark, lineage, tmp_path: Path):
    # The optimized root is the relation itself (no projection left): the listener
    # reports such an action, with the relation as input and no output.
    spark.createDataFrame([(1,)], ["k"]).write.parquet(str(tmp_path / "p"))
    spark.read.parquet(str(tmp_path / "p")).collect()
    event = _complete(lineage.action_events())[-1]
    assert [d["name"] for d in event["inputs"]] == [str(tmp_path / "p")]
    assert event["outputs"] == []


def test_nested_schema(spark, lineage, tmp_path: Path):
    df = spark.sql("SELECT 1 AS id, named_struct('city', 'x', 'geo', named_struct('lat', 1.5D)) AS addr")
    df.write.parquet(str(tmp_path / "nested"))
    output = _complete(lineage.action_events())[-1]["outputs"][0]
    fields = output["facets"]["schema"]["fields"]
    assert fields[1]["name"] == "addr" and fields[1]["type"] == "struct"
    assert [f["name"] for f in fields[1]["fields"]] == ["city", "geo"]
    assert fields[1]["fields"][1]["fields"] == [{"name": "lat", "type": "double"}]


def test_internal_reads_of_schema_inference_and_take_emit_nothing(spark, lineage, tmp_path: Path):
    # inferSchema/header make Spark run its own limit and deserialise actions on
    # the CSV; like the user's take()/rdd, they write nothing and get no job.
    source = tmp_path / "raw.csv"
    source.write_text("id,amount\n1,2.5\n2,3.5\n")
    frame = spark.read.option("header", True).option("inferSchema", True).csv(str(source))
    frame.take(1)
    frame.rdd.map(lambda row: row[0]).collect()
    frame.write.mode("overwrite").parquet(str(tmp_path / "out"))

    names = {e["job"]["name"] for e in lineage.action_events()}
    assert names == {
        "headwater_agent_tests.execute_insert_into_hadoop_fs_relation_command."
        f"{tmp_path.name}_out"
    }, names
