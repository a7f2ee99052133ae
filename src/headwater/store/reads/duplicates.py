"""Duplicate work, read side: the output columns of the jobs that may pair, with
their inputs (``GET /api/v2/duplicates``; :mod:`headwater.graph.duplicates`
fingerprints and pairs them).

A ``column_lineage`` row is one (output column, input column, transformation) edge,
its job the job of the run that last asserted it. ``column_fingerprints``
(:mod:`headwater.store.fingerprints`, kept by the write transaction) holds each
output column's key digest, indexed: the jobs sharing a digest, and how many
columns each has per digest, bound how much of each job's output another job can
compute, so only the pairs that can reach ``minShare`` are read edge by edge and
compared. The answer is the one a comparison of every column would give: the
pairing drops what the bound lets through, and nothing it would keep is left out.

Soft-deleted and out-of-scope nodes are left out of the columns, as everywhere:
an output column loses the inputs it reads from such a dataset, so the columns
that read one have their digests recomputed here (the others' stored digests hold).

Edges keep their last asserting run, so an edge a job's newer version no longer
reports stays part of that job's output (as it does in the column-lineage walk).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping

import sqlalchemy as sa

from headwater.store import fingerprints
from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import hidden, visible

__all__ = ["ColumnRow", "duplicate_columns"]

#: (source dataset node id, source field, transformation type, subtype); an empty
#: field for a dataset-level entry.
InputRow = tuple[str, str, str, str]
#: (job node id, output dataset node id, output field, its inputs).
ColumnRow = tuple[str, str, str, frozenset[InputRow]]
#: (job id, key digest) -> how many of the job's output columns have that key.
PerKey = dict[tuple[int, int], int]

_cl, _r, _j, _d, _ns = t.column_lineage, t.runs, t.jobs, t.datasets, t.namespaces
_fp = t.column_fingerprints

_EDGES = sa.select(
    _r.c.job_id,
    _cl.c.target_dataset_id,
    _cl.c.target_field,
    _cl.c.source_dataset_id,
    _cl.c.source_field,
    _cl.c.transformation_type,
    _cl.c.transformation_subtype,
).select_from(_cl.join(_r, _r.c.uuid == _cl.c.run_uuid))


def duplicate_columns(
    conn: sa.Connection,
    scope: NamespaceScope = EVERYTHING,
    min_share: float = 0.5,
    job: int | None = None,
    namespace: str | None = None,
) -> list[ColumnRow]:
    """Every output column, with all of its inputs, of the jobs ``scope`` sees that
    share enough fingerprint keys with another to reach ``min_share`` on one side;
    with ``job`` (a job's id) only its pairs count, with ``namespace`` only pairs
    with a job in it. A dataset-level entry's inputs are given to every column of
    its target."""
    if scope.limited or _any_hidden(conn):
        per_key, columns = _scoped_keys(conn, scope, job)
    else:
        per_key, columns = _stored_keys(conn, job)
    pairs = _candidate_pairs(per_key, columns, min_share, job)
    jobs = _names(conn, _j, "job", scope, {j for pair in pairs for j in pair})
    if namespace is not None:
        prefix = f"job:{namespace}:"
        inside = {i for i, node in jobs.items() if node.startswith(prefix)}
        pairs = {(a, b) for a, b in pairs if a in inside or b in inside}
    return _columns(conn, scope, {j for pair in pairs for j in pair}, jobs)


def _any_hidden(conn: sa.Connection) -> bool:
    """Whether a dataset or job is soft-deleted: its columns, or the inputs read from
    it, drop out of the answer and stored digests no longer say who may pair."""
    return any(
        conn.execute(sa.select(sa.literal(1)).where(hidden(table)).limit(1)).first()
        for table in (_d, _j)
    )


def _stored_keys(conn: sa.Connection, job: int | None) -> tuple[PerKey, dict[int, int]]:
    """The keys shared by two jobs (by ``job`` and another), each with its jobs'
    column counts, and those jobs' column counts, all from the digest index."""
    if job is None:
        keys = (
            sa.select(_fp.c.key_hash)
            .group_by(_fp.c.key_hash)
            .having(sa.func.min(_fp.c.job_id) != sa.func.max(_fp.c.job_id))
        )
    else:
        keys = sa.select(_fp.c.key_hash).where(_fp.c.job_id == job).distinct()
    query = (
        sa.select(_fp.c.job_id, _fp.c.key_hash, sa.func.count())
        .where(_fp.c.key_hash.in_(keys.scalar_subquery()))
        .group_by(_fp.c.job_id, _fp.c.key_hash)
    )
    per_key = {(j, key): n for j, key, n in conn.execute(query)}
    counts: dict[int, int] = {}
    for part in chunks(sorted({j for j, _ in per_key})):
        counted = (
            sa.select(_fp.c.job_id, sa.func.count())
            .where(_fp.c.job_id.in_(part))
            .group_by(_fp.c.job_id)
        )
        counts.update({j: n for j, n in conn.execute(counted)})
    return per_key, counts


def _scoped_keys(
    conn: sa.Connection, scope: NamespaceScope, job: int | None
) -> tuple[PerKey, dict[int, int]]:
    """The keys of every column ``scope`` sees (``job`` is applied by the pairing),
    the columns reading a dataset it does not see with their digests recomputed."""
    jn, dn = _ns.alias("job_namespace"), _ns.alias("dataset_namespace")
    rows = (
        sa.select(_fp.c.dataset_id, _fp.c.field, _fp.c.job_id, _fp.c.key_hash)
        .select_from(_fp.join(_j, _j.c.id == _fp.c.job_id).join(jn, jn.c.id == _j.c.namespace_id))
        .join(_d, _d.c.id == _fp.c.dataset_id)
        .join(dn, dn.c.id == _d.c.namespace_id)
        .where(visible(_j), visible(_d), scope.where(jn.c.name), scope.where(dn.c.name))
    )
    keys = {(row.dataset_id, row.field, row.job_id): row.key_hash for row in conn.execute(rows)}
    unseen = (
        sa.select(_d.c.id)
        .join(_ns, _ns.c.id == _d.c.namespace_id)
        .where(sa.or_(hidden(_d), sa.not_(scope.where(_ns.c.name))))
    )
    hidden_ids = set(conn.scalars(unseen))
    if hidden_ids:
        reading = (
            sa.select(_r.c.job_id, _cl.c.target_dataset_id)
            .select_from(_cl.join(_r, _r.c.uuid == _cl.c.run_uuid))
            .where(_cl.c.source_dataset_id.in_(unseen.scalar_subquery()))
            .distinct()
        )
        affected = {(target, j) for j, target in conn.execute(reading)}
        seen_targets = {(d, j) for d, _, j in keys}
        affected &= seen_targets
        _recompute(conn, keys, affected, hidden_ids)
    per_key: Counter[tuple[int, int]] = Counter((j, key) for (_, _, j), key in keys.items())
    counts: Counter[int] = Counter(j for _, _, j in keys)
    return dict(per_key), dict(counts)


def _recompute(
    conn: sa.Connection,
    keys: dict[tuple[int, str, int], int],
    affected: set[tuple[int, int]],
    hidden_ids: Collection[int],
) -> None:
    """Replace in ``keys`` the digests of the (target, job) columns ``affected`` by
    those of their inputs outside ``hidden_ids``."""
    for key in [k for k in keys if (k[0], k[2]) in affected]:
        del keys[key]
    sources: dict[int, tuple[str, str]] = {}
    edges = []
    for part in chunks(sorted({target for target, _ in affected})):
        for row in conn.execute(_EDGES.where(_cl.c.target_dataset_id.in_(part))):
            if (row.target_dataset_id, row.job_id) in affected and (
                row.source_dataset_id not in hidden_ids
            ):
                edges.append(row)
    for part in chunks(sorted({row.source_dataset_id for row in edges})):
        named = (
            sa.select(_d.c.id, _ns.c.name.label("namespace"), _d.c.name)
            .join(_ns, _ns.c.id == _d.c.namespace_id)
            .where(_d.c.id.in_(part))
        )
        sources.update({row.id: (row.namespace, row.name) for row in conn.execute(named)})
    found = fingerprints.digests(
        (
            row.job_id,
            row.target_dataset_id,
            row.target_field,
            fingerprints.edge_input(
                *sources[row.source_dataset_id],
                row.source_field,
                row.transformation_type,
                row.transformation_subtype,
            ),
        )
        for row in edges
    )
    keys.update({column: digest[0] for column, digest in found.items()})


def _candidate_pairs(
    per_key: Mapping[tuple[int, int], int],
    columns: Mapping[int, int],
    min_share: float,
    job: int | None,
) -> set[tuple[int, int]]:
    """The pairs of jobs (with ``job``, if given) whose shared keys can match at least
    ``min_share`` of one side's columns: the bound :func:`graph.duplicates.duplicates`
    tests before comparing a pair."""
    by_key: dict[int, list[int]] = defaultdict(list)
    for j, key in per_key:
        by_key[key].append(j)
    by_key = {key: sharing for key, sharing in by_key.items() if len(sharing) > 1}
    # A pair's bound is at most what each side shares with anyone, so a pair passes
    # only if one side can reach ``min_share`` on its own: only pairs with such a
    # side are summed (keys shared by many jobs would make every pair cost).
    reach: Counter[int] = Counter()
    for key, sharing in by_key.items():
        for j in sharing:
            reach[j] += per_key[(j, key)]
    able = {j for j, n in reach.items() if n >= min_share * columns[j]}
    shared: Counter[tuple[int, int]] = Counter()
    for key, sharing in by_key.items():
        for a in sharing:
            if a not in able:
                continue
            for b in sharing:
                if a == b or (b in able and b < a):
                    continue  # itself, or a pair summed from b's side
                if job is None or job in (a, b):
                    pair = (a, b) if a < b else (b, a)
                    shared[pair] += min(per_key[(a, key)], per_key[(b, key)])
    return {
        (a, b)
        for (a, b), bound in shared.items()
        if bound >= min_share * columns[a] or bound >= min_share * columns[b]
    }


def _names(
    conn: sa.Connection,
    table: sa.Table,
    prefix: str,
    scope: NamespaceScope,
    ids: Iterable[int],
) -> dict[int, str]:
    """Node ids of the visible rows ``ids`` of ``jobs`` or ``datasets`` inside ``scope``."""
    found: dict[int, str] = {}
    for part in chunks(sorted(set(ids))):
        query = (
            sa.select(table.c.id, _ns.c.name.label("namespace"), table.c.name)
            .select_from(table.join(_ns, _ns.c.id == table.c.namespace_id))
            .where(table.c.id.in_(part), visible(table), scope.where(_ns.c.name))
        )
        found.update(
            {row.id: f"{prefix}:{row.namespace}:{row.name}" for row in conn.execute(query)}
        )
    return found


def _columns(
    conn: sa.Connection, scope: NamespaceScope, job_ids: set[int], jobs: Mapping[int, str]
) -> list[ColumnRow]:
    """The output columns of the jobs ``job_ids`` (node ids in ``jobs``), read from the
    edges of the datasets they write."""
    targets: set[int] = set()
    for part in chunks(sorted(job_ids)):
        query = sa.select(_fp.c.dataset_id).where(_fp.c.job_id.in_(part)).distinct()
        targets.update(conn.scalars(query))
    edges = []
    for part in chunks(sorted(targets)):
        for row in conn.execute(_EDGES.where(_cl.c.target_dataset_id.in_(part))):
            if row.job_id in job_ids:
                edges.append(row)
    datasets = _names(
        conn,
        _d,
        "dataset",
        scope,
        {row.target_dataset_id for row in edges} | {row.source_dataset_id for row in edges},
    )
    inputs: dict[tuple[str, str, str], set[InputRow]] = defaultdict(set)
    whole: dict[tuple[str, str], set[InputRow]] = defaultdict(set)
    for job_id, target_id, target_field, source_id, source_field, kind, subtype in edges:
        job, target = jobs.get(job_id), datasets.get(target_id)
        source = datasets.get(source_id)
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
