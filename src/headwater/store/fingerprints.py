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

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from headwater.graph.duplicates import ColumnInput, column_inputs, input_digest, set_digests
from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.keys import dataset_node

if TYPE_CHECKING:
    from headwater.store.statements import Statements

__all__ = [
    "ColumnKey",
    "Digests",
    "Member",
    "delete_dataset",
    "digests",
    "edge_input",
    "refresh",
    "refresh_after_batch",
]

#: (target dataset id, field, job id): one output column of one job.
ColumnKey = tuple[int, str, int]
#: (key digest, whole-fingerprint digest).
Digests = tuple[int, int]

_IDS = sa.bindparam("ids", expanding=True)
_cl, _r, _d, _ns, _fp = t.column_lineage, t.runs, t.datasets, t.namespaces, t.column_fingerprints

# Built once: building a statement costs more than running it for a small batch.
# The sources' names are looked up once per refresh, not joined into every edge.
_EDGES = (
    sa.select(
        _r.c.job_id,
        _cl.c.target_dataset_id,
        _cl.c.target_field,
        _cl.c.source_dataset_id,
        _cl.c.source_field,
        _cl.c.transformation_type,
        _cl.c.transformation_subtype,
    )
    .select_from(_cl.join(_r, _r.c.uuid == _cl.c.run_uuid))
    .where(_cl.c.target_dataset_id.in_(_IDS))
)
_SOURCES = (
    sa.select(_d.c.id, _ns.c.name.label("namespace"), _d.c.name)
    .join(_ns, _ns.c.id == _d.c.namespace_id)
    .where(_d.c.id.in_(_IDS))
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


#: Whether an input is a value (DIRECT) input, and its digest (``graph.duplicates``).
Member = tuple[bool, int]


# Inputs recur across batches (the columns many jobs read): digested once per process.
@functools.lru_cache(maxsize=1 << 16)
def edge_input(namespace: str, name: str, field: str, kind: str, subtype: str) -> Member:
    """One edge's input as a fingerprint holds it (the source as a node id), digested."""
    return input_digest(ColumnInput(dataset_node(namespace, name), field, kind, subtype))


def digests(edges: Iterable[tuple[int, int, str, Member]]) -> dict[ColumnKey, Digests]:
    """The digests of each output column of ``edges`` -- (job id, target dataset id,
    target field, input) -- that has a fingerprint (its inputs as
    :func:`headwater.graph.duplicates.column_inputs` gathers them)."""
    found = {}
    for (job, target, name), members in column_inputs(edges).items():
        found[(target, name, job)] = set_digests(
            {digest for direct, digest in members if direct},
            {digest for direct, digest in members if not direct},
        )
    return found


def _edges(
    conn: sa.Connection, sql: Statements | None, ids: Sequence[int]
) -> Iterator[tuple[int, int, str, Member]]:
    """The edges into the datasets ``ids`` with their job, each input digested once."""
    rows = list(_select(conn, sql, "fingerprints:edges", _EDGES, ids))
    sources: dict[int, tuple[str, str]] = {}
    for part in chunks(sorted({row.source_dataset_id for row in rows})):
        for row in _select(conn, sql, "fingerprints:sources", _SOURCES, part):
            sources[row.id] = (row.namespace, row.name)
    built: dict[tuple[int, str, str, str], Member] = {}
    for job, target, name, source, field, kind, subtype in rows:
        key = (source, field, kind, subtype)
        item = built.get(key)
        if item is None:
            item = built[key] = edge_input(*sources[source], field, kind, subtype)
        yield job, target, name, item


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
        want = digests(_edges(conn, sql, part))
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
        if new and sql is not None:
            sql.bulk(conn, "column_fingerprints", _fp, _fp.insert(), new)
        elif new:
            conn.execute(_fp.insert(), new)


def refresh_after_batch(
    conn: sa.Connection,
    sql: Statements,
    edges: Iterable[Mapping[str, Any]],
    runs: Mapping[str, Mapping[str, Any]],
    dataset_id: Callable[[Any], int | None],
) -> None:
    """:func:`refresh` the targets of a batch's column-lineage rows (``edges``, as the
    batch's facts hold them, ids resolved; ``runs`` the batch's runs with their
    ``job_id``), leaving out each target whose stored rows already say what the
    batch's edges say: one job, and exactly the columns and digests the batch's
    edges give. A job re-running its version asserts the same edges again; those
    edges cannot change a column then (each is already an input of the column, and
    no other job's column of the target could lose one), so nothing is read."""
    batch: dict[int, list[tuple[int, int, str, Member]]] = defaultdict(list)
    mixed: set[int] = set()
    built: dict[tuple[Any, str, str, str], Member] = {}
    for row in edges:
        target = dataset_id(row["target"])
        if target is None:
            continue
        run = runs.get(row["run_uuid"]) if row["run_uuid"] else None
        job = run.get("job_id") if run is not None else None
        if job is None:
            mixed.add(target)  # an edge leaving every job's output: read it all
            continue
        key = (
            row["source"],
            row["source_field"],
            row["transformation_type"],
            row["transformation_subtype"],
        )
        item = built.get(key)
        if item is None:
            item = built[key] = edge_input(*key[0], *key[1:])
        batch[target].append((job, target, row["target_field"], item))
    unchanged: set[int] = set()
    candidates = sorted(
        t_ for t_, rows in batch.items() if t_ not in mixed and len({r[0] for r in rows}) == 1
    )
    for part in chunks(candidates):
        stored: dict[int, dict[ColumnKey, Digests]] = defaultdict(dict)
        for row in _select(conn, sql, "fingerprints:stored", _STORED, part):
            stored[row.dataset_id][(row.dataset_id, row.field, row.job_id)] = (
                row.key_hash,
                row.print_hash,
            )
        for target in part:
            held = stored.get(target)
            if held and digests(batch[target]) == held:
                unchanged.add(target)
    refresh(conn, [t_ for t_ in set(batch) | mixed if t_ not in unchanged], sql)


def _key(key: ColumnKey) -> dict[str, Any]:
    return {"b_dataset_id": key[0], "b_field": key[1], "b_job_id": key[2]}


def delete_dataset(conn: sa.Connection, dataset_id: int) -> None:
    """Drop the rows of a dataset that is being deleted (its edges go with it)."""
    conn.execute(sa.delete(_fp).where(_fp.c.dataset_id == dataset_id))
