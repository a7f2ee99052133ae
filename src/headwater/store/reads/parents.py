"""Parent/child relations between runs and jobs, from OpenLineage ``parent`` run facets.

A Spark application run is the parent of one child run per action (ARCHITECTURE.md,
contract 2): each child run's ``parent`` facet names the parent run and its job. The
store keeps the parent run id on ``runs.parent_run_uuid`` and the facet itself in
``facets``; the parent's *job* is read from the facet, because the parent run's own
events may never have arrived.

- :func:`run_parents` — each run's parent (run id, job namespace and name);
- :func:`job_parents` — each job's parent job, from the parent facet of its latest
  run that has one;
- :func:`child_runs` — a run's children, paged.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.queries import LATEST_RUN, latest_run_of_job
from headwater.store.reads.common import Page, chunks, paged

__all__ = [
    "ParentRef", "child_run_rows", "job_parents", "job_uuid", "latest_runs_per_job", "run_parents",
]

_r, _j, _ns, _f = t.runs, t.jobs, t.namespaces, t.facets

# headwater has no job uuids of its own; Marquez's ``parentJobUuid`` is derived
# from the parent job's node id so it is stable across servers and restarts.
_JOB_UUID_NAMESPACE = uuid.UUID("6f1c1f0e-3c1e-4b8e-9a4e-6a0b3f1d2c7a")


def job_uuid(namespace: str, name: str) -> str:
    """A stable UUID standing for job (namespace, name) where Marquez expects a job uuid."""
    return str(uuid.uuid5(_JOB_UUID_NAMESPACE, f"job:{namespace}:{name}"))


@dataclass(frozen=True, slots=True)
class ParentRef:
    """The parent named by a run's ``parent`` facet (job fields None if it lacks them)."""

    run_id: str
    job_namespace: str | None
    job_name: str | None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _parent_ref(run_uuid: str | None, payload: Any) -> ParentRef | None:
    facet = payload if isinstance(payload, dict) else {}
    run = facet.get("run") if isinstance(facet.get("run"), dict) else {}
    job = facet.get("job") if isinstance(facet.get("job"), dict) else {}
    run_id = _text(run.get("runId")) or run_uuid
    if run_id is None:
        return None
    return ParentRef(run_id, _text(job.get("namespace")), _text(job.get("name")))


def run_parents(conn: sa.Connection, run_uuids: Sequence[str]) -> dict[str, ParentRef]:
    """The parent of each run that has one, keyed by run id.

    The facet's job is used when present; otherwise the parent run's stored job.
    """
    wanted = sorted(set(run_uuids))
    parent_of: dict[str, str] = {}
    for batch in chunks(wanted):
        for child, parent in conn.execute(
            sa.select(_r.c.uuid, _r.c.parent_run_uuid).where(
                _r.c.uuid.in_(batch), _r.c.parent_run_uuid.is_not(None)
            )
        ):
            parent_of[child] = parent
    facets: dict[str, Any] = {}
    for batch in chunks(sorted(parent_of)):
        for subject, payload in conn.execute(
            sa.select(_f.c.subject, _f.c.payload).where(
                _f.c.kind == "run",
                _f.c.subject.in_([f"run:{u}" for u in batch]),
                _f.c.run_uuid == "",
                _f.c.name == "parent",
            )
        ):
            facets[subject[len("run:") :]] = payload
    result: dict[str, ParentRef] = {}
    missing_job: set[str] = set()
    for child, parent in parent_of.items():
        ref = _parent_ref(parent, facets.get(child))
        if ref is None:
            continue
        result[child] = ref
        if ref.job_name is None:
            missing_job.add(ref.run_id)
    if missing_job:
        jobs = _jobs_of_runs(conn, sorted(missing_job))
        for child, ref in result.items():
            if ref.job_name is None and ref.run_id in jobs:
                result[child] = ParentRef(ref.run_id, *jobs[ref.run_id])
    return result


def _jobs_of_runs(conn: sa.Connection, run_uuids: Sequence[str]) -> dict[str, tuple[str, str]]:
    result: dict[str, tuple[str, str]] = {}
    for batch in chunks(run_uuids):
        for run_uuid, namespace, name in conn.execute(
            sa.select(_r.c.uuid, _ns.c.name, _j.c.name)
            .join(_j, _j.c.id == _r.c.job_id)
            .join(_ns, _ns.c.id == _j.c.namespace_id)
            .where(_r.c.uuid.in_(batch))
        ):
            result[run_uuid] = (namespace, name)
    return result


def latest_runs_per_job(
    job_ids: Sequence[int] | sa.BindParameter[Any], most: int, *conditions: Any
) -> sa.Select[Any]:
    """(job_id, run uuid) of each job's ``most`` newest runs meeting ``conditions``.

    Newest by (created_at, uuid); ordered by job, newest first.
    """
    ranked = (
        sa.select(
            _r.c.job_id,
            _r.c.uuid,
            sa.func.row_number()
            .over(partition_by=_r.c.job_id, order_by=(_r.c.created_at.desc(), _r.c.uuid.desc()))
            .label("rank"),
        )
        .where(_r.c.job_id.in_(job_ids), *conditions)
        .subquery()
    )
    return (sa.select(ranked.c.job_id, ranked.c.uuid).where(ranked.c.rank <= most)
            .order_by(ranked.c.job_id, ranked.c.rank))


# Each job's latest run that has a parent: a correlated LIMIT 1 per job, answered by
# seeking ix_runs_job_id_created_at (not a window over all runs of every asked job).
_LATEST_PARENTED_RUN = (
    sa.select(_j.c.id,
              latest_run_of_job(LATEST_RUN.c.uuid, LATEST_RUN.c.parent_run_uuid.is_not(None)))
    .where(_j.c.id.in_(sa.bindparam("ids", expanding=True)))
)


# "Has any run a parent?" is an index probe. Without it, a store whose runs have no
# parents would walk every run of every asked job looking for one.
_ANY_PARENTED_RUN = sa.select(_r.c.id).where(_r.c.parent_run_uuid.is_not(None)).limit(1)


def job_parents(conn: sa.Connection, job_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Each job's parent job (namespace, name), from its latest run that has a parent."""
    if not job_ids or conn.execute(_ANY_PARENTED_RUN).first() is None:
        return {}
    latest: dict[int, str] = {}
    for batch in chunks(sorted(set(job_ids))):
        for job_id, run_uuid in conn.execute(_LATEST_PARENTED_RUN, {"ids": batch}):
            if run_uuid is not None:
                latest[job_id] = run_uuid
    parents = run_parents(conn, list(latest.values()))
    result: dict[int, tuple[str, str]] = {}
    for job_id, run_uuid in latest.items():
        ref = parents.get(run_uuid)
        if ref is not None and ref.job_namespace and ref.job_name:
            result[job_id] = (ref.job_namespace, ref.job_name)
    return result


def child_run_rows(
    conn: sa.Connection, run_uuid: str, page: Page, *conditions: sa.ColumnElement[bool]
) -> tuple[list[str], int]:
    """The ids of the runs whose parent is ``run_uuid``, oldest first, and their count.

    ``conditions`` may name the child's job (``jobs``) and its namespace (``namespaces``).
    """
    query = sa.select(_r.c.uuid).where(_r.c.parent_run_uuid == run_uuid)
    if conditions:
        query = (query.join(_j, _j.c.id == _r.c.job_id)
                 .join(_ns, _ns.c.id == _j.c.namespace_id).where(*conditions))
    rows, total = paged(conn, query, (_r.c.created_at, _r.c.uuid), page)
    return [row.uuid for row in rows], total
