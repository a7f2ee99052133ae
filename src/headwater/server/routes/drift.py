"""``GET /api/v2/drift``: schema drift of datasets, of two kinds.

A ``version`` drift is one pair of consecutive versions of a dataset whose
schemas differ, with every change classified breaking or compatible for a
consumer of the older schema (the rules: :mod:`headwater.graph.drift`). A
``contract`` drift is a consumer job that declares it reads a schema the
dataset's latest version is not written with (the rules:
:mod:`headwater.graph.contract`). Both are derived when the facts arrive,
whatever their order (:mod:`headwater.store.drift`, :mod:`headwater.store.contract`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, Field

from headwater.graph.contract import ContractChangeKind
from headwater.graph.drift import ChangeKind
from headwater.graph.model import NodeType
from headwater.server.deps import StoreDep
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
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
from headwater.store.reads.common import dataset_ids
from headwater.store.reads.drift import DriftFilter, DriftKind, drifts
from headwater.store.reads.nodes import require_node
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["DriftList", "drift_answer", "router"]

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


class Drift(BaseModel):
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


class DriftList(BaseModel):
    totalCount: int
    drifts: list[Drift]


@router.get("/api/v2/drift", response_model=DriftList, responses=error_responses(404),
            tags=["drift"])
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
) -> dict[str, Any]:
    """Schema drifts, newest first, each with its changes."""
    with connection(store) as conn:
        return drift_answer(conn, since, until, dataset, breaking, limit, offset, scope, kind)


def drift_answer(conn: Any, since: str | None, until: str | None,
                 dataset: str | None, breaking: bool | None, limit: int,
                 offset: int, scope: NamespaceScope = EVERYTHING,
                 kind: DriftKind | None = None) -> dict[str, Any]:
    """The ``/api/v2/drift`` answer on an open connection (also used by the CLI); only
    datasets inside ``scope`` (one outside is 404 like a missing one)."""
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
    return {"totalCount": total, "drifts": rows}
