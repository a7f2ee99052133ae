"""Columns that are functions of stored facts, re-derived after each batch.

Only rows whose inputs the batch touched are recomputed (a dataset that got
one of its derived-from facets or a version; a version that got a schema or
lifecycle facet; every run with an event), and only changed values are
written. Because each value is computed from the stored facts (not from the
batch), the result is the same whatever order the events arrived in:

* ``datasets``: ``fields``/``description``/``source_name``/``lifecycle_state``
  from the latest ``schema``/``documentation``/``dataSource``/
  ``lifecycleStateChange`` facets; ``current_version_uuid`` = the version with
  the greatest (``updated_at``, ``uuid``); ``fields`` rows mirror ``datasets.fields``.
* ``dataset_versions``: ``fields``/``lifecycle_state`` from the version's facets.
* ``dataset_drifts``: schema changes between consecutive versions of the
  datasets whose versions the batch wrote (``store.drift``).
* ``schema_contracts``: consumers' declared schemas against the latest written
  one, for the batch's declaring runs and the datasets it wrote (``store.contract``).
* ``runs``: nominal times and parent run from the ``nominalTime``/``parent`` facets;
  ``job_version_uuid`` from the run's inputs, outputs and source location.
* ``job_versions``: created/updated = min/max over their runs (merged like any
  row); a version no run uses any more is deleted (a run's shape grows as its
  events arrive) and one that lost a run has its span recomputed.
* ``jobs.current_version_uuid``: the job version of the latest run; when it changes,
  the job's rows of ``job_current_io`` are recomputed (``store.current_io``).
* ``column_fingerprints``: the output columns of the datasets whose column edges
  the batch wrote (``store.fingerprints``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from headwater.events.parse import parse_time
from headwater.store import contract, current_io, derive_sql, drift, fingerprints, rules
from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.extract import Facts
from headwater.store.keys import (
    dataset_node,
    job_node,
    name_uuid,
    run_node,
    text_or_none,
)
from headwater.store.merge import merge_into
from headwater.store.queries import LATEST_RUN, latest_run_of_job

if TYPE_CHECKING:
    from headwater.store.statements import IdCache, Statements

__all__ = ["after_batch"]

_IDS = sa.bindparam("ids", expanding=True)
_NAMES = sa.bindparam("names", expanding=True)

# Statements are built once: building and cache-keying a statement costs more
# than running it when a batch holds a single event.
_f, _d, _v, _r, _j, _ns = t.facets, t.datasets, t.dataset_versions, t.runs, t.jobs, t.namespaces
_LATEST_FACETS = sa.select(_f.c.subject, _f.c.name, _f.c.payload).where(
    _f.c.kind == sa.bindparam("kind"), _f.c.run_uuid == "", _f.c.subject.in_(_IDS),
    _f.c.name.in_(_NAMES))
_RUNS = (
    sa.select(_r.c.uuid, _r.c.job_id, _r.c.job_version_uuid, _r.c.nominal_start_time,
              _r.c.nominal_end_time, _r.c.parent_run_uuid, _r.c.created_at, _r.c.updated_at,
              _ns.c.name.label("job_namespace"), _j.c.name.label("job_name"))
    .join(_j, _j.c.id == _r.c.job_id).join(_ns, _ns.c.id == _j.c.namespace_id)
    .where(_r.c.uuid.in_(_IDS)))
_LOCATIONS = sa.select(_f.c.run_uuid, _f.c.payload).where(
    _f.c.kind == "job", _f.c.name == "sourceCodeLocation", _f.c.run_uuid.in_(_IDS))
# Inputs (0) and outputs (1) of runs, as dataset node parts, in one round trip.
_RUN_IO = sa.union_all(*(
    sa.select(io.c.run_uuid, sa.literal(side).label("side"), _ns.c.name.label("namespace"),
              _d.c.name)
    .join(_d, _d.c.id == io.c.dataset_id).join(_ns, _ns.c.id == _d.c.namespace_id)
    .where(io.c.run_uuid.in_(_IDS))
    for side, io in enumerate((t.run_inputs, t.run_outputs))
))
_UPDATE_RUN = _r.update().where(_r.c.uuid == sa.bindparam("b_uuid"))
_jv = t.job_versions
_DELETE_UNUSED_VERSIONS = _jv.delete().where(
    _jv.c.uuid.in_(_IDS), ~sa.exists().where(_r.c.job_version_uuid == _jv.c.uuid))
_RESPAN_VERSIONS = _jv.update().where(_jv.c.uuid.in_(_IDS)).values(
    created_at=sa.select(sa.func.min(_r.c.created_at))
    .where(_r.c.job_version_uuid == _jv.c.uuid).scalar_subquery(),
    updated_at=sa.select(sa.func.max(_r.c.updated_at))
    .where(_r.c.job_version_uuid == _jv.c.uuid).scalar_subquery())
_LATEST_RUN_VERSION = latest_run_of_job(LATEST_RUN.c.job_version_uuid)
_JOBS = sa.select(_j.c.id, _j.c.current_version_uuid, _LATEST_RUN_VERSION.label("latest")).where(
    _j.c.id.in_(_IDS))
_UPDATE_JOB = _j.update().where(_j.c.id == sa.bindparam("b_id"))

_JOB_VERSION_NS = uuid.UUID("0b8f8f5c-3c1d-4f57-8d0e-1c5f9f3d7a21")


def after_batch(conn: sa.Connection, sql: Statements, dataset_ids: IdCache,
                facts: Facts) -> None:
    """Re-derive what the batch of ``facts`` may have changed (see the module doc)."""
    # Datasets grouped by which derived columns their batch may have changed.
    by_columns: dict[frozenset[str], list[int]] = {}
    for key, columns in facts.touched_datasets.items():
        by_columns.setdefault(frozenset(columns), []).append(dataset_ids.get(key))
    for columns, ids in by_columns.items():
        for part in chunks(ids):
            _datasets(conn, sql, columns, part)
    for part in chunks(facts.touched_versions):
        _versions(conn, sql, part)
    # After the versions' fields: drift compares them, and contracts compare
    # consumers' declarations with the latest of them.
    latest = drift.refresh(conn, sql, list(facts.table_rows(rules.DATASET_VERSIONS)))
    contract.refresh(conn, sql, dataset_ids, facts, latest)
    for part in chunks(facts.touched_runs):
        _runs(conn, sql, facts, part)
    edges = facts.table_rows(rules.COLUMN_LINEAGE)
    if edges:
        fingerprints.refresh_after_batch(conn, sql, edges.values(),
                                         facts.table_rows(rules.RUNS), dataset_ids.get)


def _latest_facets(conn: sa.Connection, kind: str, subjects: Iterable[str],
                   names: list[str]) -> dict[tuple[str, str], Any]:
    rows = conn.execute(_LATEST_FACETS, {"kind": kind, "ids": list(subjects), "names": names})
    return {(row.subject, row.name): row.payload for row in rows}


def _get(payload: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(payload, Mapping):
            return None
        payload = payload.get(part)
    return payload


def _datasets(conn: sa.Connection, sql: Statements, columns: frozenset[str],
              ids: list[int]) -> None:
    """Re-derive ``columns`` of the datasets ``ids``."""
    changed: list[tuple[int, Any]] = []
    if "fields" in columns:
        derived = derive_sql.statements_for(sql.dialect)
        changed = [(row.id, row.fields) for row in sql.by_ids(
            conn, "datasets:changed-fields", derived.changed_dataset_fields, ids)]
        # That SELECT compared the fields already: the others need no fields update.
        changed_ids = {ds_id for ds_id, _ in changed}
        _update_datasets(conn, sql, columns, [i for i in ids if i in changed_ids])
        _update_datasets(conn, sql, columns - {"fields"},
                         [i for i in ids if i not in changed_ids])
    else:
        _update_datasets(conn, sql, columns, ids)
    derive_sql.write_field_rows(conn, changed)


def _update_datasets(conn: sa.Connection, sql: Statements, columns: frozenset[str],
                     ids: list[int]) -> None:
    if columns and ids:
        sql.by_ids(conn, f"datasets:derive:{','.join(sorted(columns))}",
                   derive_sql.update_datasets_for(sql.dialect, columns), ids)


def _versions(conn: sa.Connection, sql: Statements, uuids: list[str]) -> None:
    sql.by_ids(conn, "versions:derive",
               derive_sql.statements_for(sql.dialect).update_versions, uuids)


def _time_or_none(value: Any) -> Any:
    try:
        return parse_time(value, "nominalTime") if value is not None else None
    except Exception:  # a malformed optional facet must not reject the event
        return None


_RUN_COLUMNS = ("job_version_uuid", "nominal_start_time", "nominal_end_time", "parent_run_uuid")
_RUN_FACETS = ("nominalTime", "parent")


def _runs(conn: sa.Connection, sql: Statements, facts: Facts, run_uuids: list[str]) -> None:
    stored = {row.uuid: row for row in sql.by_ids(conn, "runs", _RUNS, run_uuids)}
    # Nominal times and parents change only with the facets they come from:
    # read those back only for runs whose batch brought one.
    batch_facets = facts.table_rows(rules.FACETS)
    carried = {u for u in run_uuids if any(
        ("run", run_node(u), "", name) in batch_facets for name in _RUN_FACETS)}
    facets = (_latest_facets(conn, "run", [run_node(u) for u in carried], list(_RUN_FACETS))
              if carried else {})
    locations = {row.run_uuid: text_or_none(_get(row.payload, "url"))
                 for row in sql.by_ids(conn, "runs:locations", _LOCATIONS, run_uuids)}
    io: dict[str, tuple[list[str], list[str]]] = {u: ([], []) for u in run_uuids}
    for row in sql.by_ids(conn, "runs:io", _RUN_IO, run_uuids):
        io[row.run_uuid][row.side].append(dataset_node(row.namespace, row.name))
    updates: list[dict[str, Any]] = []
    versions: dict[str, dict[str, Any]] = {}
    old_versions: set[str] = set()
    jobs: set[int] = set()
    for run_uuid, row in stored.items():
        inputs, outputs = sorted(io[run_uuid][0]), sorted(io[run_uuid][1])
        location = locations.get(run_uuid)
        job = job_node(row.job_namespace, row.job_name)
        version = name_uuid(_JOB_VERSION_NS, json.dumps([job, inputs, outputs, location]))
        merge_into(versions, version, {
            "uuid": version, "job_id": row.job_id, "location": location, "inputs": inputs,
            "outputs": outputs, "created_at": row.created_at, "updated_at": row.updated_at,
        }, rules.JOB_VERSIONS)
        want = {"job_version_uuid": version,
                "nominal_start_time": row.nominal_start_time,
                "nominal_end_time": row.nominal_end_time,
                "parent_run_uuid": row.parent_run_uuid}
        if run_uuid in carried:
            nominal = facets.get((run_node(run_uuid), "nominalTime"))
            parent = facets.get((run_node(run_uuid), "parent"))
            want.update(nominal_start_time=_time_or_none(_get(nominal, "nominalStartTime")),
                        nominal_end_time=_time_or_none(_get(nominal, "nominalEndTime")),
                        parent_run_uuid=text_or_none(_get(parent, "run", "runId")))
        if any(getattr(row, k) != want[k] for k in _RUN_COLUMNS):
            updates.append({"b_uuid": run_uuid, **want})
        if row.job_version_uuid not in (None, version):
            old_versions.add(row.job_version_uuid)
        # A job's current version can only move if one of its runs changed
        # version (or is new) or got an earlier created_at from this batch.
        if row.job_version_uuid != version or facts.run_created(run_uuid) == row.created_at:
            jobs.add(row.job_id)
    sql.upsert(conn, rules.JOB_VERSIONS, list(versions.values()))
    if updates:
        sql.bulk(conn, "runs:derived", t.runs, _UPDATE_RUN, updates)
    if old_versions:
        # A run's shape grew, so it left its old version: drop the version if no
        # run uses it any more, else recompute its span from the runs left.
        conn.execute(_DELETE_UNUSED_VERSIONS, {"ids": list(old_versions)})
        conn.execute(_RESPAN_VERSIONS, {"ids": list(old_versions)})
    if jobs:
        _current_job_versions(conn, sql, jobs)


def _current_job_versions(conn: sa.Connection, sql: Statements, job_ids: set[int]) -> None:
    updates = [
        {"b_id": row.id, "current_version_uuid": row.latest}
        for row in sql.by_ids(conn, "jobs:current", _JOBS, list(job_ids))
        if row.current_version_uuid != row.latest
    ]
    sql.bulk(conn, "jobs:current-version", t.jobs, _UPDATE_JOB, updates)
    current_io.refresh(conn, [update["b_id"] for update in updates])
