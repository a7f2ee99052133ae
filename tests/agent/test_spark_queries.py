"""Job names under adaptive execution, and scalar subqueries, on a real SparkSession."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark


def _sources(spark: Any, tmp_path: Path) -> tuple[str, str]:
    t, s = str(tmp_path / "t"), str(tmp_path / "s")
    spark.createDataFrame([(1, 10), (2, 20), (3, 30)], ["x", "y"]).write.parquet(t)
    spark.createDataFrame([(5,), (50,)], ["a"]).write.parquet(s)
    return t, s


@pytest.mark.parametrize(("adaptive", "node"), [("true", "adaptive_spark_plan"), ("false", "broadcast_hash_join")])
def test_job_name_takes_the_executed_root_as_the_listener_does(
    spark: Any, lineage: Any, tmp_path: Path, adaptive: str, node: str
) -> None:
    # The OpenLineage listener names a job after executedPlan().nodeName(), unwrapping
    # only WholeStageCodegen: under adaptive execution that root is AdaptiveSparkPlan;
    # without it, the hash join inside whole-stage code generation.
    t, s = _sources(spark, tmp_path)
    left, right = spark.read.parquet(t), spark.read.parquet(s)
    spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    try:
        left.join(right, left.x == right.a).collect()  # a Join root: not a read-only action
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    events = [e for e in lineage.action_events() if {i["name"] for i in e["inputs"]} == {t, s}]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert events[0]["job"]["name"] == f"{lineage.agent.model.app_name}.{node}"


def _transformations(output: dict[str, Any], column: str, dataset: str, field: str) -> set[tuple[str, str]]:
    for item in output["facets"]["columnLineage"]["fields"][column]["inputFields"]:
        if item["name"] == dataset and item["field"] == field:
            return {(t["type"], t["subtype"]) for t in item["transformations"]}
    return set()


def _dataset_transformations(output: dict[str, Any], dataset: str, field: str) -> set[tuple[str, str]]:
    for item in output["facets"]["columnLineage"]["dataset"]:
        if item["name"] == dataset and item["field"] == field:
            return {(t["type"], t["subtype"]) for t in item["transformations"]}
    return set()


def test_scalar_subqueries_are_inputs_with_direct_and_indirect_lineage(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    t, s = _sources(spark, tmp_path)
    spark.read.parquet(t).createOrReplaceTempView("sub_t")
    spark.read.parquet(s).createOrReplaceTempView("sub_s")
    out = str(tmp_path / "out")
    spark.sql(
        "SELECT a, (SELECT max(x) FROM sub_t) AS m FROM sub_s WHERE a > (SELECT avg(y) FROM sub_t)"
    ).write.parquet(out)
    complete = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and e["outputs"]
                and e["outputs"][0]["name"] == out]
    assert len(complete) == 1
    event = complete[0]
    assert sorted(i["name"] for i in event["inputs"]) == sorted([t, s])
    output = event["outputs"][0]
    # m is max(x) of the subquery; Spark merged both subqueries into one plan, and
    # only the struct field m reads counts as its direct input.
    assert _transformations(output, "m", t, "x") == {("DIRECT", "AGGREGATION")}
    assert ("DIRECT", "AGGREGATION") not in _transformations(output, "m", t, "y")
    assert _transformations(output, "a", s, "a") == {("DIRECT", "IDENTITY")}
    # The filter compares a with avg(y): both are INDIRECT FILTER inputs, of the
    # dataset as a whole (columnLineage.datasetLineageEnabled is on by default).
    assert ("INDIRECT", "FILTER") in _dataset_transformations(output, t, "y")
    assert ("INDIRECT", "FILTER") in _dataset_transformations(output, s, "a")
    assert _dataset_transformations(output, t, "x") == set()


def test_reads_with_one_schema_keep_their_own_paths_across_actions(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    # Relations are remembered across actions and repeated reads share a look-up:
    # two directories with the same columns must still come out as two inputs.
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    for path in (first, second):
        spark.createDataFrame([(1, "a")], ["k", "v"]).write.parquet(path)
    a, b = spark.read.parquet(first), spark.read.parquet(second)
    for number in range(2):
        a.union(a).union(b).write.parquet(str(tmp_path / f"out{number}"))
    for number in range(2):
        out = str(tmp_path / f"out{number}")
        complete = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and e["outputs"]
                    and e["outputs"][0]["name"] == out]
        assert len(complete) == 1
        assert sorted(i["name"] for i in complete[0]["inputs"]) == [first, second]
        lineage_k = complete[0]["outputs"][0]["facets"]["columnLineage"]["fields"]["k"]["inputFields"]
        assert sorted(i["name"] for i in lineage_k) == [first, second]
