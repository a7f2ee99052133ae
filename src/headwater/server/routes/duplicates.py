"""``GET /api/v2/duplicates``: pairs of jobs that compute the same output columns.

Each output column's fingerprint is its input columns with their transformation
types and subtypes, filters included (:mod:`headwater.graph.duplicates` gives the
rules); pairs of jobs are listed with how much of each one's output the other
computes too, read from the stored column lineage: only the jobs whose fingerprint
digests (kept at write time) say they may pair (:mod:`headwater.store.reads.duplicates`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, Field

from headwater.graph.duplicates import (
    ColumnInput,
    DuplicatePair,
    JobShare,
    OutputColumn,
    duplicates,
)
from headwater.graph.model import NodeId, NodeType
from headwater.server.deps import StoreDep
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    Limit,
    ScopeDep,
    connection,
    node_id_query,
    parse_node_id,
    read_router,
)
from headwater.store.reads.common import job_ids
from headwater.store.reads.duplicates import duplicate_columns
from headwater.store.reads.nodes import require_node
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["DuplicateList", "duplicates_answer", "router"]

router = read_router()


class ColumnMatch(BaseModel):
    column: str = Field(description="This job's output column (`dataset:NS:NAME:FIELD`).")
    other: str = Field(description="The other job's column computed the same way.")
    match: Literal["exact", "values"] = Field(
        description="exact: the same inputs and transformations, filters and joins too; "
        "values: the same value inputs over other rows (another filter, join or grouping)."
    )


class SharedOutput(BaseModel):
    job: str = Field(description="The job's node id.")
    columns: int = Field(description="Its output columns that have a fingerprint.")
    sameColumns: int = Field(description="How many of them the other job computes exactly.")
    sameValues: int = Field(
        description="How many the other job computes from the same "
        "value inputs, exactly or over other rows."
    )
    share: float = Field(description="sameColumns / columns.")
    valueShare: float = Field(description="sameValues / columns.")
    matches: list[ColumnMatch]


class Duplicate(BaseModel):
    relation: Literal["equal", "contains", "partial"] = Field(
        description="equal: every column of each is computed exactly by the other; contains: "
        "every column of `contained` is computed exactly by the other job, which writes more; "
        "partial: some columns, or only their values over other rows."
    )
    contained: str | None = Field(
        description="With `contains`, the job whose output the other computes in full."
    )
    score: float = Field(description="The larger valueShare of the two; the list's order.")
    jobs: list[SharedOutput] = Field(description="The two jobs, in node-id order.")


class DuplicateList(BaseModel):
    minShare: float
    totalCount: int
    duplicates: list[Duplicate] = Field(description="Highest score first.")


@router.get(
    "/api/v2/duplicates",
    response_model=DuplicateList,
    responses=error_responses(400, 404),
    tags=["lineage v2"],
)
def get_duplicates(
    store: StoreDep,
    scope: ScopeDep,
    namespace: Annotated[
        str | None, Query(description="Only pairs with a job in this namespace.")
    ] = None,
    job: Annotated[str | None, node_id_query(NodeType.JOB)] = None,
    minShare: Annotated[  # noqa: N803 -- the API's own spelling
        float,
        Query(ge=0, le=1, description="The least valueShare of one side of a pair, 0-1."),
    ] = 0.5,
    limit: Limit = 100,
) -> dict[str, Any]:
    """Pairs of jobs whose output columns are computed the same way, with how much of
    each one's output they share. `job` lists one job's pairs."""
    with connection(store) as conn:
        return duplicates_answer(conn, namespace, job, minShare, limit, scope)


def _side(share: JobShare) -> dict[str, Any]:
    return {
        "job": share.job,
        "columns": share.columns,
        "sameColumns": share.same,
        "sameValues": share.same_values,
        "share": round(share.share, 4),
        "valueShare": round(share.value_share, 4),
        "matches": [{"column": c, "other": o, "match": m} for c, o, m in share.matches],
    }


def _pair(pair: DuplicatePair) -> dict[str, Any]:
    return {
        "relation": pair.relation.value,
        "contained": pair.contained,
        "score": round(pair.score, 4),
        "jobs": [_side(pair.left), _side(pair.right)],
    }


def duplicates_answer(
    conn: Any,
    namespace: str | None,
    job: str | None,
    min_share: float,
    limit: int,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, Any]:
    """The ``/api/v2/duplicates`` answer on an open connection (also used by the CLI);
    only jobs and datasets inside ``scope`` take part."""
    wanted: set[str] | None = None
    job_id: int | None = None
    if job is not None:
        node = parse_node_id(job, "job", (NodeType.JOB,))
        require_node(conn, node, HiddenNodes(conn, scope))
        wanted = {str(node)}
        job_id = job_ids(conn, [(node.namespace, node.name)]).get((node.namespace, node.name))
        if job_id is None:
            return {"minShare": min_share, "totalCount": 0, "duplicates": []}
    # Only the jobs that may pair are read; the pairing below decides.
    columns = [
        OutputColumn(owner, dataset, field, frozenset(ColumnInput(*i) for i in inputs))
        for owner, dataset, field, inputs in duplicate_columns(
            conn, scope, min_share, job_id, namespace
        )
    ]
    if namespace is not None:
        in_namespace = {c.job for c in columns if NodeId.parse(c.job).namespace == namespace}
        wanted = in_namespace if wanted is None else wanted & in_namespace
    pairs = duplicates(columns, min_share, wanted)
    return {
        "minShare": min_share,
        "totalCount": len(pairs),
        "duplicates": [_pair(p) for p in pairs[:limit]],
    }
