"""Golden plan fixtures: real Spark plans recorded by fixtures/record_plans.py,
turned into events without a JVM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from headwater.agent.actions import ActionCapture, action_events
from headwater.agent.config import AgentConfig
from headwater.agent.capture import PlanCapture
from headwater.agent.run_model import RunModel
from headwater.agent.sources import VisitContext
from tests.agent.spec import validate_event

FIXTURES = Path(__file__).parent / "fixtures" / "plans"
ROOT = "/tmp/hw_fixtures"
WAREHOUSE = f"{ROOT}/warehouse"


def events_for(
    title: str, *, fixtures: Path = FIXTURES, warehouse: str = WAREHOUSE, **conf: str
) -> list[dict[str, Any]]:
    """The events of the capture recorded as ``fixtures/<title>.json`` in a session
    whose warehouse was ``warehouse``, under the Spark properties ``conf``."""
    data = json.loads((fixtures / f"{title}.json").read_text())
    plan = PlanCapture.from_json(data["plan"])
    capture = ActionCapture(
        func_name=data["func_name"],
        plan=plan,
        tables=data["tables"],
        executed=data["executed"],
        start_time=1_700_000_000.0,
        end_time=1_700_000_001.0,
        sql=data["sql"],
    )
    config = AgentConfig.from_sources(
        {"spark.openlineage.columnLineage.datasetLineageEnabled": "false", **conf}, {}
    )
    model = RunModel(config, "fixtures", "4.0.1", "0.1.0")
    ctx = VisitContext(
        tree=plan.tree,
        node_facts=plan.facts,
        tables=data["tables"],
        warehouse_uri=f"file:{warehouse}",
        table_namespace=f"file:{warehouse}",
    )
    events = action_events(capture, model, ctx)
    for event in events:
        validate_event(event)
    return events


def lineage_of(event: dict[str, Any], column: str) -> dict[tuple[str, str], set[tuple[str, str, bool]]]:
    fields = event["outputs"][0]["facets"]["columnLineage"]["fields"][column]["inputFields"]
    return {
        (item["name"].rsplit("/", 1)[-1], item["field"]): {
            (t["type"], t["subtype"], t["masking"]) for t in item["transformations"]
        }
        for item in fields
    }


def test_file_filter_write() -> None:
    start, running, complete = events_for("file_filter_write")
    assert [e["eventType"] for e in (start, running, complete)] == ["START", "RUNNING", "COMPLETE"]
    assert start["run"]["runId"] == complete["run"]["runId"]
    assert [d["name"] for d in complete["inputs"]] == [f"{ROOT}/src"]
    output = complete["outputs"][0]
    assert output["name"] == f"{ROOT}/out_csv"
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == 2
    assert "outputStatistics" not in start["outputs"][0]["outputFacets"]
    assert complete["job"]["name"] == "fixtures.execute_insert_into_hadoop_fs_relation_command.hw_fixtures_out_csv"
    assert lineage_of(complete, "k")[("src", "k")] == {("DIRECT", "IDENTITY", False), ("INDIRECT", "FILTER", False)}
    assert lineage_of(complete, "v")[("src", "k")] == {("INDIRECT", "FILTER", False)}


def test_window_union_case_hash() -> None:
    complete = events_for("window_union_case_hash")[-1]
    assert [d["name"] for d in complete["inputs"]] == [f"{ROOT}/src"]
    assert ("DIRECT", "TRANSFORMATION", True) in lineage_of(complete, "hv")[("src", "v")]
    pick = lineage_of(complete, "pick")
    assert ("INDIRECT", "CONDITIONAL", False) in pick[("src", "k")]
    assert ("DIRECT", "TRANSFORMATION", False) in pick[("src", "g")]
    rn = lineage_of(complete, "rn")
    assert ("INDIRECT", "WINDOW", False) in rn[("src", "g")]
    assert ("INDIRECT", "WINDOW", False) in rn[("src", "k")]


def test_aggregate_count_sort() -> None:
    complete = events_for("aggregate_count_sort")[-1]
    columns = complete["outputs"][0]["facets"]["columnLineage"]["fields"]
    count_column = next(c for c in columns if c.startswith("count"))
    sum_column = next(c for c in columns if c.startswith("sum"))
    assert ("DIRECT", "AGGREGATION", True) in lineage_of(complete, count_column)[("src", "v")]
    assert ("DIRECT", "AGGREGATION", False) in lineage_of(complete, sum_column)[("src", "k")]
    assert ("INDIRECT", "GROUP_BY", False) in lineage_of(complete, sum_column)[("src", "g")]
    assert ("INDIRECT", "SORT", False) in lineage_of(complete, sum_column)[("src", "g")]


def test_ctas_column_lineage_with_descriptions() -> None:
    complete = events_for("cll_ctas")[-1]
    assert complete["job"]["name"] == "fixtures.execute_create_data_source_table_as_select_command.default_tbl1"
    assert sorted(d["name"] for d in complete["inputs"]) == [f"{WAREHOUSE}/cll_source1", f"{WAREHOUSE}/cll_source2"]
    output = complete["outputs"][0]
    assert output["name"] == f"{WAREHOUSE}/tbl1"
    assert [(f["name"], f["type"]) for f in output["facets"]["schema"]["fields"]] == [
        ("ident", "integer"),
        ("trans", "string"),
        ("agg", "long"),
    ]
    ident = {
        (i["name"].rsplit("/", 1)[-1], i["field"]): {t.get("description") for t in i["transformations"]}
        for i in output["facets"]["columnLineage"]["fields"]["ident"]["inputFields"]
    }
    assert ident[("cll_source1", "a")] == {
        "t1.a AS ident",
        "GROUP BY t1.a, t1.b",
        "INNER JOIN ON (t1.a = t2.a)",
        "WHERE ((t1.a > 1) AND (t1.a IS NOT NULL))",
    }
    assert ident[("cll_source1", "b")] == {"GROUP BY t1.a, t1.b"}


def test_cached_relation_is_followed_to_its_source() -> None:
    complete = events_for("cached_save_as_table")[-1]
    assert [d["name"] for d in complete["inputs"]] == [f"{WAREHOUSE}/temp"]
    assert complete["outputs"][0]["name"] == f"{WAREHOUSE}/target"
    assert lineage_of(complete, "a")[("temp", "a")] == {("DIRECT", "IDENTITY", False)}


def test_insert_values_into_hive_table() -> None:
    complete = events_for("insert_hive_values")[-1]
    assert complete["inputs"] == []
    output = complete["outputs"][0]
    assert output["name"] == f"{WAREHOUSE}/h"
    assert output["facets"]["symlinks"]["identifiers"] == [
        {"namespace": f"file:{WAREHOUSE}", "name": "default.h", "type": "TABLE"}
    ]
    assert complete["job"]["name"] == "fixtures.execute_insert_into_hive_table.warehouse_h"


def test_rename_and_drop() -> None:
    rename = events_for("alter_rename")[-1]
    facet = rename["outputs"][0]["facets"]["lifecycleStateChange"]
    assert facet == {
        **facet,
        "lifecycleStateChange": "RENAME",
        "previousIdentifier": {"namespace": "file", "name": f"{WAREHOUSE}/h"},
    }
    drop = events_for("drop_table")[-1]
    assert drop["outputs"][0]["name"] == f"{WAREHOUSE}/h2"
    assert drop["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "DROP"


def test_disabled_facets_and_no_job_suffix() -> None:
    complete = events_for(
        "file_filter_write",
        **{
            "spark.openlineage.facets.columnLineage.disabled": "true",
            "spark.openlineage.jobName.appendDatasetName": "false",
        },
    )[-1]
    assert "columnLineage" not in complete["outputs"][0]["facets"]
    assert complete["job"]["name"] == "fixtures.execute_insert_into_hadoop_fs_relation_command"


@pytest.mark.parametrize("title", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_every_fixture_round_trips_and_validates(title: str) -> None:
    data = json.loads((FIXTURES / f"{title}.json").read_text())
    rebuilt = PlanCapture.from_json(data["plan"])
    assert rebuilt.to_json()["plans"] == data["plan"]["plans"]
    assert events_for(title)


def _tree_shape(node: Any) -> list[Any]:
    return [(n.key, n.cls, sorted(n.inner), n.fields) for n in node.walk()]


@pytest.mark.parametrize("title", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_parsing_without_the_subquery_search_is_the_same_when_no_plan_key(title: str) -> None:
    from headwater.agent.capture import _loads, _may_hold_subqueries
    from headwater.agent.plan import parse_plan

    for raw in json.loads((FIXTURES / f"{title}.json").read_text())["plan"]["plans"].values():
        text = json.dumps(raw)
        searched = parse_plan(_loads(text))
        assert _loads(text) == json.loads(text)
        if not _may_hold_subqueries(text):
            assert _tree_shape(parse_plan(_loads(text), subqueries=False)) == _tree_shape(searched)
        # Keys built while parsing are the ones joined from each node's path.
        for node in searched.walk():
            assert node.key == ("/".join(f"{k}:{v}" for k, v in node.path) or "root")


def test_plan_json_that_orjson_refuses_is_read_as_json_reads_it() -> None:
    import math

    from headwater.agent.capture import _loads

    assert _loads('[{"value": 1180591620717411303424}]') == [{"value": 2**70}]
    assert math.isnan(_loads('[{"value": NaN}]')[0]["value"])
