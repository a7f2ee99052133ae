"""Structured Streaming's driver-local sinks: ``memory`` and ``console``.

A ``memory`` sink keeps the rows in an in-memory table of the driver, queried
by the stream's name (``queryName``); a ``console`` sink prints them on the
driver's standard output. Neither is storage another job can read, but a query
writing there does write: each is an output dataset of its own kind, namespace
``memory`` with the query's name (none without one) or ``console`` with
``stdout``, carrying the query's schema and column lineage.
``spark.openlineage.streaming.ignoredSinks=[memory;console]`` leaves them out
(:mod:`headwater.agent.streaming` drops them from the query's outputs), for
sessions that only debug or test with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headwater import naming
from headwater.agent.plan import PlanNode
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    schema_from_struct,
    written_query,
)
from headwater.agent.sources.family import SourceFamily

__all__ = ["CONSOLE_NAMESPACE", "FAMILY", "LOCAL_SINKS", "MEMORY_NAMESPACE"]

MEMORY_NAMESPACE = "memory"
CONSOLE_NAMESPACE = "console"
#: The kinds ``spark.openlineage.streaming.ignoredSinks`` can name: their namespaces.
LOCAL_SINKS = (MEMORY_NAMESPACE, CONSOLE_NAMESPACE)


def _memory_facts(sink: Any, options: Mapping[str, str]) -> dict[str, Any]:
    return {"local_sink": MEMORY_NAMESPACE}


def _console_facts(sink: Any, options: Mapping[str, str]) -> dict[str, Any]:
    return {"local_sink": CONSOLE_NAMESPACE}


def _write_local(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    kind = facts.get("local_sink")
    if kind == MEMORY_NAMESPACE:
        name = facts.get("query_name")
        if not name:
            return  # Spark refuses a memory sink without a query name
    elif kind == CONSOLE_NAMESPACE:
        name = "stdout"
    else:
        return
    output = CapturedDataset(
        str(kind),
        str(name),
        schema_from_struct(facts.get("query_schema")),
        query=written_query(root),
    )
    visited.outputs.append(output)
    visited.job_suffix = naming.trim_path_suffix(output.name)


FAMILY = SourceFamily(
    name="local_sinks",
    save_writes={"MemorySink": _write_local, "ConsoleTable": _write_local},
    stream_sinks={"MemorySink": _memory_facts, "ConsoleTable": _console_facts},
)
