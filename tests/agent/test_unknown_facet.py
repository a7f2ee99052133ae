"""The opt-in ``spark_unknown`` run facet: leaves no family reads, and a root that writes nothing."""

from __future__ import annotations

from typing import Any

from headwater.agent.actions import ActionCapture, action_events
from headwater.agent.capture import PlanCapture
from headwater.agent.config import AgentConfig
from headwater.agent.plan import parse_plan
from headwater.agent.run_model import RunModel
from headwater.agent.sources import VisitContext

_PLAN = "org.apache.spark.sql.catalyst.plans.logical."
_VALUE = [[{"class": "org.apache.spark.sql.catalyst.expressions.AttributeReference", "num-children": 0,
            "name": "v", "dataType": "string", "exprId": {"id": 1}}]]
_ON = {
    "spark.openlineage.facets.spark_unknown.disabled": "false",
    "spark.openlineage.columnLineage.datasetLineageEnabled": "false",
}


def _unknown(entries: list[dict[str, Any]], facts: dict[str, Any]) -> dict[str, Any] | None:
    plan = PlanCapture(parse_plan(entries), facts)
    model = RunModel(AgentConfig.from_sources(_ON, {}), "app", "4.0.1", "0.1.0")
    capture = ActionCapture("collect", plan, start_time=1_700_000_000.0, end_time=1_700_000_001.0)
    events = action_events(capture, model, VisitContext(tree=plan.tree, node_facts=plan.facts))
    return events[-1]["run"]["facets"].get("spark_unknown")


def test_a_query_root_is_the_unknown_output() -> None:
    facet = _unknown(
        [{"class": _PLAN + "GlobalLimit", "num-children": 1, "child": 0},
         {"class": _PLAN + "LocalRelation", "num-children": 0, "output": _VALUE}],
        {},
    )
    assert facet is not None
    assert facet["output"]["description"] == {"nodeClass": "GlobalLimit"}
    assert [entry["description"]["nodeClass"] for entry in facet["inputs"]] == ["LocalRelation"]


def test_a_root_that_writes_a_dataset_is_not_unknown() -> None:
    facet = _unknown(
        [{"class": "org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand",
          "num-children": 0,
          "query": [{"class": _PLAN + "LocalRelation", "num-children": 0, "output": _VALUE}]}],
        {"root": {"options": {"path": "/tmp/out"}, "mode": "Append",
                  "data_source": "org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat"}},
    )
    assert facet is None or "output" not in facet
