"""Classification reads: a node's tags and propagated tags, every dataset's badges,
and the compliance report (JSON or CSV), each as of a time.

``GET /api/v2/classification?nodeId=`` — a dataset (its columns) or one column:
direct tags, propagated tags each with its provenance, and where a tag stopped
(masking or a block). ``GET /api/v2/classification/datasets`` — per dataset,
its tags and propagated tags (the graph's badges). ``GET /api/v2/compliance``
— where a tag, or the tags of a column or dataset, flow: every column, dataset,
job and owner on the way. The walk: :mod:`headwater.server.classification`.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Query
from fastapi.responses import Response

from headwater.graph.model import NodeId, NodeType
from headwater.server.classification import (
    classify,
    compliance_answer,
    datasets_answer,
    node_answer,
    parts,
)
from headwater.server.deps import StoreDep
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    ScopeDep,
    connection,
    node_id_query,
    parse_node_id,
    parse_time,
    read_router,
    time_query,
)
from headwater.store.reads.classification import dataset_columns
from headwater.store.reads.nodes import require_node
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["classification_answer", "compliance_csv", "compliance_report", "router"]

router = read_router()

#: The default and largest number of (column, tag, origin) answers of one walk.
MAX_NODES = 100_000

AsOf = Annotated[str | None, time_query(
    "Answer as of this ISO-8601 time (UTC when no offset): the lineage, tags and blocks "
    "in force then. Now when left out.")]
MaxNodes = Annotated[int, Query(ge=1, le=MAX_NODES, description=(
    "At most this many propagated (column, tag, origin) answers; past it the answer "
    "says truncated."))]
_NODE_TYPES = (NodeType.DATASET, NodeType.DATASET_FIELD)


def _when(as_of: str | None) -> datetime | None:
    return parse_time(as_of, "asOf")


def _node(conn: Any, value: str, field: str, scope: NamespaceScope) -> NodeId:
    node = parse_node_id(value, field, _NODE_TYPES)
    if node.version:
        raise RequestError(f"{field} must not name a version", field=f"query.{field}")
    require_node(conn, node.dataset_id, HiddenNodes(conn, scope))
    return node


def classification_answer(conn: Any, node_id: str, as_of: str | None, max_nodes: int,
                          scope: NamespaceScope = EVERYTHING) -> dict[str, Any]:
    """The ``/api/v2/classification`` answer on an open connection (also the CLI's)."""
    when = _when(as_of)
    node = _node(conn, node_id, "nodeId", scope)
    fields = dataset_columns(conn, [str(node.dataset_id)])[str(node.dataset_id)]
    return node_answer(classify(conn, when, max_nodes, scope), node, fields)


def compliance_report(conn: Any, tag: str | None, node_id: str | None, as_of: str | None,
                      max_nodes: int, scope: NamespaceScope = EVERYTHING) -> dict[str, Any]:
    """The ``/api/v2/compliance`` JSON answer on an open connection (also the CLI's)."""
    if not tag and not node_id:
        raise RequestError("name a tag or a nodeId to report on", field="query.tag")
    when = _when(as_of)
    node = _node(conn, node_id, "nodeId", scope) if node_id else None
    return compliance_answer(conn, classify(conn, when, max_nodes, scope), tag or None, node)


#: The CSV report's columns: one row per column a tag reached (``flow``) or per
#: edge where it stopped (``stop``).
CSV_COLUMNS = ("kind", "tag", "origin", "column", "dataset", "dataset_owners", "jobs",
               "job_owners", "path", "reason")


def compliance_csv(report: dict[str, Any]) -> str:
    """The compliance report as CSV (:data:`CSV_COLUMNS`); owners are ``name (type)``
    joined by ``; ``, a path's hops ``source -> target [job TYPE/SUBTYPE]``."""
    def owner(o: dict[str, Any]) -> str:
        return f"{o['name']} ({o['type']})" if o["type"] else o["name"]

    owners = {item["nodeId"]: "; ".join(owner(o) for o in item["owners"])
              for item in report["datasets"] + report["jobs"]}

    def hop(edge: dict[str, Any]) -> str:
        kind = "/".join(x for x in (edge["transformationType"], edge["transformationSubtype"])
                        if x)
        return f"{edge['source']} -> {edge['target']} [{edge['job']} {kind}]".rstrip()

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for flow in report["flows"]:
        jobs = flow["jobs"]
        writer.writerow(["flow", flow["tag"], flow["origin"], flow["column"], flow["dataset"],
                         owners.get(flow["dataset"], ""), "; ".join(jobs),
                         " | ".join(owners.get(j, "") for j in jobs),
                         " ; ".join(hop(edge) for edge in flow["path"]), ""])
    for stop in report["stops"]:
        edge = stop["edge"]
        dataset = parts(edge["target"])[0]
        reason = stop["reason"] + (f" (block {stop['block']})" if stop["block"] else "")
        writer.writerow(["stop", stop["tag"], stop["origin"], edge["target"], dataset,
                         owners.get(dataset, ""), edge["job"], owners.get(edge["job"], ""),
                         hop(edge), reason])
    return out.getvalue()


@router.get("/api/v2/classification", responses=error_responses(400, 404),
            tags=["classification"])
def get_classification(
    store: StoreDep,
    scope: ScopeDep,
    nodeId: Annotated[str, node_id_query(*_NODE_TYPES)],  # noqa: N803 - the API's name
    asOf: AsOf = None,  # noqa: N803
    maxNodes: MaxNodes = MAX_NODES,  # noqa: N803
) -> dict[str, Any]:
    """A dataset's or a column's tags: direct, propagated (with provenance), stopped."""
    with connection(store) as conn:
        return classification_answer(conn, nodeId, asOf, maxNodes, scope)


@router.get("/api/v2/classification/datasets", responses=error_responses(400),
            tags=["classification"])
def get_dataset_badges(store: StoreDep, scope: ScopeDep, asOf: AsOf = None,  # noqa: N803
                       maxNodes: MaxNodes = MAX_NODES) -> dict[str, Any]:  # noqa: N803
    """Each dataset with a tag or a propagated tag (on it or a column), for badges."""
    with connection(store) as conn:
        return datasets_answer(classify(conn, _when(asOf), maxNodes, scope))


_CSV_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The report: JSON, or with `format=csv` one row per flow or stop "
        f"({', '.join(CSV_COLUMNS)}).",
        "content": {"text/csv": {"schema": {"type": "string"}}},
    }
}


@router.get("/api/v2/compliance", responses={**_CSV_RESPONSE, **error_responses(400, 404)},
            tags=["classification"])
def get_compliance(
    store: StoreDep,
    scope: ScopeDep,
    tag: Annotated[str | None, Query(description="The tag whose flow to report.")] = None,
    nodeId: Annotated[str | None, node_id_query(*_NODE_TYPES)] = None,  # noqa: N803
    asOf: AsOf = None,  # noqa: N803
    format: Annotated[Literal["json", "csv"], Query(  # noqa: A002 - the API's name
        description="`json`, or `csv` (one row per flow or stop).")] = "json",
    maxNodes: MaxNodes = MAX_NODES,  # noqa: N803
) -> Any:
    """Where a tag, or a column's or dataset's tags, flow: every column, dataset,
    job and owner on the way, and every stop, as of a time."""
    with connection(store) as conn:
        report = compliance_report(conn, tag, nodeId, asOf, maxNodes, scope)
    if format == "csv":
        return Response(compliance_csv(report), media_type="text/csv",
                        headers={"Content-Disposition": 'attachment; filename="compliance.csv"'})
    return report
