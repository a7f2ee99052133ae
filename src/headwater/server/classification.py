"""Tags and their propagation as of a time: the store's facts through the graph's walk.

:func:`classify` reads what propagation needs at ``as_of``
(:mod:`headwater.store.reads.classification`) and walks it
(:func:`headwater.graph.tags.propagate`). Nothing is materialised: the answer
is computed per request from the current column lineage of each job, the tags,
the blocks and the definitions, so a new job that copies a PII column makes the
copy PII as soon as its event is stored, and a new run of a job that stops
reading the column (or a new block) retracts it, with nothing to rebuild. The
walk visits the whole tagged part of the graph, bounded by ``max_nodes``.

The answers' shapes (:func:`node_answer`, :func:`datasets_answer`,
:func:`compliance_answer`) are shared by the API and the CLI's ``--db``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from headwater.graph.model import NodeId, NodeType
from headwater.graph.tags import (
    DEFAULT_PROPAGATING,
    Block,
    ColumnEdge,
    Propagated,
    Propagation,
    Seed,
    Stop,
    propagate,
    propagates,
)
from headwater.store.reads import classification as reads
from headwater.store.reads.common import aware
from headwater.store.reads.scope import EVERYTHING, NamespaceScope

__all__ = [
    "Classified",
    "classify",
    "compliance_answer",
    "datasets_answer",
    "definitions_answer",
    "explain",
    "node_answer",
    "parts",
]


@dataclass(frozen=True, slots=True)
class Classified:
    """Everything known about tags at one time."""

    as_of: datetime | None
    direct: tuple[reads.TagRow, ...]
    propagation: Propagation
    definitions: dict[str, bool]


def parts(node: str) -> tuple[str, str, str]:
    """(dataset node id, dataset name, field) of a stored dataset or column node id.

    Stored ids are built from whatever names producers sent, so one the node-id
    parser refuses (an empty field name) is split by its last colon instead of
    failing the answer.
    """
    try:
        parsed = NodeId.parse(node)
        return str(parsed.dataset_id), parsed.name, parsed.field or ""
    except ValueError:
        kind, _, rest = node.partition(":")
        if kind == "datasetField":
            rest, _, field = rest.rpartition(":")
        else:
            field = ""
        return f"dataset:{rest}", rest.rpartition(":")[2], field


def _dataset_of(node: str) -> str:
    return parts(node)[0]


def _short(node: str) -> str:
    """``/raw/customers.email`` for a column, the name for a dataset or a job."""
    if node.startswith("job:"):
        try:
            return NodeId.parse(node).name
        except ValueError:
            return node.removeprefix("job:")
    _, name, field = parts(node)
    return f"{name}.{field}" if field else name


def classify(conn: Any, as_of: datetime | None, max_nodes: int,
             scope: NamespaceScope = EVERYTHING) -> Classified:
    """Direct and propagated tags at ``as_of`` (now when None).

    With a limited ``scope`` the tags, column edges and blocks are those inside it
    (an edge with both columns and its job inside), so tags propagate as they would
    in a store holding only those namespaces.
    """
    definitions = reads.propagation_flags(conn, as_of)
    direct = tuple(sorted((row for row in reads.tag_assignments(conn, as_of)
                           if scope.sees_node(row.subject)),
                          key=lambda r: (r.subject, r.tag)))
    edges = [ColumnEdge(e.source, e.target, e.job, e.transformation_type,
                        e.transformation_subtype, e.masking)
             for e in reads.column_edges(conn, as_of)
             if all(scope.sees_node(node) for node in (e.source, e.target, e.job) if node)]
    seeds: list[Seed] = []
    dataset_tags = [row for row in direct if row.subject.startswith("dataset:")
                    and propagates(row.tag, definitions)]
    # A tag on a dataset is on each of its columns: those its schema names and
    # those lineage reads from it.
    columns: dict[str, set[str]] = {row.subject: set() for row in dataset_tags}
    for dataset, names in reads.dataset_columns(conn, columns).items():
        columns[dataset].update(f"datasetField:{dataset.removeprefix('dataset:')}:{n}"
                                for n in names)
    for edge in edges:
        dataset = _dataset_of(edge.source)
        if dataset in columns:
            columns[dataset].add(edge.source)
    for row in direct:
        if not propagates(row.tag, definitions):
            continue
        if row.subject.startswith("datasetField:"):
            seeds.append(Seed(row.subject, row.tag, row.subject))
        else:
            seeds.extend(Seed(column, row.tag, row.subject) for column in columns[row.subject])
    blocks = [Block(b.id, b.job, b.source, b.target, b.tag)
              for b in reads.blocks(conn, as_of, scope=scope)]
    return Classified(as_of, direct, propagate(seeds, edges, blocks, max_nodes=max_nodes),
                      definitions)


def explain(item: Propagated) -> str:
    """``PII from raw.customers.email via job silver.customers, transformation IDENTITY``."""
    hops = "; then ".join(
        f"job {_short(hop.job)}, transformation "
        f"{hop.transformation_subtype or hop.transformation_type or 'unknown'}"
        + (f" into {_short(hop.target)}" if i < len(item.path) - 1 else "")
        for i, hop in enumerate(item.path))
    return f"{item.tag} from {_short(item.origin)} via {hops}"


def _propagated(item: Propagated) -> dict[str, Any]:
    return {**item.as_dict(), "explanation": explain(item)}


def _direct(row: reads.TagRow) -> dict[str, Any]:
    return {"tag": row.tag, "subject": row.subject, "source": row.source,
            "createdAt": aware(row.created_at)}


def node_answer(state: Classified, node: NodeId, fields: Iterable[str]) -> dict[str, Any]:
    """The classification of a dataset (each of its ``fields`` and the columns
    lineage reached) or of one column."""
    dataset = str(node.dataset_id)
    prefix = f"datasetField:{dataset.removeprefix('dataset:')}:"
    if node.type is NodeType.DATASET_FIELD:
        wanted = [str(node)]
    else:
        found = {item.column for item in state.propagation.tags if item.column.startswith(prefix)}
        found |= {row.subject for row in state.direct if row.subject.startswith(prefix)}
        wanted = sorted(found | {prefix + name for name in fields})
    columns = []
    for column in wanted:
        propagated = [_propagated(item) for item in state.propagation.of(column)]
        stopped = [stop.as_dict() for stop in state.propagation.stops
                   if stop.edge.target == column]
        columns.append({
            "nodeId": column, "field": parts(column)[2],
            "tags": sorted({row.tag for row in state.direct if row.subject == column}),
            "propagated": propagated, "stopped": stopped,
        })
    direct = [_direct(row) for row in state.direct
              if row.subject == dataset or row.subject in set(wanted)]
    return {
        "nodeId": str(node), "asOf": aware(state.as_of),
        "tags": direct,
        "propagatedTags": sorted({item["tag"] for col in columns for item in col["propagated"]}),
        "columns": columns, "truncated": state.propagation.truncated,
    }


def datasets_answer(state: Classified) -> dict[str, Any]:
    """Per dataset with any: its direct tags (on it or a column) and propagated tags,
    and the same per column."""
    datasets: dict[str, tuple[set[str], set[str]]] = {}
    columns: dict[str, dict[str, tuple[set[str], set[str]]]] = {}

    def add(subject: str, tag: str, side: int) -> None:
        dataset = _dataset_of(subject)
        datasets.setdefault(dataset, (set(), set()))[side].add(tag)
        if subject != dataset:
            columns.setdefault(dataset, {}).setdefault(subject, (set(), set()))[side].add(tag)

    for row in state.direct:
        add(row.subject, row.tag, 0)
    for item in state.propagation.tags:
        add(item.column, item.tag, 1)
    return {"asOf": aware(state.as_of), "truncated": state.propagation.truncated,
            "datasets": [{"nodeId": node, "tags": sorted(own), "propagatedTags": sorted(reached),
                          "columns": [{"nodeId": column, "tags": sorted(c_own),
                                       "propagatedTags": sorted(c_reached)}
                                      for column, (c_own, c_reached)
                                      in sorted(columns.get(node, {}).items())]}
                         for node, (own, reached) in sorted(datasets.items())]}


def definitions_answer(stored: list[dict[str, Any]]) -> dict[str, Any]:
    """The users' definitions, and the default list's tags no definition overrides."""
    items = [{"name": row["name"], "propagates": row["propagates"],
              "description": row["description"], "default": False,
              "updatedAt": aware(row["updated_at"])} for row in stored]
    named = {row["name"].casefold() for row in stored}
    items += [{"name": name.upper() if len(name) <= 4 else name, "propagates": True,
               "description": "propagates by default", "default": True, "updatedAt": None}
              for name in sorted(DEFAULT_PROPAGATING) if name not in named]
    return {"definitions": sorted(items, key=lambda d: d["name"].casefold())}


def compliance_answer(conn: Any, state: Classified, tag: str | None,
                      node: NodeId | None) -> dict[str, Any]:
    """Where ``tag`` (or the tags of column/dataset ``node``) flows: every column
    reached, each dataset and job on the way with its owners, and every stop."""
    def at(subject: str) -> bool:
        assert node is not None
        return subject == str(node) or (node.type is NodeType.DATASET
                                        and _dataset_of(subject) == str(node))

    def chosen(item_tag: str, origin: str, path: Iterable[ColumnEdge]) -> bool:
        if tag is not None and item_tag != tag:
            return False
        # From the node, or through it (a column the tag reached and left again).
        return node is None or at(origin) or any(at(hop.source) or at(hop.target)
                                                 for hop in path)

    flows = [item for item in state.propagation.tags if chosen(item.tag, item.origin, item.path)]
    stops: list[Stop] = [s for s in state.propagation.stops
                        if chosen(s.tag, s.origin, [s.edge])]
    datasets: set[str] = set()
    for item in flows:
        datasets.add(_dataset_of(item.origin))
        datasets.update(_dataset_of(hop.target) for hop in item.path)
    jobs = {hop.job for item in flows for hop in item.path} | {s.edge.job for s in stops}
    datasets |= {_dataset_of(s.origin) for s in stops}
    owners = reads.owners_at(conn, datasets | jobs, state.as_of)
    return {
        "asOf": aware(state.as_of), "tag": tag, "nodeId": str(node) if node else None,
        "flows": [{**_propagated(item), "dataset": _dataset_of(item.column),
                   "jobs": sorted({hop.job for hop in item.path})} for item in flows],
        "stops": [stop.as_dict() for stop in stops],
        "datasets": [{"nodeId": d, "owners": owners[d]} for d in sorted(datasets)],
        "jobs": [{"nodeId": j, "owners": owners[j]} for j in sorted(jobs)],
        "truncated": state.propagation.truncated,
    }
