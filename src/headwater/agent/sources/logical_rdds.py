"""DataFrames made from RDDs (``LogicalRDD``): the files the RDD lineage reads."""

from __future__ import annotations

from typing import Any

from headwater.agent.plan import PlanNode
from headwater.agent.rdds import rdd_input_paths
from headwater.agent.sources.common import CapturedDataset, VisitContext, datasets_at
from headwater.agent.sources.family import SourceFamily

__all__ = ["FAMILY"]


def _logical_rdd_facts(node: Any) -> dict[str, Any]:
    return {"input_paths": rdd_input_paths(node.rdd())}


def _read_logical_rdd(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    return datasets_at(node, list(ctx.facts(node).get("input_paths", [])), ctx)


FAMILY = SourceFamily(
    name="rdd",
    lookups={"LogicalRDD": _logical_rdd_facts},
    reads={"LogicalRDD": _read_logical_rdd},
)
