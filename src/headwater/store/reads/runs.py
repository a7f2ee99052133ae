"""Read queries for runs: records, a job's runs, run facets, and which versions a run read.

Run state comes from the store's order-independent merge (a terminal event wins);
here it is only renamed to Marquez's vocabulary.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.queries import input_version_uuid
from headwater.store.reads.common import Page, aware, chunks, paged
from headwater.store.reads.parents import child_run_rows
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.scoped_select import ScopedSelect
from headwater.store.reads.visibility import run_namespaces

__all__ = [
    "InputVersion",
    "MARQUEZ_RUN_STATES",
    "child_runs",
    "duration_ms",
    "get_run",
    "list_runs",
    "run_facets",
    "run_input_versions",
    "run_records",
    "run_rows",
    "upstream_runs",
]

#: OpenLineage eventType of the winning event -> Marquez run state.
MARQUEZ_RUN_STATES = {
    "START": "RUNNING",
    "RUNNING": "RUNNING",
    "COMPLETE": "COMPLETED",
    "FAIL": "FAILED",
    "ABORT": "ABORTED",
}

_r, _j, _ns, _ds = t.runs, t.jobs, t.namespaces, t.datasets


@dataclass(frozen=True, slots=True)
class InputVersion:
    """A dataset a run read, and the version it read (None: no version existed before)."""

    run_uuid: str
    dataset_id: int
    namespace: str
    name: str
    version: str | None
    read_at: Any


def run_input_versions(conn: sa.Connection, run_uuids: Sequence[str]) -> list[InputVersion]:
    """Which dataset version each run read.

    The store does not pin it at write time (events arrive in any order); it is the
    latest version of the dataset completed strictly before the run first listed
    the input, written by another run (or by a DatasetEvent) — see
    :func:`headwater.store.queries.input_version_uuid`.
    """
    result: list[InputVersion] = []
    for batch in chunks(sorted(set(run_uuids))):
        result += [InputVersion(*row) for row in _INPUT_VERSIONS.rows(conn, {"ids": batch})]
    return result


def _input_versions_statement() -> sa.Select[Any]:
    ri = t.run_inputs
    # The rule itself lives with the tables it reads (headwater.store.queries).
    version = input_version_uuid(ri)
    return (
        sa.select(
            ri.c.run_uuid,
            ri.c.dataset_id,
            _ns.c.name.label("namespace"),
            _ds.c.name,
            version.label("version"),
            ri.c.created_at,
        )
        .join(_ds, _ds.c.id == ri.c.dataset_id)
        .join(_ns, _ns.c.id == _ds.c.namespace_id)
        .where(ri.c.run_uuid.in_(_IDS))
        .order_by(ri.c.run_uuid, _ns.c.name, _ds.c.name)
    )


def duration_ms(started: datetime | None, ended: datetime | None) -> int | None:
    """Milliseconds from start to end, or None unless both are known."""
    if started is None or ended is None:
        return None
    return int((ended - started).total_seconds() * 1000)


def _run_select() -> sa.Select[Any]:
    return (
        sa.select(_r, _j.c.name.label("job_name"), _ns.c.name.label("namespace"))
        .join(_j, _j.c.id == _r.c.job_id)
        .join(_ns, _ns.c.id == _j.c.namespace_id)
    )


# Every list statement of a record takes its ids (run uuids, subjects) as ``ids``.
_IDS = sa.bindparam("ids", expanding=True)
_RUNS = ScopedSelect(
    lambda scope: _run_select().where(_r.c.uuid.in_(_IDS), scope.where(_ns.c.name))
)


def run_rows(
    conn: sa.Connection, run_uuids: Sequence[str], scope: NamespaceScope = EVERYTHING
) -> list[Any]:
    """The runs (with ``job_name`` and ``namespace``) of ``run_uuids`` whose job is in ``scope``."""
    rows: list[Any] = []
    for batch in chunks(sorted(set(run_uuids))):
        rows += _RUNS.rows(conn, scope, {"ids": batch})
    return rows


def run_records(
    conn: sa.Connection, run_uuids: Sequence[str], scope: NamespaceScope = EVERYTHING
) -> list[dict[str, Any]]:
    """Marquez ``Run`` records, in the order of ``run_uuids`` (unknown ids, and runs of
    jobs outside ``scope``, skipped)."""
    rows = {row.uuid: row for row in run_rows(conn, run_uuids, scope)}
    return _records(conn, [rows[u] for u in dict.fromkeys(run_uuids) if u in rows], scope)


def _records(
    conn: sa.Connection, rows: Sequence[sa.Row[Any]], scope: NamespaceScope = EVERYTHING
) -> list[dict[str, Any]]:
    if not rows:
        return []
    uuids = [row.uuid for row in rows]
    inputs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in run_input_versions(conn, uuids):
        if item.version is not None and scope.sees(item.namespace):
            inputs[item.run_uuid].append(
                {
                    "datasetVersionId": {
                        "namespace": item.namespace,
                        "name": item.name,
                        "version": item.version,
                    },
                    "facets": {},
                }
            )
    outputs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for batch in chunks(uuids):
        for run_uuid, version, name, namespace in _OUTPUTS.rows(conn, scope, {"ids": batch}):
            outputs[run_uuid].append(
                {
                    "datasetVersionId": {"namespace": namespace, "name": name, "version": version},
                    "facets": {},
                }
            )
    facets = _facets_by_run(conn, uuids)
    records = []
    for row in rows:
        started, ended = aware(row.started_at), aware(row.ended_at)
        duration = duration_ms(started, ended)
        records.append(
            {
                "id": row.uuid,
                "createdAt": aware(row.created_at),
                "updatedAt": aware(row.updated_at),
                "nominalStartTime": aware(row.nominal_start_time),
                "nominalEndTime": aware(row.nominal_end_time),
                "state": MARQUEZ_RUN_STATES.get(row.state or "", "NEW"),
                "startedAt": started,
                "endedAt": ended,
                "durationMs": duration,
                "args": {},
                "jobVersion": (
                    {
                        "namespace": row.namespace,
                        "name": row.job_name,
                        "version": row.job_version_uuid,
                    }
                    if row.job_version_uuid
                    else None
                ),
                "inputDatasetVersions": inputs.get(row.uuid, []),
                "outputDatasetVersions": outputs.get(row.uuid, []),
                "context": {},
                "facets": scope.facets(facets.get(row.uuid, {})),
            }
        )
    return records


def _outputs_statement(scope: NamespaceScope) -> sa.Select[Any]:
    ro = t.run_outputs
    return (
        sa.select(ro.c.run_uuid, ro.c.dataset_version_uuid, _ds.c.name, _ns.c.name)
        .join(_ds, _ds.c.id == ro.c.dataset_id)
        .join(_ns, _ns.c.id == _ds.c.namespace_id)
        .where(ro.c.run_uuid.in_(_IDS), scope.where(_ns.c.name))
        .order_by(ro.c.run_uuid, _ns.c.name, _ds.c.name)
    )


_INPUT_VERSIONS = ListSelect(_input_versions_statement())
_OUTPUTS = ScopedSelect(_outputs_statement)
# By name within a run: the same facet order whichever plan the database picks.
_RUN_FACETS = ListSelect(
    sa.select(t.facets.c.subject, t.facets.c.name, t.facets.c.payload)
    .where(t.facets.c.kind == "run", t.facets.c.run_uuid == "", t.facets.c.subject.in_(_IDS))
    .order_by(t.facets.c.subject, t.facets.c.name)
)


def _facets_by_run(conn: sa.Connection, uuids: Sequence[str]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = defaultdict(dict)
    for batch in chunks(uuids):
        subjects = [f"run:{u}" for u in batch]
        for subject, name, payload in _RUN_FACETS.rows(conn, {"ids": subjects}):
            result[subject[len("run:") :]][name] = payload
    return result


def get_run(
    conn: sa.Connection, run_uuid: str, scope: NamespaceScope = EVERYTHING
) -> dict[str, Any]:
    """A run; a run of a job outside ``scope`` is :class:`NotFoundError` like an unknown one."""
    records = run_records(conn, [run_uuid], scope)
    if not records:
        raise NotFoundError(f"run '{run_uuid}' not found")
    return records[0]


def list_runs(
    conn: sa.Connection, job_id: int, page: Page, scope: NamespaceScope = EVERYTHING
) -> tuple[list[dict[str, Any]], int]:
    """A job's runs, newest first (the job is one the caller may see)."""
    query = _run_select().where(_r.c.job_id == job_id)
    rows, total = paged(conn, query, [_r.c.created_at.desc(), _r.c.uuid.desc()], page)
    return _records(conn, rows, scope), total


