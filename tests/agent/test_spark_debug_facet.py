"""The opt-in debug facet on a real session: versions, system, configuration and counters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headwater.agent.config import DEFAULT_DISABLED_FACETS
from tests.support.spark_packages import DELTA, KAFKA

pytestmark = [pytest.mark.spark]


@pytest.fixture
def debug_lineage(spark: Any, tmp_path: Path) -> Any:
    from tests.agent.conftest import Lineage

    tracker = Lineage(spark, tmp_path / "events.jsonl", disabled_facets=DEFAULT_DISABLED_FACETS - {"debug"})
    yield tracker
    tracker.close()


def test_every_run_event_carries_the_debug_facet_with_counters_that_grow(
    spark: Any, debug_lineage: Any, tmp_path: Path
) -> None:
    for index in range(2):
        spark.range(3).write.mode("overwrite").parquet(str(tmp_path / f"out{index}"))
    events = debug_lineage.action_events()
    completes = [e for e in events if e["eventType"] == "COMPLETE"]
    assert len(completes) == 2 and all("debug" in e["run"]["facets"] for e in events)
    debug = completes[-1]["run"]["facets"]["debug"]
    assert debug["classpath"]["sparkVersion"] == spark.version
    assert debug["classpath"]["scalaVersion"].startswith(("2.12", "2.13"))
    on_path = {d["className"]: d["onClasspath"] for d in debug["classpath"]["classDetails"]}
    # The shared test session has Delta and the Kafka connector where this line has builds.
    assert on_path["org.apache.spark.sql.delta.catalog.DeltaCatalog"] is bool(DELTA)
    assert on_path["org.apache.spark.sql.kafka010.KafkaSourceProvider"] is bool(KAFKA)
    assert debug["system"]["javaVersion"] and debug["system"]["pythonVersion"]
    assert "debug" not in debug["config"]["facets"]["effectiveDisabledFacets"]
    assert "url" not in debug["config"]["transport"]

    def starts(event: dict) -> float:
        metrics = event["run"]["facets"]["debug"]["metrics"]["metrics"]
        return next(m["value"] for m in metrics if m["name"] == "openlineage.spark.event.sql.start")

    assert starts(completes[-1]) == starts(completes[0]) + 1


def test_the_debug_facet_is_off_by_default(spark: Any, lineage: Any, tmp_path: Path) -> None:
    spark.range(3).write.mode("overwrite").parquet(str(tmp_path / "out"))
    assert all("debug" not in e["run"]["facets"] for e in lineage.events())
