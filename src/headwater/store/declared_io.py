"""Static lineage: the inputs and outputs OpenLineage JobEvents declare for their jobs.

A BI dashboard that reads ``gold.revenue`` runs under no OpenLineage producer,
so no run ever links the two. A JobEvent (an event with a job and no run) that
lists ``inputs`` and/or ``outputs`` declares them: the job's latest such event,
by (event time, event hash) like every other "latest" in the store, replaces
what the job declared before (an empty list declares none). An event naming
neither list declares nothing and leaves the declaration as it was.

The declared datasets join the job's ``job_current_io`` rows
(:mod:`headwater.store.current_io`), so every walk that reads current lineage
-- the graph, impact, the v1 lineage -- finds the job between them. The
result depends only on the stored events, whatever their order: a late, older
declaration loses to the stored one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from headwater.events import ParsedEvent
from headwater.store import current_io, dialects
from headwater.store import tables as t
from headwater.store.keys import DatasetKey, dataset_key
from headwater.store.namespace_rules import Normaliser
from headwater.store.reads.common import dataset_ids, job_ids

__all__ = ["record"]

_jd, _jdio = t.job_declarations, t.job_declared_io

_hd, _hio = t.job_declaration_history, t.job_declared_io_history


def _declaring(events: Iterable[ParsedEvent],
               names: Normaliser | None) -> list[tuple[DatasetKey, ParsedEvent]]:
    """(job, event) of each event among ``events`` that declares its job's datasets."""
    found = []
    for ev in events:
        if ev.kind != "job" or ev.job is None:
            continue
        if "inputs" not in ev.event and "outputs" not in ev.event:
            continue
        found.append((ev.job if names is None else names.job(ev.job), ev))
    return found


def _declarations(declaring: list[tuple[DatasetKey, ParsedEvent]]) -> dict[DatasetKey, ParsedEvent]:
    """Each job's latest declaring event."""
    latest: dict[DatasetKey, ParsedEvent] = {}
    for job, ev in declaring:
        old = latest.get(job)
        if old is None or (ev.time, ev.event_hash) > (old.time, old.event_hash):
            latest[job] = ev
    return latest


def _datasets(event: dict[str, Any], direction: str,
              names: Normaliser | None) -> list[DatasetKey]:
    items = event.get(f"{direction}s") or ()
    keys = [dataset_key(item, f"{direction}s[{i}]") for i, item in enumerate(items)]
    return keys if names is None else [names.dataset(key) for key in keys]


def _keep_history(conn: sa.Connection, declaring: list[tuple[DatasetKey, ParsedEvent]],
                  jobs: dict[DatasetKey, int], names: Normaliser | None) -> None:
    """Add every declaration to the history; one already there is left as it is (the
    datasets are written again, for a fold that moved them)."""
    io = {
        (jobs[job], ev.event_hash, direction, dataset)
        for job, ev in declaring
        for direction in (current_io.INPUT, current_io.OUTPUT)
        for dataset in _datasets(ev.event, direction, names)
    }
    ids = dataset_ids(conn, [dataset for *_, dataset in io])
    dialect = conn.dialect.name
    declared = {(jobs[job], ev.event_hash): ev.time for job, ev in declaring}
    conn.execute(
        dialects.insert(dialect, _hd).on_conflict_do_nothing(
            index_elements=["job_id", "declared_hash"]),
        [{"job_id": job_id, "declared_hash": digest, "declared_time": time}
         for (job_id, digest), time in sorted(declared.items())],
    )
    if io:
        conn.execute(
            dialects.insert(dialect, _hio).on_conflict_do_nothing(
                index_elements=["job_id", "declared_hash", "direction", "dataset_id"]),
            [{"job_id": job_id, "declared_hash": digest, "direction": direction,
              "dataset_id": ids[dataset]}
             for job_id, digest, direction, dataset in sorted(io)],
        )


def record(conn: sa.Connection, events: Iterable[ParsedEvent],
           names: Normaliser | None = None) -> None:
    """Store the declarations of the JobEvents among ``events`` (new events, their
    jobs and datasets already written) that are newer than the stored ones; dataset
    names mapped by the namespace rules ``names``, as the facts were."""
    declaring = _declaring(events, names)
    if not declaring:
        return
    jobs = job_ids(conn, list({job for job, _ in declaring}))
    _keep_history(conn, declaring, jobs, names)
    latest = _declarations(declaring)
    stored = {
        row.job_id: (row.declared_time, row.declared_hash)
        for row in conn.execute(
            sa.select(_jd.c.job_id, _jd.c.declared_time, _jd.c.declared_hash).where(
                _jd.c.job_id.in_(list(jobs.values()))
            )
        )
    }
    changed = []
    for key, ev in latest.items():
        job_id = jobs[key]
        if job_id in stored and stored[job_id] >= (ev.time, ev.event_hash):
            continue
        io = [
            (direction, dataset)
            for direction in (current_io.INPUT, current_io.OUTPUT)
            for dataset in _datasets(ev.event, direction, names)
        ]
        ids = dataset_ids(conn, [dataset for _, dataset in io])
        conn.execute(_jdio.delete().where(_jdio.c.job_id == job_id))
        rows = {(direction, ids[dataset]) for direction, dataset in io}
        if rows:
            conn.execute(
                _jdio.insert(),
                [
                    {"job_id": job_id, "direction": direction, "dataset_id": dataset_id}
                    for direction, dataset_id in sorted(rows)
                ],
            )
        conn.execute(_jd.delete().where(_jd.c.job_id == job_id))
        conn.execute(
            _jd.insert(),
            {"job_id": job_id, "declared_time": ev.time, "declared_hash": ev.event_hash},
        )
        changed.append(job_id)
    current_io.refresh(conn, changed)
