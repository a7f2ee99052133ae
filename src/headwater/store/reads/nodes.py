"""Per-node facts for lineage answers: does a node exist, and a short summary of each.

Summaries are what ``/api/v2/lineage`` puts in a node's ``data``: enough to label
it (names, the version current at the asked time, a run's state), batched so a
graph of any size costs a few queries per node type.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.graph.model import NodeId, NodeType
from headwater.store import tables as t
from headwater.store.reads.common import aware, chunks, dataset_ids, job_ids, naive
from headwater.store.reads.lineage import job_versions_at
from headwater.store.reads.runs import MARQUEZ_RUN_STATES, run_rows

__all__ = ["field_types", "node_summaries", "require_node"]

_ds, _dv, _f = t.datasets, t.dataset_versions, t.fields


def require_node(conn: sa.Connection, node: NodeId) -> None:
    """Raise :class:`NotFoundError` unless ``node`` exists in the store."""
    if node.type is NodeType.RUN:
        if not run_rows(conn, [node.name]):
            raise NotFoundError(f"run '{node.name}' not found")
        return
    if node.type is NodeType.JOB:
        if not job_ids(conn, [(node.namespace, node.name)]):
            raise NotFoundError(f"job '{node.name}' not found in namespace '{node.namespace}'")
        return
    ids = dataset_ids(conn, [(node.namespace, node.name)])
    if not ids:
        raise NotFoundError(f"dataset '{node.name}' not found in namespace '{node.namespace}'")
    dataset_id = next(iter(ids.values()))
    if node.type is NodeType.DATASET_FIELD:
        found = conn.execute(
            sa.select(_f.c.id).where(_f.c.dataset_id == dataset_id, _f.c.name == node.field)
        ).first()
        in_lineage = conn.execute(
            sa.select(t.column_lineage.c.id).where(
                sa.or_(
                    sa.and_(
                        t.column_lineage.c.target_dataset_id == dataset_id,
                        t.column_lineage.c.target_field == node.field,
                    ),
                    sa.and_(
                        t.column_lineage.c.source_dataset_id == dataset_id,
                        t.column_lineage.c.source_field == node.field,
                    ),
                )
            ).limit(1)
        ).first()
        if found is None and in_lineage is None:
            raise NotFoundError(f"field '{node.field}' not found in dataset '{node.name}'")
    if node.version is not None:
        version = conn.execute(
            sa.select(_dv.c.id).where(_dv.c.dataset_id == dataset_id, _dv.c.uuid == node.version)
        ).first()
        if version is None:
            raise NotFoundError(f"version '{node.version}' of dataset '{node.name}' not found")


def field_types(conn: sa.Connection, fields: Sequence[NodeId]) -> dict[str, str | None]:
    """The current type of each ``datasetField`` node (absent when the schema lacks it)."""
    ids = dataset_ids(conn, [(f.namespace, f.name) for f in fields])
    key_of = {i: k for k, i in ids.items()}
    result: dict[str, str | None] = {}
    for batch in chunks(list(key_of)):
        for dataset_id, name, field_type in conn.execute(
            sa.select(_f.c.dataset_id, _f.c.name, _f.c.type).where(_f.c.dataset_id.in_(batch))
        ):
            namespace, dataset = key_of[dataset_id]
            result[f"datasetField:{namespace}:{dataset}:{name}"] = field_type
    return result


def _dataset_versions_at(
    conn: sa.Connection, ids: Sequence[int], as_of: datetime
) -> dict[int, str]:
    ranked = (
        sa.select(
            _dv.c.dataset_id,
            _dv.c.uuid,
            sa.func.row_number()
            .over(
                partition_by=_dv.c.dataset_id,
                order_by=(_dv.c.updated_at.desc(), _dv.c.uuid.desc()),
            )
            .label("rank"),
        )
        .where(_dv.c.dataset_id.in_(ids), _dv.c.updated_at <= naive(as_of))
        .subquery()
    )
    query = sa.select(ranked.c.dataset_id, ranked.c.uuid).where(ranked.c.rank == 1)
    return dict(conn.execute(query).all())


def node_summaries(
    conn: sa.Connection, node_ids: Sequence[str], as_of: datetime | None = None
) -> dict[str, dict[str, Any]]:
    """A small ``data`` dict per node id; versions are those current at ``as_of``."""
    by_type: dict[NodeType, list[tuple[str, NodeId]]] = defaultdict(list)
    for node_id in node_ids:
        parsed = NodeId.parse(node_id)
        by_type[parsed.type].append((node_id, parsed))
    result: dict[str, dict[str, Any]] = {}

    datasets = by_type[NodeType.DATASET]
    if datasets:
        ids = dataset_ids(conn, [(n.namespace, n.name) for _, n in datasets])
        current: dict[int, str | None] = {}
        for batch in chunks(list(ids.values())):
            if as_of is None:
                current.update(
                    conn.execute(
                        sa.select(_ds.c.id, _ds.c.current_version_uuid).where(_ds.c.id.in_(batch))
                    ).all()
                )
            else:
                current.update(_dataset_versions_at(conn, batch, as_of))
        for node_id, n in datasets:
            dataset_id = ids.get((n.namespace, n.name))
            version = n.version or (current.get(dataset_id) if dataset_id is not None else None)
            result[node_id] = {"namespace": n.namespace, "name": n.name, "version": version}

    jobs = by_type[NodeType.JOB]
    if jobs:
        versions = job_versions_at(conn, [(n.namespace, n.name) for _, n in jobs], as_of)
        for node_id, n in jobs:
            result[node_id] = {
                "namespace": n.namespace,
                "name": n.name,
                "version": versions.get((n.namespace, n.name)),
            }

    runs = by_type[NodeType.RUN]
    if runs:
        rows = {row.uuid: row for row in run_rows(conn, [n.name for _, n in runs])}
        for node_id, n in runs:
            row = rows.get(n.name)
            result[node_id] = {
                "runId": n.name,
                "job": f"job:{row.namespace}:{row.job_name}" if row else None,
                "state": MARQUEZ_RUN_STATES.get(row.state or "", "NEW") if row else None,
                "startedAt": aware(row.started_at) if row else None,
                "endedAt": aware(row.ended_at) if row else None,
            }

    fields = by_type[NodeType.DATASET_FIELD]
    if fields:
        types = field_types(conn, [n for _, n in fields])
        for node_id, n in fields:
            result[node_id] = {
                "namespace": n.namespace,
                "dataset": n.name,
                "field": n.field,
                "type": types.get(node_id),
            }
    return result
