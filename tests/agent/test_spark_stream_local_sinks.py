"""Structured Streaming's driver-local sinks on a real SparkSession: a query writing
to a ``memory`` table or to the ``console`` has that sink as its output (namespace
``memory`` with the query's name, ``console`` with ``stdout``), and
``spark.openlineage.streaming.ignoredSinks`` leaves them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headwater.agent.config import AgentConfig
from tests.agent.conftest import Lineage

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _stream_to(spark: Any, source: Path, checkpoint: Path, sink: str, name: str) -> None:
    query = (
        spark.readStream.schema("id long, amount double")
        .json(str(source))
        .selectExpr("id", "amount * 2 AS doubled")
        .writeStream.queryName(name)
        .format(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)


def _completes(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [
        e
        for e in events
        if e["eventType"] == "COMPLETE"
        and e["run"]["facets"].get("spark_streaming", {}).get("name") == name
    ]


def test_memory_and_console_sinks_are_outputs_of_their_own_kind(
    spark: Any, lineage: Lineage, tmp_path: Path
) -> None:
    source = tmp_path / "in"
    spark.createDataFrame([(1, 2.5), (2, 4.0)], "id long, amount double").write.json(str(source))
    _stream_to(spark, source, tmp_path / "cp-memory", "memory", "doubled_amounts")
    _stream_to(spark, source, tmp_path / "cp-console", "console", "printed_amounts")
    events = lineage.events()

    (memory,) = _completes(events, "doubled_amounts")
    (table,) = memory["outputs"]
    assert (table["namespace"], table["name"]) == ("memory", "doubled_amounts")
    assert [f["name"] for f in table["facets"]["schema"]["fields"]] == ["id", "doubled"]
    lineage_of = table["facets"]["columnLineage"]["fields"]["doubled"]["inputFields"]
    assert [(f["namespace"], f["name"], f["field"]) for f in lineage_of] == [
        ("file", str(source), "amount")
    ]
    assert [(d["namespace"], d["name"]) for d in memory["inputs"]] == [("file", str(source))]
    # The memory table holds what the query wrote.
    assert spark.table("doubled_amounts").count() == 2

    (console,) = _completes(events, "printed_amounts")
    assert [(d["namespace"], d["name"]) for d in console["outputs"]] == [("console", "stdout")]


def test_ignored_sinks_leave_the_query_without_those_outputs(spark: Any, tmp_path: Path) -> None:
    config = AgentConfig.from_sources(
        {"spark.openlineage.streaming.ignoredSinks": "[Memory; console]"}, {}
    )
    assert config.streaming_ignored_sinks == ("memory", "console")
    source = tmp_path / "in"
    spark.createDataFrame([(1, 2.5)], "id long, amount double").write.json(str(source))
    tracker = Lineage(
        spark, tmp_path / "events.jsonl", streaming_ignored_sinks=config.streaming_ignored_sinks
    )
    try:
        _stream_to(spark, source, tmp_path / "cp-memory", "memory", "ignored_memory")
        _stream_to(spark, source, tmp_path / "cp-console", "console", "ignored_console")
        events = tracker.events()
    finally:
        tracker.close()
    for name in ("ignored_memory", "ignored_console"):
        (complete,) = _completes(events, name)
        assert complete["outputs"] == [], name
        # The query still ran and read its source: only the sink is left out.
        assert [(d["namespace"], d["name"]) for d in complete["inputs"]] == [("file", str(source))]
