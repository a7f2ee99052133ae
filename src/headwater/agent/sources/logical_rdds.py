"""DataFrames made from RDDs (``LogicalRDD``): the files the RDD lineage reads, and
the DSv2 tables it scans (see :func:`.dsv2.rdd_scan_tables`); in a streaming
query's ``foreachBatch`` function, the query's micro-batch (see
:class:`~.common.MicroBatch`), named by what the query read."""

from __future__ import annotations

import logging
from typing import Any

from headwater.agent.plan import PlanNode
from headwater.agent.rdds import rdd_input_paths
from headwater.agent.sources import dsv2
from headwater.agent.sources.common import CapturedDataset, VisitContext, datasets_at
from headwater.agent.sources.family import SourceFamily

__all__ = ["FAMILY"]

logger = logging.getLogger(__name__)


def _logical_rdd_facts(node: Any) -> dict[str, Any]:
    rdd = node.rdd()
    facts: dict[str, Any] = {"input_paths": rdd_input_paths(rdd)}
    try:
        facts["v2_tables"] = dsv2.rdd_scan_tables(rdd)
    except Exception:
        logger.debug("no DSv2 scans under the RDD", exc_info=True)
    return facts


def _read_logical_rdd(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    if ctx.micro_batch is not None:
        batch = ctx.micro_batch.datasets(node)
        if batch is not None:
            return batch
    facts = ctx.facts(node)
    datasets = datasets_at(node, list(facts.get("input_paths", [])), ctx)
    return datasets + dsv2.rdd_scan_datasets(list(facts.get("v2_tables", [])), ctx)


FAMILY = SourceFamily(
    name="rdd",
    lookups={"LogicalRDD": _logical_rdd_facts},
    reads={"LogicalRDD": _read_logical_rdd},
)