def run_facets(
    conn: sa.Connection, run_uuid: str, kind: str, scope: NamespaceScope = EVERYTHING
) -> dict[str, Any]:
    """The run's own facets (``kind='run'``) or its job's facets as of the run (``'job'``)."""
    row = conn.execute(
        _run_select().where(_r.c.uuid == run_uuid, scope.where(_ns.c.name))
    ).first()
    if row is None:
        raise NotFoundError(f"run '{run_uuid}' not found")
    f = t.facets
    if kind == "run":
        where = [f.c.kind == "run", f.c.subject == f"run:{run_uuid}", f.c.run_uuid == ""]
        own = dict(conn.execute(sa.select(f.c.name, f.c.payload).where(*where)).all())
        return scope.facets(own)
    job_node = f"job:{row.namespace}:{row.job_name}"
    # Job facets kept per run (e.g. sourceCodeLocation) override the job's latest ones.
    facets = dict(
        conn.execute(
            sa.select(f.c.name, f.c.payload).where(
                f.c.kind == "job", f.c.subject == job_node, f.c.run_uuid == ""
            )
        ).all()
    )
    facets.update(
        conn.execute(
            sa.select(f.c.name, f.c.payload).where(
                f.c.kind == "job", f.c.subject == job_node, f.c.run_uuid == run_uuid
            )
        ).all()
    )
    return scope.facets(facets)


