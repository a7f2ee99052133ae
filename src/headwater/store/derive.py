"""Columns that are functions of stored facts, re-derived after each batch.

Only rows the batch touched are recomputed, and only changed values are
written. Because each value is computed from the stored facts (not from the
batch), the result is the same whatever order the events arrived in:

* ``datasets``: ``fields``/``description``/``source_name``/``lifecycle_state``
  from the latest ``schema``/``documentation``/``dataSource``/
  ``lifecycleStateChange`` facets; ``current_version_uuid`` = the version with
  the greatest (``updated_at``, ``uuid``); ``fields`` rows mirror ``datasets.fields``.
* ``dataset_versions``: ``fields``/``lifecycle_state`` from the version's facets.
* ``runs``: nominal times and parent run from the ``nominalTime``/``parent`` facets;
  ``job_version_uuid`` from the run's inputs, outputs and source location.
* ``job_versions``: created/updated = min/max over their runs (merged like any
  row); a version no run uses any more is deleted (a run's shape grows as its
  events arrive) and one that lost a run has its span recomputed.
* ``jobs.current_version_uuid``: the job version of the latest run.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from headwater.store import rules
from headwater.store import tables as t
from headwater.store.extract import (
    Facts,
    dataset_node,
    job_node,
    parse_time,
    run_node,
)
from headwater.store.merge import merge_into, upsert_statement

if TYPE_CHECKING:
    from headwater.store.writer import Writer

__all__ = ["after_batch"]

_JOB_VERSION_NS = uuid.UUID("0b8f8f5c-3c1d-4f57-8d0e-1c5f9f3d7a21")


def after_batch(conn: sa.Connection, writer: Writer, facts: Facts) -> None:
    from headwater.store.writer import chunks

    dataset_ids = {key: writer.dataset_ids.get(key) for key in facts.touched_datasets}
    for part in chunks(dataset_ids.items()):
        _datasets(conn, dict(part))
    for part in chunks(facts.touched_versions):
        _versions(conn, part)
    for part in chunks(facts.touched_runs):
        _runs(conn, part)


def _latest_facets(conn: sa.Connection, kind: str, subjects: Iterable[str],
                   names: Iterable[str]) -> dict[tuple[str, str], Any]:
    f = t.facets
    query = sa.select(f.c.subject, f.c.name, f.c.payload).where(
        f.c.kind == kind, f.c.run_uuid == "", f.c.subject.in_(list(subjects)),
        f.c.name.in_(list(names)))
    return {(row.subject, row.name): row.payload for row in conn.execute(query)}


def _get(payload: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(payload, Mapping):
            return None
        payload = payload.get(part)
    return payload


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _fields(schema: Any) -> list[Any] | None:
    value = _get(schema, "fields")
    return value if isinstance(value, list) else None


def _datasets(conn: sa.Connection, ids: dict[tuple[str, str], int | None]) -> None:
    node_of = {dataset_node(*key): ds_id for key, ds_id in ids.items()}
    facets = _latest_facets(conn, "dataset", node_of,
                            ("schema", "documentation", "dataSource", "lifecycleStateChange"))
    v = t.dataset_versions
    latest = (sa.select(v.c.uuid).where(v.c.dataset_id == t.datasets.c.id)
              .order_by(v.c.updated_at.desc(), v.c.uuid.desc()).limit(1).scalar_subquery())
    current = dict(conn.execute(sa.select(t.datasets.c.id, latest).where(
        t.datasets.c.id.in_(list(ids.values())))).all())
    d = t.datasets
    stored = {row.id: row for row in conn.execute(sa.select(
        d.c.id, d.c.namespace_id, d.c.source_name, d.c.description, d.c.fields,
        d.c.lifecycle_state, d.c.current_version_uuid).where(d.c.id.in_(list(ids.values()))))}
    updates, refields = [], []
    for (namespace, _name), ds_id in ids.items():
        node = dataset_node(namespace, _name)
        want = {
            "source_name": _str(_get(facets.get((node, "dataSource")), "name")) or namespace,
            "description": _str(_get(facets.get((node, "documentation")), "description")),
            "fields": _fields(facets.get((node, "schema"))),
            "lifecycle_state": _str(_get(facets.get((node, "lifecycleStateChange")),
                                         "lifecycleStateChange")),
            "current_version_uuid": current.get(ds_id),
        }
        row = stored[ds_id]
        if any(getattr(row, k) != val for k, val in want.items()):
            updates.append({"b_id": ds_id, **want})
            if row.fields != want["fields"]:
                refields.append((ds_id, want["fields"] or []))
    if updates:
        conn.execute(d.update().where(d.c.id == sa.bindparam("b_id")), updates)
    if refields:
        conn.execute(t.fields.delete().where(t.fields.c.dataset_id.in_([i for i, _ in refields])))
        rows = []
        for ds_id, fields in refields:
            seen: set[str] = set()
            for pos, field in enumerate(fields):
                name = _str(_get(field, "name"))
                if name is None or name in seen:
                    continue
                seen.add(name)
                rows.append({"dataset_id": ds_id, "name": name, "position": pos,
                             "type": _str(_get(field, "type")),
                             "description": _str(_get(field, "description"))})
        if rows:
            conn.execute(t.fields.insert(), rows)


def _versions(conn: sa.Connection, uuids: list[str]) -> None:
    facets = _latest_facets(conn, "dataset_version", uuids, ("schema", "lifecycleStateChange"))
    v = t.dataset_versions
    updates = []
    for row in conn.execute(sa.select(v.c.uuid, v.c.fields, v.c.lifecycle_state)
                            .where(v.c.uuid.in_(uuids))):
        want = {"fields": _fields(facets.get((row.uuid, "schema"))),
                "lifecycle_state": _str(_get(facets.get((row.uuid, "lifecycleStateChange")),
                                             "lifecycleStateChange"))}
        if row.fields != want["fields"] or row.lifecycle_state != want["lifecycle_state"]:
            updates.append({"b_uuid": row.uuid, **want})
    if updates:
        conn.execute(v.update().where(v.c.uuid == sa.bindparam("b_uuid")), updates)


def _time_or_none(value: Any) -> Any:
    try:
        return parse_time(value, "nominalTime") if value is not None else None
    except Exception:  # a malformed optional facet must not reject the event
        return None


def _runs(conn: sa.Connection, run_uuids: list[str]) -> None:
    r, j, ns = t.runs, t.jobs, t.namespaces
    stored = {row.uuid: row for row in conn.execute(
        sa.select(r.c.uuid, r.c.job_id, r.c.job_version_uuid, r.c.nominal_start_time,
                  r.c.created_at, r.c.updated_at,
                  r.c.nominal_end_time, r.c.parent_run_uuid, ns.c.name.label("job_namespace"),
                  j.c.name.label("job_name"))
        .join(j, j.c.id == r.c.job_id).join(ns, ns.c.id == j.c.namespace_id)
        .where(r.c.uuid.in_(run_uuids)))}
    facets = _latest_facets(conn, "run", [run_node(u) for u in run_uuids],
                            ("nominalTime", "parent"))
    f = t.facets
    locations = {row.run_uuid: _str(_get(row.payload, "url")) for row in conn.execute(
        sa.select(f.c.run_uuid, f.c.payload).where(
            f.c.kind == "job", f.c.name == "sourceCodeLocation", f.c.run_uuid.in_(run_uuids)))}
    io: dict[str, tuple[list[str], list[str]]] = {u: ([], []) for u in run_uuids}
    for index, table in enumerate((t.run_inputs, t.run_outputs)):
        d = t.datasets
        query = (sa.select(table.c.run_uuid, ns.c.name.label("namespace"), d.c.name)
                 .join(d, d.c.id == table.c.dataset_id).join(ns, ns.c.id == d.c.namespace_id)
                 .where(table.c.run_uuid.in_(run_uuids)))
        for row in conn.execute(query):
            io[row.run_uuid][index].append(dataset_node(row.namespace, row.name))
    updates, versions = [], {}
    old_versions, jobs = set(), set()
    for run_uuid, row in stored.items():
        inputs, outputs = sorted(io[run_uuid][0]), sorted(io[run_uuid][1])
        location = locations.get(run_uuid)
        job = job_node(row.job_namespace, row.job_name)
        version = str(uuid.uuid5(_JOB_VERSION_NS, json.dumps([job, inputs, outputs, location])))
        merge_into(versions, version, {
            "uuid": version, "job_id": row.job_id, "location": location, "inputs": inputs,
            "outputs": outputs, "created_at": row.created_at, "updated_at": row.updated_at,
        }, rules.JOB_VERSIONS)
        nominal = facets.get((run_node(run_uuid), "nominalTime"))
        parent = facets.get((run_node(run_uuid), "parent"))
        want = {"job_version_uuid": version,
                "nominal_start_time": _time_or_none(_get(nominal, "nominalStartTime")),
                "nominal_end_time": _time_or_none(_get(nominal, "nominalEndTime")),
                "parent_run_uuid": _str(_get(parent, "run", "runId"))}
        if any(getattr(row, k) != val for k, val in want.items()):
            updates.append({"b_uuid": run_uuid, **want})
        if row.job_version_uuid not in (None, version):
            old_versions.add(row.job_version_uuid)
        jobs.add(row.job_id)
    jv = t.job_versions
    if versions:
        conn.execute(upsert_statement(rules.JOB_VERSIONS, conn.dialect.name), list(versions.values()))
    if updates:
        conn.execute(r.update().where(r.c.uuid == sa.bindparam("b_uuid")), updates)
    if old_versions:
        # A run's shape grew, so it left its old version: drop the version if no
        # run uses it any more, else recompute its span from the runs left.
        unused = ~sa.exists().where(r.c.job_version_uuid == jv.c.uuid)
        conn.execute(jv.delete().where(jv.c.uuid.in_(list(old_versions)), unused))
        first = sa.select(sa.func.min(r.c.created_at)).where(r.c.job_version_uuid == jv.c.uuid)
        last = sa.select(sa.func.max(r.c.updated_at)).where(r.c.job_version_uuid == jv.c.uuid)
        conn.execute(jv.update().where(jv.c.uuid.in_(list(old_versions))).values(
            created_at=first.scalar_subquery(), updated_at=last.scalar_subquery()))
    _current_job_versions(conn, jobs)


def _current_job_versions(conn: sa.Connection, job_ids: set[int]) -> None:
    r, j = t.runs, t.jobs
    latest = (sa.select(r.c.job_version_uuid).where(r.c.job_id == j.c.id)
              .order_by(r.c.created_at.desc(), r.c.uuid.desc()).limit(1).scalar_subquery())
    updates = [
        {"b_id": row.id, "current_version_uuid": row.latest}
        for row in conn.execute(sa.select(j.c.id, j.c.current_version_uuid, latest.label("latest"))
                                .where(j.c.id.in_(list(job_ids))))
        if row.current_version_uuid != row.latest
    ]
    if updates:
        conn.execute(j.update().where(j.c.id == sa.bindparam("b_id")), updates)
