"""``GET /api/v2/drift``: schema drift of datasets, of two kinds.

A ``version`` drift is one pair of consecutive versions of a dataset whose
schemas differ, with every change classified breaking or compatible for a
consumer of the older schema (the rules: :mod:`headwater.graph.drift`). A
``contract`` drift is a consumer job that declares it reads a schema the
dataset's latest version is not written with (the rules:
:mod:`headwater.graph.contract`). Both are derived when the facts arrive,
whatever their order (:mod:`headwater.store.drift`, :mod:`headwater.store.contract`).

Each drift carries its impact (:mod:`headwater.graph.drift_impact`): the columns,
datasets and jobs its changes reach through column lineage as it stood when the
change happened, each direct or indirect with one shortest path. It is computed
per request, per drift of the page (``impact=false`` leaves it out).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Query
from fastapi.responses import Response
from pydantic import BaseModel, Field

from headwater.errors import NotFoundError
from headwater.graph.contract import ContractChangeKind
from headwater.graph.drift import ChangeKind
from headwater.graph.drift_impact import (
    DRIFT_CSV_COLUMNS,
    DriftSubject,
    answer_nodes,
    drift_impact,
    to_csv,
)
from headwater.graph.model import NodeType
from headwater.server.deps import StoreDep
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.routes.impact import ImpactNode, ImpactSummary
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    node_id_query,
    page,
    parse_node_id,
    parse_time,
    read_router,
    time_query,
)
from headwater.store.reads.column_lineage import ColumnLineage
from headwater.store.reads.common import Page, dataset_ids
from headwater.store.reads.drift import DriftFilter, DriftKind, drifts, parse_drift_id
from headwater.store.reads.nodes import require_node
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.table_lineage import TableLineage
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["DriftImpactQuery", "DriftList", "drift_answer", "one_drift", "router", "with_impact"]

router = read_router()


class DriftChange(BaseModel):
    kind: ChangeKind | ContractChangeKind = Field(
        description="What changed; the module docs of headwater.graph.drift (version drift) "
        "and headwater.graph.contract (contract drift) give each kind's rule.")
    path: str = Field(description="The field, dotted for nested fields (`address.city`).")
    newPath: str | None = Field(None, description="The new name of a possible rename.")
    old: str | None = Field(None, description="The old type (or `nullable`/`required`); in a "
                            "contract drift, what the producer writes.")
    new: str | None = Field(None, description="The new type (or `nullable`/`required`); in a "
                            "contract drift, what the consumer declares.")
    breaking: bool


class Consumer(BaseModel):
    jobId: str = Field(description="The consumer job's node id.")
    namespace: str
    name: str
    run: str = Field(description="The run whose declared schema is the job's latest.")


class DriftImpact(BaseModel):
    asOf: datetime = Field(description="The lineage walked is the one known at this time, "
                           "the drift's changedAt.")
    depth: int
    maxNodes: int
    truncated: bool = Field(description="maxNodes cut the answer.")
    nodes: list[ImpactNode] = Field(description="Every column, dataset and job reached, as "
                                    "GET /api/v2/impact lists them, each with its path.")
    summary: ImpactSummary


class Drift(BaseModel):
    id: str = Field(description="`version:{version}` or `contract:{run}:{version}`; "
                    "GET /api/v2/drift/{driftId} reads it alone.")
    kind: DriftKind = Field(description="`version`: the dataset's schema changed between two "
                            "versions; `contract`: a consumer declares a schema the dataset is "
                            "not written with.")
    datasetId: str = Field(description="The dataset's node id.")
    namespace: str
    name: str
    version: str = Field(description="The newer version; in a contract drift, the latest "
                         "version with a schema, the one the declaration is compared with.")
    previousVersion: str | None = Field(description="The version before it that has a schema "
                                        "(null for a contract drift).")
    changedAt: datetime = Field(description="The newer version's createdAt (UTC); in a contract "
                                "drift, the later of the version's and the declaration's time.")
    breaking: bool = Field(description="Whether any change is breaking.")
    changes: list[DriftChange]
    consumer: Consumer | None = Field(description="The consumer job of a contract drift "
                                      "(null for a version drift).")
    impact: DriftImpact | None = Field(None, description="What the changes reach downstream "
                                       "(left out with impact=false).")


class DriftList(BaseModel):
    totalCount: int
    drifts: list[Drift]


class DriftImpactQuery(BaseModel):
    """How far each drift's impact is walked (``impact=False``: not at all)."""

    impact: bool = True
    depth: int = 10
    max_nodes: int = 1_000


_ImpactFlag = Annotated[bool, Query(
    description="Compute each drift's impact (false leaves it out: a cheaper feed).")]
_ImpactDepth = Annotated[int, Query(ge=0, le=100, description="Jobs the impact walk "
                                    "crosses, 0-100.")]
_MaxNodes = Annotated[int, Query(ge=1, le=100_000, description="Impacted nodes per drift "
                                 "before the impact says truncated.")]


_CSV_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The drifts: JSON, or with `format=csv` one CSV row per (drift, "
        f"impacted node) ({', '.join(DRIFT_CSV_COLUMNS)}).",
        "content": {"text/csv": {"schema": {"type": "string"}}},
    }
}


