"""Which output columns of an action a model's predictions reach, as column lineage.

A column a model adds (its prediction, probability, ...) is known by its
expression id in the analyzed plan. :func:`scored_column_ids` finds the ids an
action's plan carries; :func:`prediction_reach` traces them to the action's
output columns through the same column lineage as any other column;
:func:`add_prediction_lineage` then names the model's columns among the input
fields of each output column a prediction reaches.
"""

from __future__ import annotations

import json
import re
from typing import Any

from headwater.agent.columns import column_lineage
from headwater.agent.ml_description import model_columns
from headwater.agent.ml_model_datasets import ModelRecord
from headwater.agent.plan import parse_plan
from headwater.agent.sources.common import written_query

__all__ = ["add_prediction_lineage", "prediction_reach", "scored_column_ids"]

_EXPR_ID = re.compile(r'"exprId":\{[^{}]*?"id":(\d+)')


def scored_column_ids(analyzed_json: str) -> set[int]:
    """The expression ids of every column an analyzed plan's JSON names."""
    return {int(i) for i in _EXPR_ID.findall(analyzed_json)}


def prediction_reach(
    events: list[dict[str, Any]],
    analyzed_json: str,
    leaves: dict[int, tuple[str, str, str]],
    whole_plan: bool = False,
) -> dict[str, set[str]]:
    """Output column -> the model uids whose predictions reach it directly.

    ``leaves`` maps a model's column (expression id) to (namespace, name, uid);
    ``whole_plan``: the plan is the written query itself (a streaming query's).
    """
    reached: dict[str, set[str]] = {}
    tree = parse_plan(json.loads(analyzed_json))
    query = tree if whole_plan else written_query(tree)
    for event in events:
        for output in event.get("outputs", []):
            schema = output.get("facets", {}).get("schema", {})
            names = [f["name"] for f in schema.get("fields", [])]
            if query is None or not names:
                continue
            fields, _ = column_lineage(query, names, leaves)
            for column, items in fields.items():
                reached.setdefault(column, set()).update(
                    i["field"]
                    for i in items
                    if any(t["type"] == "DIRECT" for t in i["transformations"])
                )
    return reached


def add_prediction_lineage(
    output: dict[str, Any], reached: dict[str, set[str]], records: list[ModelRecord]
) -> None:
    """Name the models' columns among the input fields of the output columns they reach."""
    facet = output.get("facets", {}).get("columnLineage")
    if facet is None:
        return
    by_uid = {r.uid: r for r in records}
    for column, uids in reached.items():
        entry = facet["fields"].setdefault(column, {"inputFields": []})
        for uid in sorted(uids):
            record = by_uid.get(uid)
            if record is None or record.dataset is None:
                continue
            algorithm = str(record.description.get("algorithm", "model"))
            known = {(f["namespace"], f["name"], f["field"]) for f in entry["inputFields"]}
            for name in [n for n, _ in record.fields] or model_columns(record.description):
                if (*record.dataset, name) in known:
                    continue  # the events of one action share their facets
                entry["inputFields"].append(
                    {
                        "namespace": record.dataset[0],
                        "name": record.dataset[1],
                        "field": name,
                        "transformations": [
                            {
                                "type": "DIRECT",
                                "subtype": "TRANSFORMATION",
                                "description": f"predicted by {algorithm.rsplit('.', 1)[-1]}",
                                "masking": False,
                            }
                        ],
                    }
                )
