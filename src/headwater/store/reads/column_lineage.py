"""Column edges for :func:`headwater.graph.traverse.walk`: ``datasetField`` nodes,
from the ``column_lineage`` table, with the job each edge came through and its
transformations."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Collection
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.graph.model import Direction, Edge, NodeId, NodeType, Transformation
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.reads.common import chunks, dataset_ids, naive, named_in_namespace
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["ColumnLineage"]

_ds, _ns, _j, _r = t.datasets, t.namespaces, t.jobs, t.runs


class ColumnLineage:
    """Column edges between ``datasetField`` nodes, with their job and transformations.

    With ``dataset_level``, a downstream walk also meets the ``columnLineage`` facet's
    dataset-level entries, as edges from the field to the target's ``dataset`` node:
    such an entry affects every field of its target (the impact walk fans it out).
    """

    def __init__(
        self,
        conn: sa.Connection,
        as_of: datetime | None = None,
        hidden: HiddenNodes | None = None,
        dataset_level: bool = False,
    ) -> None:
        self.conn = conn
        self.as_of = as_of
        self.hidden = hidden or HiddenNodes(conn)
        self.dataset_level = dataset_level
        # run uuid -> the job node id of its run (None: no such run or job); a walk
        # meets each run on many edges, and looks its job up once.
        self._job_of_run: dict[str, str | None] = {}

    def fields_of(self, dataset_node_ids: Collection[str]) -> list[str]:
        keys = [(n.namespace, n.name) for n in map(NodeId.parse, dataset_node_ids)]
        ids = dataset_ids(self.conn, keys)
        key_of = {i: k for k, i in ids.items()}
        result = []
        for batch in chunks(list(key_of)):
            for dataset_id, name in self.conn.execute(
                sa.select(t.fields.c.dataset_id, t.fields.c.name).where(
                    t.fields.c.dataset_id.in_(batch)
                )
            ):
                namespace, dataset = key_of[dataset_id]
                result.append(f"datasetField:{namespace}:{dataset}:{name}")
        return result

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        fields = [n for n in map(NodeId.parse, node_ids) if n.type is NodeType.DATASET_FIELD]
        upstream = direction is Direction.UPSTREAM
        dataset_level = self.dataset_level and not upstream
        statement = _COLUMN_STATEMENTS[(upstream, self.as_of is not None, dataset_level)]
        params = {} if self.as_of is None else {"as_of": naive(self.as_of)}
        by_namespace: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for f in fields:
            by_namespace[f.namespace].add((f.name, f.field))
        rows = []
        for namespace, wanted in by_namespace.items():
            for batch in chunks(sorted(wanted)):
                values = {
                    **params,
                    "namespace": namespace,
                    "names": sorted({name for name, _ in batch}),
                    "fields": sorted({field for _, field in batch}),
                    "pairs": batch,
                }
                rows += [(namespace, row) for row in statement.rows(self.conn, values)]
        job_of_run = self._jobs_of_runs({row[-1] for _, row in rows if row[-1] is not None})
        grouped: dict[tuple[str, str, str | None], list[Transformation]] = defaultdict(list)
        for namespace, (
            near_name,
            near_field,
            far_field,
            far_name,
            far_namespace,
            kind,
            subtype,
            description,
            masking,
            run_uuid,
        ) in rows:
            near = f"datasetField:{namespace}:{near_name}:{near_field}"
            other = (
                f"datasetField:{far_namespace}:{far_name}:{far_field}"
                if far_field
                else f"dataset:{far_namespace}:{far_name}"
            )
            via = job_of_run.get(run_uuid) if run_uuid is not None else None
            up, down = (other, near) if upstream else (near, other)
            grouped[(up, down, via)].append(_transformation(kind, subtype, description, masking))
        return self.hidden.filter(
            [
                Edge(up, down, via, tuple(trs) if len(trs) == 1 else _in_order(trs))
                for (up, down, via), trs in grouped.items()
            ]
        )

    def _jobs_of_runs(self, run_uuids: set[str]) -> dict[str, str | None]:
        """The job node id of each run (None for a run or job not stored), from the
        walk's cache or one query per chunk of runs it has not met yet."""
        known = self._job_of_run
        asked = sorted(u for u in run_uuids if u not in known)
        for batch in chunks(asked):
            for uuid, job_namespace, job_name in _RUN_JOBS.rows(self.conn, {"uuids": batch}):
                known[uuid] = f"job:{job_namespace}:{job_name}"
        for uuid in asked:
            known.setdefault(uuid, None)
        return known


