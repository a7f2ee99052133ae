"""RDD saves (no QueryExecution) as actions: saveAsTextFile on a real SparkSession."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark


def test_save_as_text_file_is_a_child_run_named_after_its_rdd_graph(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    rdd = spark.sparkContext.parallelize([("ann", 31), ("bob", 42)])
    rdd.setName("people by age")
    rdd.map(lambda row: f"{row[0]},{row[1]}").saveAsTextFile(str(tmp_path / "people") + "/")
    events = [e for e in lineage.action_events() if e["job"]["facets"]["jobType"]["jobType"] == "RDD_JOB"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert {e["run"]["runId"] for e in events} == {events[0]["run"]["runId"]}
    app = lineage.agent.model.app_name
    assert events[0]["job"]["name"] == f"{app}.map_partitions_python_people_by_age"
    for event in events:
        assert event["inputs"] == []  # parallelize reads no dataset
        assert [(o["namespace"], o["name"]) for o in event["outputs"]] == [("file", str(tmp_path / "people"))]
        assert event["run"]["facets"]["parent"]["run"]["runId"] == lineage.agent.model.app_run_id
    # The written files are really there: the wrapper ran PySpark's own save.
    assert sorted(p.name for p in (tmp_path / "people").glob("part-*"))


def test_text_file_inputs_and_a_failed_save(spark: Any, lineage: Any, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    out = tmp_path / "copy"
    spark.sparkContext.textFile(str(source)).map(str.upper).saveAsTextFile(str(out))
    with pytest.raises(Exception, match="already exists"):
        # The exception reaches the job unchanged; the run ends in FAIL.
        spark.sparkContext.textFile(str(source)).saveAsTextFile(str(out))
    events = [e for e in lineage.action_events() if e["job"]["facets"]["jobType"]["jobType"] == "RDD_JOB"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "START", "FAIL"]
    app = lineage.agent.model.app_name
    # textFile names both its RDDs after the file; the listener falls back to class names.
    assert events[0]["job"]["name"] == f"{app}.map_partitions_python_map_partitions_hadoop"
    assert [(i["namespace"], i["name"]) for i in events[1]["inputs"]] == [("file", str(source))]
    assert "already exists" in events[3]["run"]["facets"]["errorMessage"]["message"]
