"""Marquez's lineage reads: ``GET /api/v1/lineage`` and ``GET /api/v1/column-lineage``.

The shapes are Marquez's (``{"graph": [{id, type, data, inEdges, outEdges}]}``);
the walk is not. Marquez walks the graph *undirected*, so a dataset's lineage also
holds its siblings (other outputs of the jobs that read it, and everything
upstream of those). headwater answers with the directed walk in both directions —
what the node comes from plus what it feeds — and no sideways steps
(see docs/api.md).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from starlette.requests import Request
from starlette.responses import Response

from headwater.errors import NotFoundError
from headwater.graph.columns import column_lineage
from headwater.graph.model import Direction, Graph, NodeId, NodeType
from headwater.graph.traverse import walk
from headwater.server.deps import FragmentsDep, StoreDep
from headwater.server.json_answers import Fragment, dump, stitched_answer
from headwater.server.lineage_responses import LineageGraph, UpstreamRunLineage
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    ScopeDep,
    connection,
    node_id_query,
    parse_node_id,
    read_router,
)
from headwater.server.routes.runs import run_id_parameter, run_id_query
from headwater.store.reads import datasets as dataset_reads
from headwater.store.reads import jobs as job_reads
from headwater.store.reads import runs as run_reads
from headwater.store.reads.column_lineage import ColumnLineage
from headwater.store.reads.nodes import field_types, pinned_version, require_node
from headwater.store.reads.table_lineage import TableLineage
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["MAX_V1_NODES", "router"]

router = read_router()

#: v1 has no maxNodes parameter; this bounds its answer all the same.
MAX_V1_NODES = 5_000

Depth = Annotated[int, Query(ge=0, le=100, description="How many edges to walk.")]
# Each route names a node (or run) that may not exist.
_READ: dict[str, Any] = {"tags": ["lineage"], "responses": error_responses(404)}


def _marquez_nodes(graph: Graph, node_type: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    incoming: dict[str, list[dict[str, str]]] = {n.id: [] for n in graph.nodes}
    outgoing: dict[str, list[dict[str, str]]] = {n.id: [] for n in graph.nodes}
    # Each (origin, destination) pair once, however many edges join the two.
    pairs = sorted({(edge.upstream, edge.downstream) for edge in graph.edges})
    for upstream, downstream in pairs:
        pair = {"origin": upstream, "destination": downstream}
        outgoing[upstream].append(pair)
        incoming[downstream].append(pair)
    return [
        {
            "id": node.id,
            "type": node_type if node_type else node.type.value,
            "data": data.get(node.id),
            "inEdges": incoming[node.id],
            "outEdges": outgoing[node.id],
        }
        for node in sorted(graph.nodes, key=lambda n: n.id)
    ]


def _lineage_parts(graph: Graph, data: dict[str, Fragment]) -> list[bytes | Fragment]:
    """The parts of ``{"graph": [...]}``, as :func:`_marquez_nodes` would write it, with
    each node's ``data`` its record's fragment (null for a node without a record)."""
    incoming: dict[str, list[dict[str, str]]] = {n.id: [] for n in graph.nodes}
    outgoing: dict[str, list[dict[str, str]]] = {n.id: [] for n in graph.nodes}
    for upstream, downstream in sorted({(e.upstream, e.downstream) for e in graph.edges}):
        pair = {"origin": upstream, "destination": downstream}
        outgoing[upstream].append(pair)
        incoming[downstream].append(pair)
    parts: list[bytes | Fragment] = [b'{"graph":[']
    for index, node in enumerate(sorted(graph.nodes, key=lambda n: n.id)):
        head = b'{"id":' + dump(node.id) + b',"type":' + dump(node.type.value) + b',"data":'
        tail = (
            b',"inEdges":' + dump(incoming[node.id])
            + b',"outEdges":' + dump(outgoing[node.id]) + b"}"
        )
        fragment = data.get(node.id)
        if fragment is None:
            parts.append((b"," if index else b"") + head + b"null" + tail)
        else:
            parts += [(b"," if index else b"") + head, fragment, tail]
    parts.append(b"]}")
    return parts


@router.get("/api/v1/lineage", response_model=LineageGraph, **_READ)
def get_lineage(
    nodeId: Annotated[str, node_id_query(NodeType.DATASET, NodeType.JOB)],  # noqa: N803
    request: Request,
    store: StoreDep,
    scope: ScopeDep,
    fragments: FragmentsDep,
    depth: Depth = 20,
) -> Response:
    """The dataset/job graph upstream and downstream of ``nodeId``, ``depth`` edges deep."""
    node = parse_node_id(nodeId, allowed=(NodeType.DATASET, NodeType.JOB))
    with connection(store) as conn:
        epoch = fragments.epoch(conn)  # before the rows (server/record_fragments.py)
        hidden = HiddenNodes(conn, scope)
        require_node(conn, node, hidden)
        graph = walk(TableLineage(conn, None, hidden), str(node), Direction.BOTH, depth,
                     MAX_V1_NODES)
        parsed = [NodeId.parse(n.id) for n in graph.nodes]
        dataset_rows = dataset_reads.dataset_rows_by_keys(
            conn, [(p.namespace, p.name) for p in parsed if p.type is NodeType.DATASET], scope
        )
        job_rows = job_reads.job_rows_by_keys(
            conn, [(p.namespace, p.name) for p in parsed if p.type is NodeType.JOB], scope
        )
        # Each record's JSON as built once per revision of its rows (server/record_fragments.py).
        data: dict[str, Fragment] = {}
        for row, fragment in zip(
            dataset_rows, fragments.datasets(conn, epoch, dataset_rows, scope), strict=True
        ):
            data[f"dataset:{row.namespace}:{row.name}"] = fragment
        for row, fragment in zip(
            job_rows, fragments.jobs(conn, epoch, job_rows, scope), strict=True
        ):
            data[f"job:{row.namespace}:{row.name}"] = fragment
    return stitched_answer(_lineage_parts(graph, data), request)


@router.get("/api/v1/column-lineage", response_model=LineageGraph, **_READ)
def get_column_lineage(
    nodeId: Annotated[  # noqa: N803 - Marquez's parameter names
        str, node_id_query(NodeType.DATASET, NodeType.DATASET_FIELD, NodeType.JOB)
    ],
    store: StoreDep,
    scope: ScopeDep,
    depth: Depth = 20,
    withDownstream: bool = False,  # noqa: N803
) -> dict[str, Any]:
    """Column lineage of a dataset field, a dataset (all its fields) or a job (its outputs).

    Upstream only unless ``withDownstream=true``, as in Marquez. A ``#version``
    suffix pins a dataset version: the edges known at that version's time, from the
    fields that version had.
    """
    node = parse_node_id(nodeId, allowed=(NodeType.DATASET, NodeType.DATASET_FIELD, NodeType.JOB))
    direction = Direction.BOTH if withDownstream else Direction.UPSTREAM
    with connection(store) as conn:
        hidden = HiddenNodes(conn, scope)
        require_node(conn, NodeId(node.type, node.namespace, node.name, node.field), hidden)
        as_of, version_fields = (
            pinned_version(conn, node) if node.version and node.type is not NodeType.JOB
            else (None, [])
        )
        source = ColumnLineage(conn, as_of, hidden)
        if node.type is NodeType.DATASET and node.version:
            roots = [str(NodeId.dataset_field(node.namespace, node.name, f))
                     for f in version_fields]
            graph = walk(source, roots, direction, depth, MAX_V1_NODES)
        elif node.type is NodeType.JOB:
            job = job_reads.get_job(conn, node.namespace, node.name, scope)
            outputs = [f"dataset:{d['namespace']}:{d['name']}" for d in job["outputs"]]
            roots = sorted(source.fields_of(outputs))
            graph = walk(source, roots, direction, depth, MAX_V1_NODES)
        else:
            root = (
                node.dataset_id
                if node.type is NodeType.DATASET
                else NodeId.dataset_field(node.namespace, node.name, node.field)
            )
            graph = column_lineage(source, str(root), direction, depth, MAX_V1_NODES)
        types = field_types(conn, [NodeId.parse(n.id) for n in graph.nodes])
    data: dict[str, Any] = {}
    for n in graph.nodes:
        parsed = NodeId.parse(n.id)
        inputs = graph.in_edges(n.id)
        first = inputs[0].transformations[0] if inputs and inputs[0].transformations else None
        data[n.id] = {
            "namespace": parsed.namespace,
            "dataset": parsed.name,
            "field": parsed.field,
            "fieldType": types.get(n.id),
            "transformationDescription": first.description if first else None,
            "transformationType": first.type if first else None,
            "inputFields": [
                {
                    "namespace": (up := NodeId.parse(e.upstream)).namespace,
                    "dataset": up.name,
                    "field": up.field,
                    "transformationDescription": (
                        e.transformations[0].description if e.transformations else None
                    ),
                    "transformationType": e.transformations[0].type if e.transformations else None,
                }
                for e in sorted(inputs, key=lambda e: e.upstream)
            ],
        }
    return {"graph": _marquez_nodes(graph, "DATASET_FIELD", data)}


@router.get("/api/v1/runlineage/upstream", response_model=UpstreamRunLineage, **_READ)
def get_run_lineage_upstream(
    runId: Annotated[str, run_id_query()],  # noqa: N803 - Marquez's parameter name
    store: StoreDep,
    scope: ScopeDep,
    depth: Depth = 20,
) -> dict[str, Any]:
    """The run and, ``depth`` hops up, the runs that produced the dataset versions it read.

    Each hop is resolved with headwater's rule for which version a run read (the
    latest written before the run listed the input), as the run record shows.
    """
    run_id = run_id_parameter(runId, "query.runId")
    with connection(store) as conn:
        if not run_reads.run_rows(conn, [run_id], scope):
            raise NotFoundError(f"run '{run_id}' not found")
        return {"runs": run_reads.upstream_runs(conn, run_id, depth, scope)}
