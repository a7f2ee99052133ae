"""``schema_contracts``: a consumer's declared schema against what the producer writes.

One row per (dataset, consumer job): the job's latest ``declaredSchema`` input
facet on the dataset (the latest by the facet's event time, then run uuid, over
every run of the job) compared with the dataset's latest schema-bearing version
(by (``updated_at``, ``uuid``), as ``store.drift`` orders versions) by
:func:`headwater.graph.contract.diff_contract`. Both sides are functions of the
stored facts, so the rows are a function of the set of events.

Only two kinds of batch do any work here, so ordinary ingest pays nothing but
an index probe inside the drift query it already runs:

* a batch carrying ``declaredSchema`` input facets recomputes the (dataset,
  job) pairs of those runs, the declaration from every run of the job;
* a batch writing versions of a dataset that has contract rows recomputes that
  dataset's rows against its latest schema-bearing version, which
  :func:`headwater.store.drift.refresh` finds in the chain suffix it reads anyway.

A version or a declaration arriving late is thereby recomputed like any other.
Retention re-derives the pairs whose declaring run or version it deletes
(:func:`refresh_after_deletion`) from the declarations and versions left.
PostgreSQL writers touching the same dataset take turns on its ``datasets``
row (see ``store.drift``), so a declaration and a new version committed
concurrently see each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from headwater.graph.contract import diff_contract
from headwater.store import drift_outbox
from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.extract import DECLARED_SCHEMA, Facts
from headwater.store.keys import dataset_node

if TYPE_CHECKING:
    from headwater.store.statements import IdCache, Statements

__all__ = ["contract_row", "refresh", "refresh_after_deletion"]

_sc, _f, _r, _v, _d = t.schema_contracts, t.facets, t.runs, t.dataset_versions, t.datasets
_n = t.namespaces
_IDS = sa.bindparam("ids", expanding=True)
_RUNS = sa.bindparam("runs", expanding=True)
_declaring = _r.alias("declaring")


def _declarations_by(jobs: Any) -> Any:
    """Every declaration on the given datasets (``ids``: their node ids) by the ``jobs``."""
    return (
        sa.select(
            _f.c.subject, _f.c.payload, _f.c.event_time, _r.c.uuid.label("run_uuid"), _r.c.job_id
        )
        .select_from(_f.join(_r, _r.c.uuid == _f.c.run_uuid))
        .where(
            _f.c.kind == "input",
            _f.c.subject.in_(_IDS),
            _f.c.name == DECLARED_SCHEMA,
            _r.c.job_id.in_(jobs),
        )
    )


# Built once (see derive.py). By the jobs of the given runs (a batch's), and by the
# given jobs (their ids).
_DECLARATIONS = _declarations_by(sa.select(_declaring.c.job_id).where(_declaring.c.uuid.in_(_RUNS)))
_DECLARATIONS_OF_JOBS = _declarations_by(sa.bindparam("jobs", expanding=True))
_NODES = (
    sa.select(_d.c.id, _n.c.name.label("namespace"), _d.c.name)
    .join(_n, _n.c.id == _d.c.namespace_id)
    .where(_d.c.id.in_(_IDS))
)
_p = _v.alias("latest")
_LATEST_VERSIONS = (
    sa.select(_d.c.id.label("dataset_id"), _v.c.uuid, _v.c.updated_at, _v.c.fields)
    .select_from(
        _d.join(
            _v,
            _v.c.uuid
            == (
                sa.select(_p.c.uuid)
                .where(_p.c.dataset_id == _d.c.id, _p.c.fields.is_not(None))
                .order_by(_p.c.updated_at.desc(), _p.c.uuid.desc())
                .limit(1)
                .correlate(_d)
                .scalar_subquery()
            ),
        )
    )
    .where(_d.c.id.in_(_IDS))
)
_STORED = sa.select(_sc).where(_sc.c.dataset_id.in_(_IDS))
_COLUMNS = tuple(c.name for c in _sc.columns)
_DELETE = _sc.delete().where(
    _sc.c.dataset_id == sa.bindparam("b_dataset_id"), _sc.c.job_id == sa.bindparam("b_job_id")
)


def contract_row(
    dataset_id: int, job_id: int, declaration: Mapping[str, Any], version: Any
) -> dict[str, Any]:
    """The row of a consumer's ``declaration`` (``run_uuid``, ``declared_at``,
    ``declared``) against ``version`` (``uuid``, ``updated_at``, ``fields``; None
    when the dataset has no schema-bearing version)."""
    row = {
        "dataset_id": dataset_id,
        "job_id": job_id,
        "run_uuid": declaration["run_uuid"],
        "declared_at": declaration["declared_at"],
        "declared": declaration["declared"],
        "version_uuid": None,
        "written_at": None,
        "changed_at": declaration["declared_at"],
        "differs": False,
        "breaking": False,
        "changes": [],
    }
    if version is not None:
        drift = diff_contract(version.fields, declaration["declared"])
        row.update(
            version_uuid=version.uuid,
            written_at=version.updated_at,
            changed_at=max(version.updated_at, declaration["declared_at"]),
            differs=bool(drift),
            breaking=drift.breaking,
            changes=[change.as_dict() for change in drift.changes],
        )
    return row


def refresh(
    conn: sa.Connection,
    sql: Statements,
    dataset_ids: IdCache,
    facts: Facts,
    latest: Mapping[int, Any],
) -> None:
    """Re-derive the contracts the batch may have changed: those of its declaring
    runs, and those of the datasets in ``latest`` (dataset id -> its latest
    schema-bearing version, from :func:`headwater.store.drift.refresh`)."""
    if not facts.declared_inputs and not latest:
        return
    declarations = _declarations(conn, sql, dataset_ids, facts)
    datasets = set(latest) | {dataset_id for dataset_id, _ in declarations}
    versions = dict(latest)
    missing = sorted(datasets - set(versions))
    for part in chunks(missing):
        versions.update(
            (row.dataset_id, row)
            for row in sql.by_ids(conn, "contract:latest-versions", _LATEST_VERSIONS, part)
        )
    stored: dict[tuple[int, int], dict[str, Any]] = {}
    for part in chunks(sorted(datasets)):
        for row in sql.by_ids(conn, "contract:stored", _STORED, part):
            stored[row.dataset_id, row.job_id] = {c: getattr(row, c) for c in _COLUMNS}
    wanted: dict[tuple[int, int], dict[str, Any]] = {}
    for key, row in stored.items():
        declared = declarations.get(key) or row
        wanted[key] = contract_row(*key, declared, versions.get(key[0]))
    for key, declared in declarations.items():
        wanted[key] = contract_row(*key, declared, versions.get(key[0]))
    _write(conn, stored, wanted, announce=True)


def refresh_after_deletion(
    conn: sa.Connection, sql: Statements, pairs: Iterable[tuple[int, int]]
) -> None:
    """Re-derive the rows of ``pairs`` (dataset id, job id) in the deleting transaction
    (retention), once the runs and versions it deletes are gone: each from the job's
    latest declaration left and the dataset's latest schema-bearing version left, as a
    rebuild derives it; a pair with no declaration left has no row. Not announced to
    the drift webhook: the data did not change, only the history kept of it."""
    keys = set(pairs)
    if not keys:
        return
    datasets = sorted({dataset_id for dataset_id, _ in keys})
    jobs = sorted({job_id for _, job_id in keys})
    subjects: dict[str, int | None] = {}
    versions: dict[int, Any] = {}
    stored: dict[tuple[int, int], dict[str, Any]] = {}
    for part in chunks(datasets):
        subjects.update(
            (dataset_node(row.namespace, row.name), row.id)
            for row in sql.by_ids(conn, "contract:nodes", _NODES, part)
        )
        versions.update(
            (row.dataset_id, row)
            for row in sql.by_ids(conn, "contract:latest-versions", _LATEST_VERSIONS, part)
        )
        for row in sql.by_ids(conn, "contract:stored", _STORED, part):
            if (row.dataset_id, row.job_id) in keys:
                stored[row.dataset_id, row.job_id] = {c: getattr(row, c) for c in _COLUMNS}
    declarations: dict[tuple[int, int], dict[str, Any]] = {}
    for part in chunks(sorted(subjects)):
        for of_jobs in chunks(jobs):
            rows = conn.execute(_DECLARATIONS_OF_JOBS, {"ids": part, "jobs": of_jobs})
            _keep_latest(declarations, subjects, rows)
    wanted = {
        key: contract_row(*key, declarations[key], versions.get(key[0]))
        for key in sorted(keys)
        if key in declarations
    }
    gone = [{"b_dataset_id": d, "b_job_id": j} for d, j in sorted(stored) if (d, j) not in wanted]
    if gone:
        conn.execute(_DELETE, gone)
    _write(conn, stored, wanted, announce=False)


def _declarations(
    conn: sa.Connection, sql: Statements, dataset_ids: IdCache, facts: Facts
) -> dict[tuple[int, int], dict[str, Any]]:
    """(dataset id, job id) -> the latest declaration of each pair the batch declared."""
    if not facts.declared_inputs:
        return {}
    subjects = {dataset_node(*key): dataset_ids.get(key) for key, _ in facts.declared_inputs}
    runs = sorted({run for _, run in facts.declared_inputs})
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for part in chunks(sorted(subjects)):
        _keep_latest(out, subjects, conn.execute(_DECLARATIONS, {"ids": part, "runs": runs}))
    return out


def _keep_latest(
    out: dict[tuple[int, int], dict[str, Any]],
    subjects: Mapping[str, int | None],
    rows: Iterable[Any],
) -> None:
    """Fold the declaration ``rows`` into ``out``: the latest of each (dataset id, job id)."""
    for row in rows:
        dataset_id = subjects[row.subject]
        if dataset_id is None:
            continue
        key = (dataset_id, row.job_id)
        fields = row.payload.get("fields") if isinstance(row.payload, Mapping) else None
        candidate = {
            "run_uuid": row.run_uuid,
            "declared_at": row.event_time,
            "declared": fields if isinstance(fields, list) else [],
        }
        best = out.get(key)
        if best is None or _later(candidate, best):
            out[key] = candidate


def _later(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    order: tuple[datetime, str] = (a["declared_at"], a["run_uuid"])
    return order > (b["declared_at"], b["run_uuid"])


def _write(
    conn: sa.Connection,
    stored: Mapping[tuple[int, int], Mapping[str, Any]],
    wanted: Mapping[tuple[int, int], dict[str, Any]],
    *,
    announce: bool,
) -> None:
    """Make the stored rows of ``wanted``'s keys equal it, writing only differences;
    ``announce`` queues the pairs that start to differ, or differ in a new way, for
    the drift webhook."""
    changed = [
        key
        for key, row in sorted(wanted.items())
        if key not in stored or any(stored[key][c] != row[c] for c in _COLUMNS)
    ]
    if not changed:
        return
    gone = [{"b_dataset_id": d, "b_job_id": j} for d, j in changed if (d, j) in stored]
    if gone:
        conn.execute(_DELETE, gone)
    conn.execute(_sc.insert(), [wanted[key] for key in changed])
    if not announce:
        return
    # Announced (the webhook) when the pair starts to differ or differs in a new way;
    # a consumer's next run declaring the same schema is the same drift.
    drift_outbox.enqueue(conn, (
        drift_outbox.contract_key(*key) for key in changed
        if wanted[key]["differs"] and (
            key not in stored or not stored[key]["differs"]
            or stored[key]["changes"] != wanted[key]["changes"])
    ))
