"""Delta Lake tables on the shared session (Delta owns ``spark_catalog``): path saves,
saveAsTable, CTAS, INSERT, MERGE (column lineage from target and source), UPDATE,
DELETE, the ``version`` facet of each write and of reads, time travel; and the MERGE
assignments' column lineage without a JVM."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headwater.agent.columns import ASSIGNMENTS, column_lineage
from headwater.agent.plan import PlanNode
from headwater.agent.sources.delta import written_version
from tests.agent.conftest import WAREHOUSE
from tests.agent.test_plan_fixtures import events_for
from tests.support.spark_packages import needs_connectors

WAREHOUSE_URI = f"file:{WAREHOUSE}"
TABLES = ("hw_delta_src", "hw_delta_tgt", "hw_delta_ctas", "hw_delta_saved")


def _complete(events: list[dict[str, Any]], job_part: str) -> dict[str, Any]:
    return [e for e in events if e["eventType"] == "COMPLETE" and job_part in e["job"]["name"]][-1]


def _version(dataset: dict[str, Any]) -> str | None:
    facet = dataset["facets"].get("version")
    return facet["datasetVersion"] if facet else None


def _inputs(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"].rsplit("/", 1)[-1]: d for d in event["inputs"]}


def _lineage(output: dict[str, Any], column: str) -> dict[tuple[str, str], set[tuple[str, str]]]:
    fields = output["facets"]["columnLineage"]["fields"][column]["inputFields"]
    return {
        (item["name"].rsplit("/", 1)[-1], item["field"]): {(t["type"], t["subtype"]) for t in item["transformations"]}
        for item in fields
    }


def _dataset_lineage(output: dict[str, Any]) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """The indirect dependencies, which the default settings report for the whole dataset."""
    items = output["facets"]["columnLineage"]["dataset"]
    return {
        (item["name"].rsplit("/", 1)[-1], item["field"]): {(t["type"], t["subtype"]) for t in item["transformations"]}
        for item in items
    }


@pytest.fixture
def delta_tables(spark: Any, tmp_path: Path) -> Iterator[Path]:
    for name in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    yield tmp_path
    for name in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        shutil.rmtree(f"{WAREHOUSE}/{name}", ignore_errors=True)


def _source_and_target(spark: Any) -> None:
    rows = spark.createDataFrame([(1, "one"), (2, "two")], "a long, b string")
    rows.write.format("delta").saveAsTable("hw_delta_tgt")
    spark.createDataFrame([(2, "TWO"), (3, "THREE")], "a long, b string").write.format("delta").saveAsTable(
        "hw_delta_src"
    )


@pytest.mark.spark
@needs_connectors("delta")
def test_save_to_a_path_reports_each_version_written(spark: Any, lineage: Any, delta_tables: Path) -> None:
    path = str(delta_tables / "saved")
    df = spark.createDataFrame([(1, "a")], "k long, v string")
    # Each save is reported before the next commits: a save(path) reads nothing
    # first, so it reports the newest version when it is captured.
    df.write.format("delta").save(path)
    lineage.action_events()
    df.write.format("delta").mode("append").save(path)
    lineage.action_events()
    df.write.format("delta").mode("overwrite").save(path)
    saves = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and e["outputs"]]
    outputs = [e["outputs"][0] for e in saves if "save_into_data_source" in e["job"]["name"]]
    assert [(o["namespace"], o["name"]) for o in outputs] == [("file", path)] * 3
    assert [_version(o) for o in outputs] == ["0", "1", "2"]
    assert outputs[0]["facets"]["storage"]["storageLayer"] == "delta"
    assert outputs[0]["facets"]["storage"]["fileFormat"] == "parquet"
    assert outputs[2]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert [f["name"] for f in outputs[0]["facets"]["schema"]["fields"]] == ["k", "v"]


@pytest.mark.spark
@needs_connectors("delta")
def test_merge_into_a_catalog_table(spark: Any, lineage: Any, delta_tables: Path) -> None:
    _source_and_target(spark)
    spark.sql(
        "MERGE INTO hw_delta_tgt t USING hw_delta_src s ON t.a = s.a "
        "WHEN MATCHED THEN UPDATE SET t.b = s.b WHEN NOT MATCHED THEN INSERT *"
    )
    event = _complete(lineage.action_events(), "merge_into_command")
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == ("file", f"{WAREHOUSE}/hw_delta_tgt")
    assert output["facets"]["symlinks"]["identifiers"] == [
        {"namespace": WAREHOUSE_URI, "name": "default.hw_delta_tgt", "type": "TABLE"}
    ]
    # saveAsTable wrote version 0; the MERGE wrote 1, having read 0.
    assert _version(output) == "1"
    inputs = _inputs(event)
    assert set(inputs) == {"hw_delta_tgt", "hw_delta_src"}
    assert _version(inputs["hw_delta_tgt"]) == "0"
    assert _version(inputs["hw_delta_src"]) == "0"
    # a: kept by the update, inserted from the source; b: set from the source either way.
    assert _lineage(output, "a")[("hw_delta_tgt", "a")] >= {("DIRECT", "IDENTITY")}
    assert _lineage(output, "a")[("hw_delta_src", "a")] == {("DIRECT", "IDENTITY")}
    assert _dataset_lineage(output) == {
        ("hw_delta_tgt", "a"): {("INDIRECT", "JOIN")},
        ("hw_delta_src", "a"): {("INDIRECT", "JOIN")},
    }
    assert ("DIRECT", "IDENTITY") in _lineage(output, "b")[("hw_delta_src", "b")]
    assert ("hw_delta_tgt", "b") not in _lineage(output, "b")
    assert event["job"]["name"].endswith(".execute_merge_into_command.headwater-test-warehouse_hw_delta_tgt")


@pytest.mark.spark
@needs_connectors("delta")
def test_merge_into_a_path_with_a_computed_source(spark: Any, lineage: Any, delta_tables: Path) -> None:
    _source_and_target(spark)
    path = str(delta_tables / "by_path")
    spark.read.table("hw_delta_tgt").write.format("delta").save(path)
    spark.sql(
        f"MERGE INTO delta.`{path}` t USING (SELECT a, upper(b) AS loud FROM hw_delta_src) s ON t.a = s.a "
        "WHEN MATCHED THEN UPDATE SET t.b = s.loud WHEN NOT MATCHED THEN INSERT (a, b) VALUES (s.a, s.loud)"
    )
    event = _complete(lineage.action_events(), "merge_into_command")
    (output,) = event["outputs"]
    assert output["name"] == path
    assert "symlinks" not in output["facets"]
    assert _version(output) == "1"
    assert _lineage(output, "b") == {("hw_delta_src", "b"): {("DIRECT", "TRANSFORMATION")}}
    assert _dataset_lineage(output) == {
        ("hw_delta_src", "a"): {("INDIRECT", "JOIN")},
        ("by_path", "a"): {("INDIRECT", "JOIN")},
    }


@pytest.mark.spark
@needs_connectors("delta")
def test_update_and_delete(spark: Any, lineage: Any, delta_tables: Path) -> None:
    _source_and_target(spark)
    spark.sql("UPDATE hw_delta_tgt SET b = concat(b, '!') WHERE a = 1")
    update = _complete(lineage.action_events(), "update_command")
    (output,) = update["outputs"]
    assert output["name"] == f"{WAREHOUSE}/hw_delta_tgt"
    assert _version(output) == "1"
    assert _lineage(output, "b") == {("hw_delta_tgt", "b"): {("DIRECT", "TRANSFORMATION")}}
    assert _lineage(output, "a") == {("hw_delta_tgt", "a"): {("DIRECT", "IDENTITY")}}
    assert _dataset_lineage(output) == {("hw_delta_tgt", "a"): {("INDIRECT", "FILTER")}}

    spark.sql("DELETE FROM hw_delta_tgt WHERE a = 2")
    delete = _complete(lineage.action_events(), "delete_command")
    (output,) = delete["outputs"]
    assert output["name"] == f"{WAREHOUSE}/hw_delta_tgt"
    assert _version(output) == "2"
    assert _version(_inputs(delete)["hw_delta_tgt"]) == "1"


@pytest.mark.spark
@needs_connectors("delta")
def test_reads_report_the_version_scanned_and_time_travel(spark: Any, lineage: Any, delta_tables: Path) -> None:
    _source_and_target(spark)
    spark.sql("INSERT INTO hw_delta_tgt VALUES (5, 'five')")  # version 1
    out = str(delta_tables / "copy")
    spark.sql("SELECT * FROM hw_delta_tgt VERSION AS OF 0").write.mode("overwrite").parquet(out)
    spark.read.table("hw_delta_tgt").write.mode("overwrite").parquet(out)
    copies = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and any(o["name"] == out for o in e["outputs"])]
    assert [_version(_inputs(e)["hw_delta_tgt"]) for e in copies] == ["0", "1"]
    assert _inputs(copies[0])["hw_delta_tgt"]["facets"]["symlinks"]["identifiers"][0]["name"] == "default.hw_delta_tgt"


@pytest.mark.spark
@needs_connectors("delta")
def test_reads_by_path_report_the_version_scanned(spark: Any, lineage: Any, delta_tables: Path) -> None:
    path = str(delta_tables / "by_path")
    df = spark.createDataFrame([(1, "a")], "k long, v string")
    df.write.format("delta").save(path)
    df.write.format("delta").mode("append").save(path)  # version 1
    out = str(delta_tables / "path_copy")
    spark.read.format("delta").load(path).write.mode("overwrite").parquet(out)
    spark.read.format("delta").option("versionAsOf", 0).load(path).write.mode("overwrite").parquet(out)
    spark.sql(f"SELECT * FROM delta.`{path}`").write.mode("overwrite").parquet(out)
    copies = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and any(o["name"] == out for o in e["outputs"])]
    inputs = [_inputs(e)["by_path"] for e in copies]
    assert [(d["namespace"], d["name"]) for d in inputs] == [("file", path)] * 3
    assert [_version(d) for d in inputs] == ["1", "0", "1"]
    assert {(d["facets"]["storage"]["storageLayer"], d["facets"]["storage"]["fileFormat"]) for d in inputs} == {
        ("delta", "parquet")
    }


@pytest.mark.spark
@needs_connectors("delta")
def test_save_as_table_ctas_and_insert(spark: Any, lineage: Any, delta_tables: Path) -> None:
    df = spark.createDataFrame([(1, "a")], "k long, v string")
    df.write.format("delta").saveAsTable("hw_delta_saved")
    spark.sql("CREATE TABLE hw_delta_ctas USING delta AS SELECT k, upper(v) AS v FROM hw_delta_saved")
    spark.sql("INSERT INTO hw_delta_ctas SELECT * FROM hw_delta_saved")
    events = lineage.action_events()
    ctas = _complete(events, "create_table_as_select.default_hw_delta_ctas")
    (output,) = ctas["outputs"]
    assert output["name"] == f"{WAREHOUSE}/hw_delta_ctas"
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"
    assert output["facets"]["symlinks"]["identifiers"][0]["name"] == "default.hw_delta_ctas"
    assert _version(output) == "0"
    assert output["facets"]["storage"]["storageLayer"] == "delta"
    assert _lineage(output, "v") == {("hw_delta_saved", "v"): {("DIRECT", "TRANSFORMATION")}}
    assert _version(_inputs(ctas)["hw_delta_saved"]) == "0"
    insert = _complete(events, "append_data")
    (output,) = insert["outputs"]
    assert output["name"] == f"{WAREHOUSE}/hw_delta_ctas"
    assert _version(output) == "1"
    # One run per statement: neither the write a CTAS or saveAsTable makes into its
    # staged table nor Delta's own file-writing executions are runs of their own.
    jobs = [e["job"]["name"].split(".", 1)[1] for e in events if e["eventType"] == "COMPLETE"]
    assert [j.rsplit(".", 1)[0] for j in jobs] == [
        "atomic_create_table_as_select",
        "atomic_create_table_as_select",
        "append_data_exec_v1",
    ]


def test_written_version_is_bounded_by_the_snapshot_read() -> None:
    assert written_version(7, 3) == 4  # later writes moved the table on
    assert written_version(3, 3) == 3  # the command committed nothing
    assert written_version(0, None) == 0
    assert written_version(None, 2) is None


def _attribute(name: str, ident: int, qualifier: list[str] | None = None) -> list[dict[str, Any]]:
    return [
        {
            "class": "org.apache.spark.sql.catalyst.expressions.AttributeReference",
            "num-children": 0,
            "name": name,
            "dataType": "long",
            "exprId": {"id": ident},
            "qualifier": qualifier or [],
        }
    ]


def test_assignments_give_each_column_the_values_written_into_it() -> None:
    """A MERGE whose update keeps ``k`` and sets ``v`` from the source, and whose insert
    takes both from the source: ``k`` derives from both tables, ``v`` from the source."""
    target = PlanNode("LogicalRelation", {"output": [_attribute("k", 1), _attribute("v", 2)]})
    source = PlanNode("LogicalRelation", {"output": [_attribute("k", 3), _attribute("v", 4)]})
    node = PlanNode(
        ASSIGNMENTS,
        {
            "output": [_attribute("k", -1), _attribute("v", -2)],
            "assignments": [
                [_attribute("k", 1), _attribute("k", 3, ["s"])],
                [_attribute("v", 4, ["s"]), _attribute("v", 4, ["s"])],
            ],
        },
        children=[target, source],
    )
    leaves = {1: ("file", "/t", "k"), 2: ("file", "/t", "v"), 3: ("file", "/s", "k"), 4: ("file", "/s", "v")}
    fields, _ = column_lineage(node, ["k", "v"], leaves)
    described = {
        name: {(i["name"], i["field"], t["subtype"], t.get("description")) for i in items for t in i["transformations"]}
        for name, items in fields.items()
    }
    assert described == {
        "k": {("/t", "k", "IDENTITY", "k"), ("/s", "k", "IDENTITY", "s.k")},
        "v": {("/s", "v", "IDENTITY", "s.v")},
    }


FIXTURES = Path(__file__).parent / "fixtures" / "delta"
FIXTURE_WAREHOUSE = "/tmp/hw_delta_fixtures/warehouse"


def _replayed(title: str) -> dict[str, Any]:
    """The COMPLETE event of a recorded Delta command (record_delta_plans.py), built
    without a JVM, column lineage per field."""
    return events_for(title, fixtures=FIXTURES, warehouse=FIXTURE_WAREHOUSE)[-1]


def _described(output: dict[str, Any], column: str) -> set[tuple[str, str, str, str]]:
    return {
        (item["name"].rsplit("/", 1)[-1], item["field"], t["subtype"], t.get("description", ""))
        for item in output["facets"]["columnLineage"]["fields"][column]["inputFields"]
        for t in item["transformations"]
    }


def test_recorded_merge_through_a_view_with_clause_conditions() -> None:
    event = _replayed("merge_through_a_view")
    assert event["job"]["name"] == "fixtures.execute_merge_into_command.warehouse_events"
    (output,) = event["outputs"]
    assert output["name"] == f"{FIXTURE_WAREHOUSE}/events"
    assert _version(output) == "2"
    assert {n: _version(d) for n, d in _inputs(event).items()} == {"events": "1", "updates": "1"}
    join = "FULL OUTER JOIN ON (t.event_id = s.event_id)"
    condition = "(s.updated_at > t.last_updated_at)"
    coalesce = "coalesce(spark_catalog.default.updates.updated_at, CAST(0 AS BIGINT)) AS updated_at"
    # Kept by the conditional update, inserted from the view over updates.
    assert _described(output, "event_id") == {
        ("events", "event_id", "IDENTITY", "event_id"),
        ("updates", "event_id", "IDENTITY", "s.event_id"),
        ("events", "event_id", "JOIN", join),
        ("updates", "event_id", "JOIN", join),
        ("updates", "updated_at", "CONDITIONAL", condition),
        ("events", "last_updated_at", "CONDITIONAL", condition),
    }
    # Set by the update (when its condition holds) and the insert, both from the coalesce.
    assert _described(output, "last_updated_at") == {
        ("updates", "updated_at", "TRANSFORMATION", coalesce),
        ("updates", "updated_at", "CONDITIONAL", coalesce),
        ("updates", "updated_at", "CONDITIONAL", condition),
        ("events", "last_updated_at", "CONDITIONAL", condition),
        ("events", "event_id", "JOIN", join),
        ("updates", "event_id", "JOIN", join),
    }


def test_recorded_update_and_a_delete_that_changed_nothing() -> None:
    update = _replayed("update_with_condition")
    (output,) = update["outputs"]
    assert _version(output) == "3"
    events = "spark_catalog.default.events"
    assert _described(output, "last_updated_at") == {
        ("events", "last_updated_at", "TRANSFORMATION", f"({events}.last_updated_at * 2L)"),
        ("events", "event_id", "FILTER", f"WHERE ({events}.event_id > 1L)"),
    }
    delete = _replayed("delete_with_condition")
    (output,) = delete["outputs"]
    # No row matched: Delta committed nothing, the table stays at the version read.
    assert _version(output) == "3"
    assert _version(_inputs(delete)["events"]) == "3"
    deleted_where = ("events", "last_updated_at", "FILTER", f"WHERE ({events}.last_updated_at < 5L)")
    assert deleted_where in _described(output, "event_id")