@functools.lru_cache(maxsize=4_096)
def _transformation(
    kind: str | None, subtype: str | None, description: str | None, masking: bool | None
) -> Transformation:
    # A large walk meets the same few (type, subtype) pairs on thousands of edges.
    return Transformation(kind or "", subtype or None, description, bool(masking))


def _in_order(trs: list[Transformation]) -> tuple[Transformation, ...]:
    return tuple(sorted(trs, key=lambda tr: (tr.type, tr.subtype or "")))


def _column_statement(upstream: bool, until: bool, dataset_level: bool) -> sa.Select[Any]:
    """Column edges next to fields ``names`` x ``fields`` of datasets in ``namespace``;
    with ``dataset_level`` (downstream only) also the dataset-level entries."""
    cl = t.column_lineage
    near_ds, near_field, far_ds, far_field = (
        (cl.c.target_dataset_id, cl.c.target_field, cl.c.source_dataset_id, cl.c.source_field)
        if upstream
        else (cl.c.source_dataset_id, cl.c.source_field, cl.c.target_dataset_id, cl.c.target_field)
    )
    near = _ds.alias("near")
    far, far_ns = _ds.alias("far"), _ns.alias("far_ns")
    query = (
        sa.select(
            near.c.name.label("near_name"),
            near_field.label("near_field"),
            far_field.label("far_field"),
            far.c.name.label("far_name"),
            far_ns.c.name.label("far_namespace"),
            cl.c.transformation_type,
            cl.c.transformation_subtype,
            cl.c.description,
            cl.c.masking,
            # The edge's job is looked up per distinct run (_RUN_JOBS), not joined
            # here: a level's edges come from a few runs, and joining runs and jobs
            # on every edge row was a quarter of SQLite's work for the statement.
            cl.c.run_uuid,
        )
        .select_from(cl)
        .join(near, near.c.id == near_ds)
        .join(far, far.c.id == far_ds)
        .join(far_ns, far_ns.c.id == far.c.namespace_id)
        .where(
            named_in_namespace(near),
            near_field.in_(sa.bindparam("fields", expanding=True)),
            # The two lists find the edges through an index; their cross product is
            # then cut to the asked pairs before anything else is joined (most of
            # the cross product is not asked for: 3 rows in 4 at full scale).
            sa.tuple_(near.c.name, near_field).in_(sa.bindparam("pairs", expanding=True)),
        )
    )
    if not dataset_level:
        # Dataset-level entries (no target field) are not column edges.
        query = query.where(cl.c.target_field != "")
    if until:
        query = query.where(cl.c.created_at <= sa.bindparam("as_of"))
    return query


def _run_jobs_statement() -> sa.Select[Any]:
    """(run uuid, job namespace, job name) of the runs ``uuids``."""
    job_ns = _ns.alias("job_ns")
    return (
        sa.select(_r.c.uuid, job_ns.c.name.label("job_namespace"), _j.c.name.label("job_name"))
        .join(_j, _j.c.id == _r.c.job_id)
        .join(job_ns, job_ns.c.id == _j.c.namespace_id)
        .where(_r.c.uuid.in_(sa.bindparam("uuids", expanding=True)))
    )


_RUN_JOBS = ListSelect(_run_jobs_statement())

# Built once: (upstream?, as of a time?, with dataset-level entries?) -> statement.
_COLUMN_STATEMENTS = {
    (upstream, until, dataset_level): ListSelect(_column_statement(upstream, until, dataset_level))
    for upstream in (True, False)
    for until in (True, False)
    for dataset_level in ((False,) if upstream else (False, True))
}
