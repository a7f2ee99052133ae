"""Read queries for jobs and job versions.

A job's inputs and outputs are those of its *current version* (the version of its
latest run), as Marquez reports them; a job version's are fixed at creation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.store import namespace_counts
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.reads.common import Page, after_key, aware, chunks, paged, split_node_key
from headwater.store.reads.datasets import namespace_id, tags_by_subject
from headwater.store.reads.parents import job_parents, job_uuid, latest_runs_per_job
from headwater.store.reads.runs import run_records
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import visible

__all__ = [
    "get_job",
    "get_job_version",
    "job_id",
    "job_records",
    "job_rows_by_keys",
    "job_rows_page",
    "list_job_versions",
    "list_jobs",
]

_j, _ns, _jv, _r = t.jobs, t.namespaces, t.job_versions, t.runs

# How many recent runs a job record lists in ``latestRuns``.
LATEST_RUNS = 10


def _job_select() -> sa.Select[Any]:
    return (
        sa.select(
            _j,
            _ns.c.name.label("namespace"),
            _jv.c.inputs,
            _jv.c.outputs,
            _jv.c.location,
        )
        .join(_ns, _ns.c.id == _j.c.namespace_id)
        .outerjoin(_jv, _jv.c.uuid == _j.c.current_version_uuid)
    )


def _dataset_ids(node_ids: Any, scope: NamespaceScope) -> list[dict[str, str]]:
    """``["dataset:ns:name", ...]`` (as stored in a job version) -> Marquez DatasetIds,
    those inside ``scope``."""
    result = []
    for node_id in node_ids or ():
        namespace, name = split_node_key(node_id)
        if scope.sees(namespace):
            result.append({"namespace": namespace, "name": name})
    return result


def job_rows_by_keys(
    conn: sa.Connection, keys: Sequence[tuple[str, str]], scope: NamespaceScope = EVERYTHING
) -> list[sa.Row[Any]]:
    """Job rows (with ``namespace`` and current version's io) for (namespace, name) keys
    inside ``scope``."""
    by_namespace: dict[str, list[str]] = defaultdict(list)
    for namespace, name in set(keys):
        if scope.sees(namespace):
            by_namespace[namespace].append(name)
    rows: list[sa.Row[Any]] = []
    for namespace, names in by_namespace.items():
        for batch in chunks(sorted(names)):
            rows += conn.execute(
                _job_select().where(_ns.c.name == namespace, _j.c.name.in_(batch), visible(_j))
            ).all()
    return rows


def _job_type(facets: dict[str, Any]) -> str:
    job_type = facets.get("jobType")
    if isinstance(job_type, dict) and job_type.get("processingType") == "STREAMING":
        return "STREAM"
    return "BATCH"


def job_records(
    conn: sa.Connection,
    rows: Sequence[sa.Row[Any]],
    with_runs: bool = True,
    scope: NamespaceScope = EVERYTHING,
) -> list[dict[str, Any]]:
    """Marquez ``Job`` records for job rows, in the same order; inputs, outputs, a
    parent and facet references outside ``scope`` left out."""
    if not rows:
        return []
    node_of = {row.id: f"job:{row.namespace}:{row.name}" for row in rows}
    facets: dict[str, dict[str, Any]] = defaultdict(dict)
    for batch in chunks(list(node_of.values())):
        for subject, name, payload in _JOB_FACETS.rows(conn, {"ids": batch}):
            facets[subject][name] = payload
    tags = tags_by_subject(conn, list(node_of.values()))
    parents = job_parents(conn, list(node_of))
    latest: dict[int, list[str]] = defaultdict(list)
    if with_runs:
        for batch in chunks(list(node_of)):
            for job_id, run_uuid in _LATEST_RUNS.rows(conn, {"ids": batch}):
                latest[job_id].append(run_uuid)
    runs = {
        rec["id"]: rec
        for rec in run_records(conn, [u for uuids in latest.values() for u in uuids], scope)
    }
    records = []
    for row in rows:
        node = node_of[row.id]
        job_facets = facets.get(node, {})
        latest_runs = [runs[u] for u in latest.get(row.id, []) if u in runs]
        parent = parents.get(row.id)
        if parent is not None and not scope.sees(parent[0]):
            parent = None
        records.append(
            {
                "id": {"namespace": row.namespace, "name": row.name},
                "type": _job_type(job_facets),
                "name": row.name,
                "simpleName": row.name.rsplit(".", 1)[-1],
                "parentJobName": parent[1] if parent else None,
                "parentJobUuid": job_uuid(*parent) if parent else None,
                "createdAt": aware(row.created_at),
                "updatedAt": aware(row.updated_at),
                "namespace": row.namespace,
                "inputs": _dataset_ids(row.inputs, scope),
                "outputs": _dataset_ids(row.outputs, scope),
                "location": row.location,
                "description": _description(job_facets),
                "latestRun": latest_runs[0] if latest_runs else None,
                "latestRuns": latest_runs,
                "facets": scope.facets(job_facets),
                "currentVersion": row.current_version_uuid,
                "tags": tags.get(node, []),
            }
        )
    return records


_IDS = sa.bindparam("ids", expanding=True)
# By name within a job: the same facet order whichever plan the database picks.
_JOB_FACETS = ListSelect(
    sa.select(t.facets.c.subject, t.facets.c.name, t.facets.c.payload)
    .where(t.facets.c.kind == "job", t.facets.c.run_uuid == "", t.facets.c.subject.in_(_IDS))
    .order_by(t.facets.c.subject, t.facets.c.name)
)
_LATEST_RUNS = ListSelect(latest_runs_per_job(_IDS, LATEST_RUNS))


def _description(facets: dict[str, Any]) -> str | None:
    documentation = facets.get("documentation")
    if isinstance(documentation, dict) and isinstance(documentation.get("description"), str):
        return str(documentation["description"])
    return None


def job_id(conn: sa.Connection, namespace: str, name: str) -> int:
    """The id of a job that exists and is not soft-deleted; else :class:`NotFoundError`."""
    ns_id = namespace_id(conn, namespace)
    found = conn.execute(
        sa.select(_j.c.id).where(_j.c.namespace_id == ns_id, _j.c.name == name, visible(_j))
    ).scalar()
    if found is None:
        raise NotFoundError(f"job '{name}' not found in namespace '{namespace}'")
    return int(found)


def job_rows_page(
    conn: sa.Connection, namespace: str, page: Page
) -> tuple[list[sa.Row[Any]], int]:
    """One page of the namespace's job rows (as :func:`job_records` takes them) by name,
    and how many there are (kept by the database: ``store.namespace_counts``);
    :class:`NotFoundError` if the namespace does not exist."""
    ns_id = namespace_id(conn, namespace)
    # The page is cut from jobs alone and its rows joined after: joined before the cut,
    # an offset page probed job_versions for every job it skipped (4 buffers a job,
    # 128 ms at offset 25,000 of 500,000 jobs against 2 ms for the index walk alone).
    jobs = sa.select(_j).where(_j.c.namespace_id == ns_id, visible(_j))
    if page.after is not None:
        jobs = jobs.where(after_key([_j.c.name], page.after))
    cut = page.apply(jobs.order_by(_j.c.name)).subquery("page")
    query = (
        sa.select(cut, _ns.c.name.label("namespace"), _jv.c.inputs, _jv.c.outputs, _jv.c.location)
        .join(_ns, _ns.c.id == cut.c.namespace_id)
        .outerjoin(_jv, _jv.c.uuid == cut.c.current_version_uuid)
        .order_by(cut.c.name)
    )
    return list(conn.execute(query).all()), namespace_counts.shown(conn, ns_id, "jobs")


def list_jobs(
    conn: sa.Connection, namespace: str, page: Page, scope: NamespaceScope = EVERYTHING
) -> tuple[list[dict[str, Any]], int]:
    rows, total = job_rows_page(conn, namespace, page)
    return job_records(conn, rows, scope=scope), total


def get_job(
    conn: sa.Connection, namespace: str, name: str, scope: NamespaceScope = EVERYTHING
) -> dict[str, Any]:
    found = job_id(conn, namespace, name)
    row = conn.execute(_job_select().where(_j.c.id == found)).one()
    return job_records(conn, [row], scope=scope)[0]


def _version_records(
    conn: sa.Connection, namespace: str, name: str, rows: Sequence[sa.Row[Any]],
    scope: NamespaceScope,
) -> list[dict[str, Any]]:
    latest: dict[str, str] = {}
    if rows:
        for version, run_uuid in conn.execute(
            sa.select(_r.c.job_version_uuid, _r.c.uuid)
            .where(_r.c.job_version_uuid.in_([row.uuid for row in rows]))
            .order_by(_r.c.created_at, _r.c.uuid)
        ):
            latest[version] = run_uuid  # ascending order: the last one wins
    runs = {rec["id"]: rec for rec in run_records(conn, list(latest.values()), scope)}
    return [
        {
            "id": {"namespace": namespace, "name": name, "version": row.uuid},
            "name": name,
            "version": row.uuid,
            "createdAt": aware(row.created_at),
            "namespace": namespace,
            "inputs": _dataset_ids(row.inputs, scope),
            "outputs": _dataset_ids(row.outputs, scope),
            "location": row.location,
            "latestRun": runs.get(latest.get(row.uuid, "")),
            "facets": {},
        }
        for row in rows
    ]


def list_job_versions(
    conn: sa.Connection, namespace: str, name: str, page: Page,
    scope: NamespaceScope = EVERYTHING,
) -> tuple[list[dict[str, Any]], int]:
    found = job_id(conn, namespace, name)
    query = sa.select(_jv).where(_jv.c.job_id == found)
    rows, total = paged(conn, query, [_jv.c.created_at.desc(), _jv.c.uuid], page)
    return _version_records(conn, namespace, name, rows, scope), total


def get_job_version(
    conn: sa.Connection, namespace: str, name: str, version: str,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, Any]:
    found = job_id(conn, namespace, name)
    row = conn.execute(
        sa.select(_jv).where(_jv.c.job_id == found, _jv.c.uuid == version)
    ).first()
    if row is None:
        raise NotFoundError(f"version '{version}' of job '{namespace}:{name}' not found")
    return _version_records(conn, namespace, name, [row], scope)[0]
