"""``column_fingerprints``: each job's output columns with their fingerprint digests.

Duplicate work (:mod:`headwater.graph.duplicates`) pairs jobs whose output columns
share a fingerprint key. Reading every column edge to find those pairs costs what
the store holds; this table holds one row per output column with the digest of its
key (indexed) and of its whole fingerprint, so a read finds the candidate pairs by
equal digests (:mod:`headwater.store.reads.duplicates`).

Why it stays right whatever order events arrive in: a row is a function of the
``column_lineage`` rows of its target dataset (and of the job of each edge's run),
never of the batch. :func:`refresh` recomputes the rows of every target whose edges
a batch upserted, in the same transaction, after the edges are written; the other
writers of edges call it too -- retention for the outputs of the runs it deletes
(an edge whose run is gone leaves its job's output, as the edges are read), the
namespace folding before it deletes a dataset. So a late event, a replay or a
rebuild from the raw log leaves the same rows. Digests are taken over node ids
(namespace and name), not surrogate ids, so two stores of the same events agree.
Soft deletes and namespace scopes are applied by the reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from headwater.graph.duplicates import (
    ColumnInput,
    columns_of,
    fingerprints,
    key_digest,
    print_digest,
)
from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.keys import dataset_node

if TYPE_CHECKING:
    from headwater.store.statements import Statements

__all__ = ["ColumnKey", "Digests", "delete_dataset", "digests", "edge_input", "refresh"]

#: (target dataset id, field, job id): one output column of one job.
ColumnKey = tuple[int, str, int]
#: (key digest, whole-fingerprint digest).
Digests = tuple[int, int]

_IDS = sa.bindparam("ids", expanding=True)
_cl, _r, _d, _ns, _fp = t.column_lineage, t.runs, t.datasets, t.namespaces, t.column_fingerprints

# Built once: building a statement costs more than running it for a small batch.
_EDGES = (
    sa.select(
        _r.c.job_id,
        _cl.c.target_dataset_id,
        _cl.c.target_field,
        _ns.c.name.label("namespace"),
        _d.c.name,
        _cl.c.source_field,
        _cl.c.transformation_type,
        _cl.c.transformation_subtype,
    )
    .select_from(_cl.join(_r, _r.c.uuid == _cl.c.run_uuid))
    .join(_d, _d.c.id == _cl.c.source_dataset_id)
    .join(_ns, _ns.c.id == _d.c.namespace_id)
    .where(_cl.c.target_dataset_id.in_(_IDS))
)
_STORED = sa.select(
    _fp.c.dataset_id, _fp.c.field, _fp.c.job_id, _fp.c.key_hash, _fp.c.print_hash
).where(_fp.c.dataset_id.in_(_IDS))
_ONE = sa.and_(
    _fp.c.dataset_id == sa.bindparam("b_dataset_id"),
    _fp.c.field == sa.bindparam("b_field"),
    _fp.c.job_id == sa.bindparam("b_job_id"),
)
_DELETE = _fp.delete().where(_ONE)
_UPDATE = (
    _fp.update()
    .where(_ONE)
    .values(key_hash=sa.bindparam("b_key_hash"), print_hash=sa.bindparam("b_print_hash"))
)


def edge_input(namespace: str, name: str, field: str, kind: str, subtype: str) -> ColumnInput:
    """One edge's input as a fingerprint holds it: the source as a node id."""
    return ColumnInput(dataset_node(namespace, name), field, kind, subtype)


def digests(edges: Iterable[tuple[int, int, str, ColumnInput]]) -> dict[ColumnKey, Digests]:
    """The digests of each output column of ``edges`` -- (job id, target dataset id,
    target field, input) -- that has a fingerprint."""
    columns = columns_of((str(job), str(target), name, item) for job, target, name, item in edges)
    return {
        (int(column.dataset), column.field, int(column.job)): (key_digest(fp), print_digest(fp))
        for column, fp in fingerprints(columns).items()
    }


def _rows(rows: Iterable[Any]) -> Iterator[tuple[int, int, str, ColumnInput]]:
    for row in rows:
        item = edge_input(
            row.namespace,
            row.name,
            row.source_field,
            row.transformation_type,
            row.transformation_subtype,
        )
        yield row.job_id, row.target_dataset_id, row.target_field, item


def _select(
    conn: sa.Connection, sql: Statements | None, name: str, stmt: Any, ids: Sequence[int]
) -> Iterable[Any]:
    if sql is not None:
        return sql.by_ids(conn, name, stmt, ids)
    return conn.execute(stmt, {"ids": list(ids)})


def refresh(
    conn: sa.Connection, dataset_ids: Iterable[int | None], sql: Statements | None = None
) -> None:
    """Recompute the rows of the output columns of ``dataset_ids`` from their stored
    edges, writing only what changed (``sql`` runs the statements compiled once)."""
    for part in chunks(sorted({i for i in dataset_ids if i is not None})):
        want = digests(_rows(_select(conn, sql, "fingerprints:edges", _EDGES, part)))
        have = {
            (row.dataset_id, row.field, row.job_id): (row.key_hash, row.print_hash)
            for row in _select(conn, sql, "fingerprints:stored", _STORED, part)
        }
        if want == have:
            continue
        gone = [_key(k) for k in have if k not in want]
        new = [
            {
                "dataset_id": k[0],
                "field": k[1],
                "job_id": k[2],
                "key_hash": d[0],
                "print_hash": d[1],
            }
            for k, d in want.items()
            if k not in have
        ]
        moved = [
            {**_key(k), "b_key_hash": d[0], "b_print_hash": d[1]}
            for k, d in want.items()
            if k in have and have[k] != d
        ]
        if gone:
            conn.execute(_DELETE, gone)
        if moved:
            conn.execute(_UPDATE, moved)
        if new:
            conn.execute(_fp.insert(), new)


def _key(key: ColumnKey) -> dict[str, Any]:
    return {"b_dataset_id": key[0], "b_field": key[1], "b_job_id": key[2]}


def delete_dataset(conn: sa.Connection, dataset_id: int) -> None:
    """Drop the rows of a dataset that is being deleted (its edges go with it)."""
    conn.execute(sa.delete(_fp).where(_fp.c.dataset_id == dataset_id))
