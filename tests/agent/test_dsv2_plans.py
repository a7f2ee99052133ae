"""The DSv2 family on real Iceberg row-level plans (Spark 4.0 ``toJSON`` of a MERGE
in copy-on-write and merge-on-read, an UPDATE in merge-on-read), without a JVM:
the written table, the snapshots, and column lineage through ``MergeRows`` and
``Expand``; and the Iceberg schema text read as Spark types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from headwater.agent.actions import ActionCapture, action_events
from headwater.agent.capture import PlanCapture
from headwater.agent.config import AgentConfig
from headwater.agent.plan import PlanNode
from headwater.agent.run_model import RunModel
from headwater.agent.sources import VisitContext
from headwater.agent.sources.iceberg import spark_struct
from tests.agent.spec import validate_event
from tests.agent.test_spark_iceberg import _direct

FIXTURES = Path(__file__).parent / "fixtures" / "dsv2"
WAREHOUSE = "/w"


def _table(name: str, version: str, previous: str | None = None) -> dict[str, Any]:
    facts = {
        "table_name": f"spark_catalog.default.{name}",
        "table_class": "org.apache.iceberg.spark.source.SparkTable",
        "catalog": "spark_catalog",
        "namespace": ["default"],
        "name": name,
        "location": f"{WAREHOUSE}/default/{name}",
        "storage_layer": "iceberg",
        "file_format": "parquet",
        "catalog_type": "hadoop",
        "warehouse": WAREHOUSE,
        "version": version,
    }
    if previous is not None:
        facts["previous_version"] = previous
    return facts


def _events(title: str, target: str, executed_node: str) -> list[dict[str, Any]]:
    """Events of a recorded plan whose JVM facts are those of an Iceberg ``target``
    at snapshot 2 (written by the action) and a source table ``source1``."""
    root = json.loads((FIXTURES / f"{title}.json").read_text())
    plan = PlanCapture.from_json({"plans": {"root": root}, "facts": {}})
    written = _table(target, "2", previous="1")
    facts: dict[str, dict[str, Any]] = {plan.tree.key: written}
    for node in plan.tree.walk():
        if node.cls == "DataSourceV2ScanRelation":
            # The target's scans read its row positions (_file); the source's do not.
            names = {a.name for a in node.output()}
            facts[node.key] = written if "_file" in names else _table("source1", "7")
    capture = ActionCapture("command", PlanCapture(plan.tree, facts, plan.raw), executed={"node_name": executed_node})
    config = AgentConfig.from_sources({"spark.openlineage.columnLineage.datasetLineageEnabled": "false"}, {})
    model = RunModel(config, "app", "4.0.1", "0.1.0")
    events = action_events(capture, model, VisitContext(tree=plan.tree, node_facts=facts))
    for event in events:
        validate_event(event)
    return events


@pytest.mark.parametrize(
    ("title", "target", "node"),
    [("merge_copy_on_write", "cow", "ReplaceData"), ("merge_merge_on_read", "mor", "WriteDelta")],
)
def test_merge_writes_its_target_with_lineage_from_target_and_source(title: str, target: str, node: str):
    event = _events(title, target, node)[-1]
    assert event["job"]["name"] == f"app.{'replace_data' if node == 'ReplaceData' else 'write_delta'}.spark_catalog_default_{target}"
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == ("file", f"{WAREHOUSE}/default/{target}")
    assert [f["name"] for f in output["facets"]["schema"]["fields"]] == ["a", "b"]
    assert output["facets"]["version"]["datasetVersion"] == "2"
    assert output["facets"]["symlinks"]["identifiers"] == [
        {"namespace": f"file:{WAREHOUSE}", "name": f"default.{target}", "type": "TABLE"}
    ]
    assert output["facets"]["storage"]["storageLayer"] == "iceberg"
    # Matched rows keep the target's key, inserted rows take the source's; b is set from the source.
    assert _direct(output, "a") == {(target, "a"), ("source1", "a")}
    assert ("source1", "b") in _direct(output, "b")
    inputs = {d["name"].rsplit("/", 1)[-1]: d["facets"]["version"]["datasetVersion"] for d in event["inputs"]}
    # The target was read at the snapshot before the one the MERGE wrote.
    assert inputs == {target: "1", "source1": "7"}


def test_update_merge_on_read_lineage_goes_through_expand():
    event = _events("update_merge_on_read", "mor", "WriteDelta")[-1]
    (output,) = event["outputs"]
    # UPDATE mor SET b = 5 WHERE a = 3: a is the row's own, b a literal.
    assert _direct(output, "a") == {("mor", "a")}
    assert "b" not in output["facets"]["columnLineage"]["fields"] or not _direct(output, "b")


def test_the_aligned_query_keeps_the_plan_when_a_column_is_missing():
    from headwater.agent.sources.dsv2 import _aligned_query

    query = PlanNode("LocalRelation", {"output": []})
    assert _aligned_query(query, ["a"]) is query


def test_iceberg_schema_text_reads_as_spark_types():
    text = (
        "table {\n  1: id: required long\n  2: name: optional string (a doc)\n"
        "  3: at: optional timestamptz\n  4: amount: optional decimal(10, 2)\n"
        "  5: tags: optional list<string>\n  6: point: optional struct<7: x: optional int>\n}"
    )
    assert spark_struct(text)["fields"] == [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "at", "type": "timestamp"},
        {"name": "amount", "type": "decimal(10,2)"},
        {"name": "tags", "type": "array"},
        {"name": "point", "type": "struct"},
    ]


def _append(facts: dict[str, Any]) -> dict[str, Any]:
    root = json.loads((FIXTURES / "append_values.json").read_text())
    plan = PlanCapture.from_json({"plans": {"root": root}, "facts": {"root": facts}})
    capture = ActionCapture("command", plan, executed={"node_name": "AppendData"})
    config = AgentConfig.from_sources({}, {})
    events = action_events(capture, RunModel(config, "app", "4.0.1", "0.1.0"), VisitContext(plan.tree, plan.facts))
    return events[-1]


def test_append_is_named_by_the_table_name_and_a_path_table_by_its_path():
    event = _append(_table("source1", "3"))
    assert event["job"]["name"] == "app.append_data.spark_catalog_default_source1"
    (output,) = event["outputs"]
    assert [(f["name"], f["type"]) for f in output["facets"]["schema"]["fields"]] == [("a", "long"), ("b", "long")]
    assert "lifecycleStateChange" not in output["facets"]
    # A table known by its path (Iceberg's path identifiers, delta.`/p`) has no symlink.
    by_path = {**_table("t", "3"), "namespace": [], "name": "/data/lake/t", "table_name": "/data/lake/t"}
    by_path["location"] = "/data/lake/t"
    event = _append(by_path)
    assert event["job"]["name"] == "app.append_data.lake_t"
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == ("file", "/data/lake/t")
    assert "symlinks" not in output["facets"]


@pytest.mark.parametrize(
    ("description", "columns"),
    [
        ("spark_catalog.default.s (branch=null) [filters=((a > 1 AND NOT (b = 7)) OR a IS NULL), groupedBy=]", ["a", "b"]),
        # A quoted value names no column; a column name may hold a space.
        ("spark_catalog.default.w (branch=null) [filters=weird col IS NOT NULL, weird col = 'a > b', groupedBy=]", ["weird col"]),
        ("spark_catalog.default.s (branch=null) [filters=, groupedBy=]", []),
        ("ParquetScan DataFilters: [isnotnull(a#1)], PushedFilters: [IsNotNull(a), GreaterThan(a,1)], ReadSchema: struct<a:int>", ["a"]),
        # Outside the filters (the table's name here) nothing counts.
        ("spark_catalog.a.b (branch=null)", []),
    ],
)
def test_filters_a_scan_applies_are_found_in_its_description(description: str, columns: list[str]):
    from headwater.agent.sources.dsv2 import scan_filter_sources

    schema = {"fields": [{"name": name} for name in ("a", "b", "c", "weird col")]}
    found = scan_filter_sources({"scan_description": description, "schema": schema}, [])
    assert [name for name, _ in found] == columns
    assert all((how.type, how.subtype) == ("INDIRECT", "FILTER") for _, how in found)
