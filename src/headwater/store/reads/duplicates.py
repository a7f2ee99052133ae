"""Duplicate work, read side: every job's output columns with their inputs, from
``column_lineage`` (``GET /api/v2/duplicates``; :mod:`headwater.graph.duplicates`
fingerprints and pairs them).

A ``column_lineage`` row is one (output column, input column, transformation) edge,
its job the job of the run that last asserted it. Fingerprints are computed here at
read time from these rows rather than kept in a table of their own: the rows are
already derived in the write transaction, whatever the order events arrive in, so a
fingerprint read from them is always in step; docs/api.md gives the cost measured.

Edges keep their last asserting run, so an edge a job's newer version no longer
reports stays part of that job's output (as it does in the column-lineage walk).
"""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import visible

__all__ = ["ColumnRow", "output_columns"]

#: (source dataset node id, source field, transformation type, subtype); an empty
#: field for a dataset-level entry.
InputRow = tuple[str, str, str, str]
#: (job node id, output dataset node id, output field, its inputs).
ColumnRow = tuple[str, str, str, frozenset[InputRow]]

_cl, _r, _j, _d, _ns = t.column_lineage, t.runs, t.jobs, t.datasets, t.namespaces

# The edges with their job's id, names left to two small look-ups: joining the names
# into every edge row costs more than the edges themselves.
_EDGES = sa.select(
    _r.c.job_id,
    _cl.c.target_dataset_id,
    _cl.c.target_field,
    _cl.c.source_dataset_id,
    _cl.c.source_field,
    _cl.c.transformation_type,
    _cl.c.transformation_subtype,
).select_from(_cl.join(_r, _r.c.uuid == _cl.c.run_uuid))


def _names(
    conn: sa.Connection, table: sa.Table, prefix: str, scope: NamespaceScope
) -> dict[int, str]:
    """Node ids of the visible rows of ``jobs`` or ``datasets`` inside ``scope``, by id."""
    query = (
        sa.select(table.c.id, _ns.c.name.label("namespace"), table.c.name)
        .select_from(table.join(_ns, _ns.c.id == table.c.namespace_id))
        .where(visible(table), scope.where(_ns.c.name))
    )
    return {row.id: f"{prefix}:{row.namespace}:{row.name}" for row in conn.execute(query)}


def _near(job_id: int) -> sa.ColumnElement[bool]:
    """Edges into datasets derived from something one of the job's runs read: the only
    columns that can share an input with the job's own (a pair needs one). Found
    through the runs' inputs and the edges' source index."""
    ri = t.run_inputs
    sources = (
        sa.select(ri.c.dataset_id)
        .select_from(ri.join(_r, _r.c.uuid == ri.c.run_uuid))
        .where(_r.c.job_id == job_id)
    )
    cl2 = _cl.alias("near")
    targets = sa.select(cl2.c.target_dataset_id).where(cl2.c.source_dataset_id.in_(sources))
    return _cl.c.target_dataset_id.in_(targets)


def output_columns(
    conn: sa.Connection, scope: NamespaceScope = EVERYTHING, near_job: int | None = None
) -> list[ColumnRow]:
    """Every output column of every job ``scope`` sees, with all of its inputs; a
    dataset-level entry's inputs are given to every column of its target. With
    ``near_job`` (a job's id), only the columns that share an input dataset with it."""
    inputs: dict[tuple[str, str, str], set[InputRow]] = defaultdict(set)
    whole: dict[tuple[str, str], set[InputRow]] = defaultdict(set)
    jobs = _names(conn, _j, "job", scope)
    datasets = _names(conn, _d, "dataset", scope)
    edges = _EDGES if near_job is None else _EDGES.where(_near(near_job))
    for job_id, target_id, target_field, source_id, source_field, kind, subtype in conn.execute(
        edges
    ):
        job, target, source = jobs.get(job_id), datasets.get(target_id), datasets.get(source_id)
        if job is None or target is None or source is None:
            continue  # deleted, or outside the scope
        item = (source, source_field, kind, subtype)
        if target_field:
            inputs[(job, target, target_field)].add(item)
        else:
            whole[(job, target)].add(item)
    return [
        (job, target, field, frozenset(found | whole.get((job, target), set())))
        for (job, target, field), found in sorted(inputs.items())
    ]
