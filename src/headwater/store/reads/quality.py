"""A dataset's quality facets as stored, one group per run (``GET /api/v2/datasets/{id}/quality``).

The write path keeps every facet raw in ``facets``: a run's
``inputFacets``/``outputFacets`` per (dataset, run), an output's dataset facets
per dataset version, and a dataset's latest dataset facets; and every quality
facet sent on a read-only input's dataset, which belongs to no version, in
``dataset_facet_history``. Quality is read from those rows. An input's dataset
facet joins the run (or version) of the event that sent it when that one's own
rows are present, else the run of that event, and stands alone when no run sent it
(a DatasetEvent).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.dataset_facet_history import dataset_facet_history
from headwater.store.reads.common import naive
from headwater.store.reads.run_facets_at import straddling_facets
from headwater.store.reads.scope import EVERYTHING, NamespaceScope

__all__ = ["quality_facets"]

_f, _dv, _r, _j, _ns = t.facets, t.dataset_versions, t.runs, t.jobs, t.namespaces

#: The finest step of the stored times: "before ``until``" is "at or before this much earlier".
_TICK = timedelta(microseconds=1)


class _Sent(NamedTuple):
    """A facet row as the queries below select it."""

    run_uuid: str
    version: str | None
    name: str
    payload: Any
    event_time: datetime
    event_hash: str
    kind: str


def _in_window(
    since: datetime | None, until: datetime | None, column: sa.ColumnElement[Any] = _f.c.event_time
) -> list[sa.ColumnElement[bool]]:
    where = []
    if since is not None:
        where.append(column >= naive(since))
    if until is not None:
        where.append(column < naive(until))
    return where


def quality_facets(
    conn: sa.Connection,
    dataset_id: int,
    node_id: str,
    names: Sequence[str],
    since: datetime | None = None,
    until: datetime | None = None,
    scope: NamespaceScope = EVERYTHING,
) -> list[dict[str, Any]]:
    """The facets ``names`` sent about the dataset in [``since``, ``until``), grouped.

    One dict per run (or per dataset event): ``time`` (its latest facet's event
    time, naive UTC), ``runId``, ``job`` (``job:NS:NAME``), ``version`` (the
    version the run wrote, if any) and ``facets`` (name -> payload). Runs of
    jobs outside ``scope`` are left out.
    """
    window = _in_window(since, until)
    per_run = sa.select(
        _f.c.run_uuid,
        sa.null().label("version"),
        _f.c.name,
        _f.c.payload,
        _f.c.event_time,
        _f.c.event_hash,
        _f.c.kind,
    ).where(
        _f.c.kind.in_(("input", "output")), _f.c.subject == node_id, _f.c.name.in_(names), *window
    )
    per_version = (
        sa.select(
            sa.func.coalesce(_dv.c.run_uuid, "").label("run_uuid"),
            _dv.c.uuid.label("version"),
            _f.c.name,
            _f.c.payload,
            _f.c.event_time,
            _f.c.event_hash,
            _f.c.kind,
        )
        .select_from(_f.join(_dv, _dv.c.uuid == _f.c.subject))
        .where(
            _f.c.kind == "dataset_version",
            _dv.c.dataset_id == dataset_id,
            _f.c.name.in_(names),
            *window,
        )
    )
    latest = sa.select(
        _f.c.run_uuid,
        sa.null().label("version"),
        _f.c.name,
        _f.c.payload,
        _f.c.event_time,
        _f.c.event_hash,
        _f.c.kind,
    ).where(_f.c.kind == "dataset", _f.c.subject == node_id, _f.c.name.in_(names), *window)
    h = dataset_facet_history
    sent_by_inputs = sa.select(
        sa.func.coalesce(h.c.run_uuid, "").label("run_uuid"),
        sa.null().label("version"),
        h.c.name,
        h.c.payload,
        h.c.event_time,
        h.c.event_hash,
        sa.literal("dataset").label("kind"),
    ).where(h.c.subject == node_id, h.c.name.in_(names), *_in_window(since, until, h.c.event_time))
    queries = (per_run, per_version, latest, sent_by_inputs)
    rows: list[Any] = [row for query in queries for row in conn.execute(query)]
    if until is not None:
        rows += _sent_before(conn, dataset_id, node_id, names, since, until)
    groups: dict[str, dict[str, Any]] = {}
    # The run or version each event's per-run or per-version rows belong to, else the
    # run of the event that sent an input's dataset facet: a run's START and COMPLETE
    # may both send it, and the run is one observation, not one per event.
    owner = {row.event_hash: row.run_uuid or row.version for row in rows if row.kind != "dataset"}
    for row in rows:
        if row.kind == "dataset" and row.run_uuid:
            owner.setdefault(row.event_hash, row.run_uuid)
    # Within a group the newest facet of a name wins, and a per-run or per-version
    # row wins over the dataset's own.
    order = sorted(rows, key=lambda r: (r.kind != "dataset", r.event_time, r.event_hash))
    for row in order:
        key = owner.get(row.event_hash) or row.run_uuid or f"event:{row.event_hash}"
        group = groups.setdefault(
            key,
            {
                "time": row.event_time,
                "runId": row.run_uuid or None,
                "job": None,
                "version": None,
                "facets": {},
            },
        )
        group["runId"] = group["runId"] or row.run_uuid or None
        group["time"] = max(group["time"], row.event_time)
        group["version"] = group["version"] or row.version
        # The per-run and per-version rows come after the dataset's latest, and win.
        group["facets"][row.name] = row.payload
    _name_jobs(conn, groups, scope)
    return list(groups.values())


def _sent_before(
    conn: sa.Connection,
    dataset_id: int,
    node_id: str,
    names: Sequence[str],
    since: datetime | None,
    until: datetime,
) -> list[_Sent]:
    """The per-run and per-version facets that runs going on at ``until`` had sent in
    the window, in place of the rows their later events left (which the window leaves out)."""
    start = naive(since)
    end = naive(until)
    assert end is not None
    found = []
    per_run = _f.c.kind.in_(("input", "output"))
    for _, which, sent in straddling_facets(
        conn, {dataset_id: node_id}, names, per_run, end - _TICK
    ):
        if start is not None and sent.event_time < start:
            continue
        version = which.subject if which.kind == "dataset_version" else None
        found.append(
            _Sent(
                which.run_uuid,
                version,
                which.name,
                sent.payload,
                sent.event_time,
                sent.event_hash,
                which.kind,
            )
        )
    return found


def _name_jobs(
    conn: sa.Connection, groups: dict[str, dict[str, Any]], scope: NamespaceScope
) -> None:
    """Fill in each run's job; drop the runs of jobs ``scope`` does not see."""
    runs = sorted({g["runId"] for g in groups.values() if g["runId"]})
    jobs: dict[str, tuple[str, str]] = {}
    for start in range(0, len(runs), 500):
        query = (
            sa.select(_r.c.uuid, _ns.c.name.label("namespace"), _j.c.name)
            .select_from(
                _r.join(_j, _j.c.id == _r.c.job_id).join(_ns, _ns.c.id == _j.c.namespace_id)
            )
            .where(_r.c.uuid.in_(runs[start : start + 500]))
        )
        jobs.update({row.uuid: (row.namespace, row.name) for row in conn.execute(query)})
    for key, group in list(groups.items()):
        job = jobs.get(group["runId"] or "")
        if job is not None and not scope.sees(job[0]):
            del groups[key]
        elif job is not None:
            group["job"] = f"job:{job[0]}:{job[1]}"