def child_runs(
    conn: sa.Connection, run_uuid: str, page: Page, scope: NamespaceScope = EVERYTHING
) -> tuple[list[dict[str, Any]], int]:
    """The runs whose ``parent`` facet names ``run_uuid``, oldest first, each with its job.

    A parent run whose own events never arrived still has children; only a run id
    that is neither stored nor anyone's parent is :class:`NotFoundError`. With a
    limited ``scope`` only the children of jobs inside it are listed and counted, and
    the parent must be a stored run inside it.
    """
    if scope.limited and not run_rows(conn, [run_uuid], scope):
        raise NotFoundError(f"run '{run_uuid}' not found")
    uuids, total = child_run_rows(conn, run_uuid, page, scope.where(_ns.c.name))
    if total == 0 and not run_rows(conn, [run_uuid]):
        raise NotFoundError(f"run '{run_uuid}' not found")
    rows = {row.uuid: row for row in run_rows(conn, uuids)}
    ordered = [rows[u] for u in uuids if u in rows]
    records = _records(conn, ordered, scope)
    for record, row in zip(records, ordered, strict=True):
        record["job"] = {"namespace": row.namespace, "name": row.job_name}
    return records, total


def upstream_runs(
    conn: sa.Connection, run_uuid: str, depth: int, scope: NamespaceScope = EVERYTHING
) -> list[dict[str, Any]]:
    """Marquez's ``UpstreamRunLineage.runs``: the run, then the runs that produced the
    dataset versions it read, ``depth`` hops up; ordered by hop, then job name.

    Each entry is ``{job: {namespace, name, version}, run: {id, start, end, status},
    inputs: [{namespace, name, version, producedByRunId}]}``; an input read before any
    version of it existed is left out (it has no version to name). Inputs outside
    ``scope``, and producing runs of jobs outside it, are left out too.
    """

    dv = t.dataset_versions
    entries: list[dict[str, Any]] = []
    seen = {run_uuid}
    frontier = [run_uuid]
    for _hop in range(depth + 1):
        if not frontier:
            break
        rows = run_rows(conn, frontier, scope)
        inputs = [i for i in run_input_versions(conn, [r.uuid for r in rows])
                  if i.version is not None and scope.sees(i.namespace)]
        producers: dict[str, str | None] = {}
        for batch in chunks(sorted({i.version for i in inputs if i.version})):
            query = sa.select(dv.c.uuid, dv.c.run_uuid).where(dv.c.uuid.in_(batch))
            producers.update(dict(conn.execute(query).all()))
        if scope.limited:
            seen_runs = run_namespaces(conn, [p for p in producers.values() if p])
            producers = {v: p if p and scope.sees(seen_runs.get(p)) else None
                         for v, p in producers.items()}
        by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in inputs:
            by_run[item.run_uuid].append(
                {
                    "namespace": item.namespace,
                    "name": item.name,
                    "version": item.version,
                    "producedByRunId": producers.get(item.version or ""),
                }
            )
        for row in sorted(rows, key=lambda r: (r.job_name, r.namespace, r.uuid)):
            entries.append(
                {
                    "job": {
                        "namespace": row.namespace,
                        "name": row.job_name,
                        "version": row.job_version_uuid,
                    },
                    "run": {
                        "id": row.uuid,
                        "start": aware(row.started_at),
                        "end": aware(row.ended_at),
                        "status": MARQUEZ_RUN_STATES.get(row.state or "", "NEW"),
                    },
                    "inputs": by_run.get(row.uuid, []),
                }
            )
        frontier = sorted({p for p in producers.values() if p and p not in seen})
        seen.update(frontier)
    return entries
