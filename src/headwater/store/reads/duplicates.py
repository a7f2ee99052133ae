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
from typing import Any

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

_cl, _r, _j = t.column_lineage, t.runs, t.jobs
_src, _dst = t.datasets.alias("src"), t.datasets.alias("dst")
_src_ns, _dst_ns, _job_ns = (
    t.namespaces.alias("src_ns"),
    t.namespaces.alias("dst_ns"),
    t.namespaces.alias("job_ns"),
)


def _statement(scope: NamespaceScope) -> sa.Select[Any]:
    return (
        sa.select(
            _job_ns.c.name.label("job_namespace"),
            _j.c.name.label("job"),
            _dst_ns.c.name.label("dst_namespace"),
            _dst.c.name.label("dst"),
            _cl.c.target_field,
            _src_ns.c.name.label("src_namespace"),
            _src.c.name.label("src"),
            _cl.c.source_field,
            _cl.c.transformation_type,
            _cl.c.transformation_subtype,
        )
        .select_from(
            _cl.join(_r, _r.c.uuid == _cl.c.run_uuid)
            .join(_j, _j.c.id == _r.c.job_id)
            .join(_job_ns, _job_ns.c.id == _j.c.namespace_id)
            .join(_dst, _dst.c.id == _cl.c.target_dataset_id)
            .join(_dst_ns, _dst_ns.c.id == _dst.c.namespace_id)
            .join(_src, _src.c.id == _cl.c.source_dataset_id)
            .join(_src_ns, _src_ns.c.id == _src.c.namespace_id)
        )
        .where(
            visible(_j),
            visible(_dst),
            visible(_src),
            scope.where(_job_ns.c.name),
            scope.where(_dst_ns.c.name),
            scope.where(_src_ns.c.name),
        )
    )


def output_columns(conn: sa.Connection, scope: NamespaceScope = EVERYTHING) -> list[ColumnRow]:
    """Every output column of every job ``scope`` sees, with all of its inputs; a
    dataset-level entry's inputs are given to every column of its target."""
    inputs: dict[tuple[str, str, str], set[InputRow]] = defaultdict(set)
    whole: dict[tuple[str, str], set[InputRow]] = defaultdict(set)
    for row in conn.execute(_statement(scope)):
        job = f"job:{row.job_namespace}:{row.job}"
        target = f"dataset:{row.dst_namespace}:{row.dst}"
        item = (
            f"dataset:{row.src_namespace}:{row.src}",
            row.source_field,
            row.transformation_type,
            row.transformation_subtype,
        )
        if row.target_field:
            inputs[(job, target, row.target_field)].add(item)
        else:
            whole[(job, target)].add(item)
    return [
        (job, target, field, frozenset(found | whole.get((job, target), set())))
        for (job, target, field), found in sorted(inputs.items())
    ]