@router.get("/api/v2/drift", response_model=DriftList,
            responses={**_CSV_RESPONSE, **error_responses(404)}, tags=["drift"])
def get_drift(
    store: StoreDep,
    scope: ScopeDep,
    since: Annotated[str | None, time_query("Drifts at or after this time.")] = None,
    until: Annotated[str | None, time_query("Drifts before this time.")] = None,
    dataset: Annotated[str | None, node_id_query(NodeType.DATASET)] = None,
    breaking: Annotated[bool | None, Query(
        description="true: breaking drifts only; false: compatible ones only.")] = None,
    kind: Annotated[DriftKind | None, Query(
        description="`version` or `contract` drifts only (both when left out).")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
    impact: _ImpactFlag = True,
    impactDepth: _ImpactDepth = 10,  # noqa: N803 - the API's camelCase names
    maxNodes: _MaxNodes = 1_000,  # noqa: N803
    format: Annotated[Literal["json", "csv"], Query()] = "json",  # noqa: A002
) -> Any:
    """Schema drifts, newest first, each with its changes and what they reach downstream."""
    query = DriftImpactQuery(impact=impact, depth=impactDepth, max_nodes=maxNodes)
    with connection(store) as conn:
        answer = drift_answer(conn, since, until, dataset, breaking, limit, offset, scope, kind,
                              query)
    if format == "csv":
        return Response(to_csv(DriftList.model_validate(answer).model_dump(mode="json")),
                        media_type="text/csv")
    return answer


@router.get("/api/v2/drift/{driftId}", response_model=Drift, responses=error_responses(404),
            tags=["drift"])
def get_one_drift(
    driftId: str,  # noqa: N803
    store: StoreDep,
    scope: ScopeDep,
    impactDepth: _ImpactDepth = 10,  # noqa: N803
    maxNodes: _MaxNodes = 1_000,  # noqa: N803
) -> dict[str, Any]:
    """One drift by its `id`, with its impact; percent-encode it as one path segment."""
    with connection(store) as conn:
        found = one_drift(conn, driftId, scope, DriftImpactQuery(depth=impactDepth,
                                                                  max_nodes=maxNodes))
    if found is None:
        raise NotFoundError(f"drift '{driftId}' not found")
    return found


def one_drift(conn: Any, drift_id: str, scope: NamespaceScope = EVERYTHING,
              query: DriftImpactQuery | None = None) -> dict[str, Any] | None:
    """The drift ``drift_id`` names with its impact, or None (also when outside ``scope``)."""
    where = parse_drift_id(drift_id)
    if where is None:
        return None
    where = DriftFilter(scope=scope, kind=where.kind, version_uuid=where.version_uuid,
                        run_uuid=where.run_uuid)
    rows, _ = drifts(conn, where, Page(limit=1, offset=0))
    if not rows:
        return None
    return with_impact(conn, rows, query or DriftImpactQuery(), scope)[0]


def with_impact(conn: Any, rows: list[dict[str, Any]], query: DriftImpactQuery,
                scope: NamespaceScope = EVERYTHING) -> list[dict[str, Any]]:
    """``rows`` (drift feed items), each given its ``impact`` when ``query`` asks for it:
    the walk over the lineage known at the drift's time, inside ``scope``."""
    if not query.impact:
        return rows
    hidden = HiddenNodes(conn, scope)
    for row in rows:
        as_of = row["changedAt"]
        columns = ColumnLineage(conn, as_of, hidden, dataset_level=True)
        answer = drift_impact(DriftSubject.of(row), columns, TableLineage(conn, as_of, hidden),
                              query.depth, query.max_nodes)
        row["impact"] = {"asOf": as_of, "depth": query.depth, "maxNodes": query.max_nodes,
                         "truncated": answer.truncated, "nodes": answer_nodes(answer),
                         "summary": answer.summary()}
    return rows


def drift_answer(conn: Any, since: str | None, until: str | None,
                 dataset: str | None, breaking: bool | None, limit: int,
                 offset: int, scope: NamespaceScope = EVERYTHING,
                 kind: DriftKind | None = None,
                 query: DriftImpactQuery | None = None) -> dict[str, Any]:
    """The ``/api/v2/drift`` answer on an open connection (also used by the CLI); only
    datasets inside ``scope`` (one outside is 404 like a missing one). Without ``query``
    the drifts carry no impact."""
    where = DriftFilter(since=parse_time(since, "since"), until=parse_time(until, "until"),
                        breaking=breaking, scope=scope, kind=kind)
    if dataset is not None:
        node = parse_node_id(dataset, "dataset", (NodeType.DATASET,))
        if node.version:
            raise RequestError("dataset must name a dataset, not one of its versions",
                               field="query.dataset")
        require_node(conn, node, HiddenNodes(conn, scope))
        ids = dataset_ids(conn, [(node.namespace, node.name)])
        where = DriftFilter(where.since, where.until, next(iter(ids.values())), breaking, scope,
                            kind)
    rows, total = drifts(conn, where, page(limit, offset))
    rows = with_impact(conn, rows, query or DriftImpactQuery(impact=False), scope)
    return {"totalCount": total, "drifts": rows}
