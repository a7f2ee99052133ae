"""Per-node facts for lineage answers: does a node exist, and a short summary of each.

Summaries are what ``/api/v2/lineage`` puts in a node's ``data``: enough to label
it (names, the version current at the asked time, a run's state), batched so a
graph of any size costs a few queries per node type.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.graph.model import NodeId, NodeType
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.queries import LATEST_RUN, latest_run_of_job
from headwater.store.reads.common import (
    AsOfSelect,
    aware,
    chunks,
    dataset_ids,
    job_ids,
    naive,
    named_in_namespace,
)
from headwater.store.reads.dataset_facets_at import newest_dataset_facets
from headwater.store.reads.declarations import declared_io_in_force
from headwater.store.reads.job_version_at import job_version_column
from headwater.store.reads.parents import ParentRef, job_parents, run_parents
from headwater.store.reads.runs import MARQUEZ_RUN_STATES, duration_ms, run_rows
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import HiddenNodes, run_namespaces

__all__ = ["field_types", "node_summaries", "pinned_version", "require_node"]

_ds, _dv, _f = t.datasets, t.dataset_versions, t.fields


def require_node(conn: sa.Connection, node: NodeId, hidden: HiddenNodes | None = None) -> None:
    """Raise :class:`NotFoundError` unless ``node`` exists in the store (and is not
    soft-deleted). ``hidden``: the walk's own, so the store is asked once per answer."""
    hidden = hidden or HiddenNodes(conn)
    if node.type is NodeType.RUN:
        if not run_rows(conn, [node.name]) or hidden.among([str(node)]):
            raise NotFoundError(f"run '{node.name}' not found")
        return
    subject = node if node.type is NodeType.JOB else node.dataset_id
    gone = bool(hidden.among([str(subject)]))
    if node.type is NodeType.JOB:
        if gone or not job_ids(conn, [(node.namespace, node.name)]):
            raise NotFoundError(f"job '{node.name}' not found in namespace '{node.namespace}'")
        return
    ids = dataset_ids(conn, [(node.namespace, node.name)])
    if gone or not ids:
        raise NotFoundError(f"dataset '{node.name}' not found in namespace '{node.namespace}'")
    dataset_id = next(iter(ids.values()))
    if node.type is NodeType.DATASET_FIELD:
        found = conn.execute(
            sa.select(_f.c.id).where(_f.c.dataset_id == dataset_id, _f.c.name == node.field)
        ).first()
        # A field no longer in the schema still exists if column lineage names it.
        if found is None:
            cl = t.column_lineage
            as_target = sa.and_(
                cl.c.target_dataset_id == dataset_id, cl.c.target_field == node.field
            )
            as_source = sa.and_(
                cl.c.source_dataset_id == dataset_id, cl.c.source_field == node.field
            )
            found = conn.execute(
                sa.select(cl.c.id).where(sa.or_(as_target, as_source)).limit(1)
            ).first()
        if found is None:
            raise NotFoundError(f"field '{node.field}' not found in dataset '{node.name}'")
    if node.version is not None:
        version = conn.execute(
            sa.select(_dv.c.id).where(_dv.c.dataset_id == dataset_id, _dv.c.uuid == node.version)
        ).first()
        if version is None:
            raise NotFoundError(f"version '{node.version}' of dataset '{node.name}' not found")


def _by_dataset_statement(*columns: sa.ColumnElement[Any]) -> sa.Select[Any]:
    return sa.select(_ds.c.name, *columns).where(named_in_namespace(_ds))


# Built once (see headwater.store.reads.common._ids_statement). Field types are asked
# for the fields in an answer only: two IN lists, whose cross product is then trimmed.
def _dataset_version_column(until: bool) -> sa.ColumnElement[Any]:
    """A dataset's version uuid (correlated to ``datasets``): current, or the latest
    (by updated_at, then uuid) updated at or before ``as_of`` -- a ``LIMIT 1`` per
    dataset that seeks ``ix_dataset_versions_dataset_id_updated_at``."""
    if not until:
        return _ds.c.current_version_uuid
    version = _dv.alias("version_then")
    return (
        sa.select(version.c.uuid)
        .where(version.c.dataset_id == _ds.c.id, version.c.updated_at <= sa.bindparam("as_of"))
        .order_by(version.c.updated_at.desc(), version.c.uuid.desc())
        .limit(1)
        .correlate(_ds)
        .scalar_subquery()
    )


_DATASET_VERSIONS = AsOfSelect(lambda until: _by_dataset_statement(_dataset_version_column(until)))
_FIELD_TYPES = ListSelect(
    _by_dataset_statement(_f.c.name, _f.c.type)
    .join(_f, _f.c.dataset_id == _ds.c.id)
    .where(_f.c.name.in_(sa.bindparam("fields", expanding=True)))
)


def field_types(conn: sa.Connection, fields: Sequence[NodeId]) -> dict[str, str | None]:
    """The current type of each ``datasetField`` node (absent when the schema lacks it)."""
    by_namespace: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for f in fields:
        by_namespace[f.namespace].add((f.name, f.field))
    result: dict[str, str | None] = {}
    for namespace, wanted in by_namespace.items():
        for batch in chunks(sorted(wanted)):
            pairs = set(batch)
            values = {
                "namespace": namespace,
                "names": sorted({name for name, _ in batch}),
                "fields": sorted({field for _, field in batch}),
            }
            for dataset, name, field_type in _FIELD_TYPES.rows(conn, values):
                if (dataset, name) in pairs:
                    result[f"datasetField:{namespace}:{dataset}:{name}"] = field_type
    return result


def _jobs_statement(until: bool) -> sa.Select[Any]:
    """Per job of ``names`` in ``namespace``: its id, name, version (current, or as of
    ``as_of``) and latest run (by created_at, then uuid; created at or before ``as_of``).

    One statement per batch of names: the version and the latest run are correlated
    ``LIMIT 1`` subqueries per job, answered by seeking ``ix_runs_job_id_created_at``
    (a window over every run of thousands of jobs was most of the node data of a large
    answer; three separate lookups by name were a third of what was left).
    """
    r, j = t.runs, t.jobs
    conditions = [LATEST_RUN.c.created_at <= sa.bindparam("as_of")] if until else []
    latest_uuid = latest_run_of_job(LATEST_RUN.c.uuid, *conditions)
    return (
        sa.select(
            j.c.id,
            j.c.name,
            job_version_column(until).label("version"),
            r.c.uuid,
            r.c.state,
            r.c.started_at,
            r.c.ended_at,
        )
        .select_from(j)
        .outerjoin(r, r.c.uuid == latest_uuid)
        .where(named_in_namespace(j))
    )


_JOBS = AsOfSelect(_jobs_statement)


def _job_rows(
    conn: sa.Connection, keys: Sequence[tuple[str, str]], as_of: datetime | None
) -> dict[tuple[str, str], Any]:
    """:func:`_jobs_statement`'s row of each job (namespace, name); unknown jobs are absent."""
    return {(namespace, row.name): row for namespace, row in _JOBS.rows_by_name(conn, keys, as_of)}


def _run_summary(row: sa.Row[Any]) -> dict[str, Any]:
    """``{id, state, startedAt, endedAt, durationMs}`` of a runs row."""
    started, ended = aware(row.started_at), aware(row.ended_at)
    return {
        "id": row.uuid,
        "state": MARQUEZ_RUN_STATES.get(row.state or "", "NEW"),
        "startedAt": started,
        "endedAt": ended,
        "durationMs": duration_ms(started, ended),
    }


def _dataset_types(conn: sa.Connection, subjects: Sequence[str]) -> dict[str, str]:
    """The ``datasetType`` facet's value (TABLE, FILE, TOPIC, MODEL...) of each dataset that
    has one, by node id: the UI draws topics and models apart from tables and files."""
    f = t.facets
    found: dict[str, str] = {}
    for batch in chunks(sorted(set(subjects))):
        for subject, payload in conn.execute(
            sa.select(f.c.subject, f.c.payload).where(
                f.c.kind == "dataset",
                f.c.subject.in_(batch),
                f.c.run_uuid == "",
                f.c.name == "datasetType",
            )
        ):
            value = payload.get("datasetType") if isinstance(payload, dict) else None
            if isinstance(value, str) and value:
                found[subject] = value
    return found


def _declared_jobs(
    conn: sa.Connection, job_ids: Sequence[int], as_of: datetime | None = None
) -> set[int]:
    """The jobs whose inputs or outputs a JobEvent declares (static lineage: a dashboard,
    a report), which the graph marks: their edges come from a declaration, not a run.
    With ``as_of``, the declaration in force then declaring a dataset."""
    io = t.job_declared_io if as_of is None else declared_io_in_force()
    params = {} if as_of is None else {"as_of": naive(as_of)}
    found: set[int] = set()
    for batch in chunks(sorted(set(job_ids))):
        statement = sa.select(io.c.job_id).where(io.c.job_id.in_(batch)).distinct()
        found.update(conn.scalars(statement, params))
    return found


def _failed_assertions(
    conn: sa.Connection, subjects: Sequence[str], as_of: datetime | None = None
) -> dict[str, int]:
    """How many assertions failed in the newest ``dataQualityAssertions`` facet sent about
    each dataset (as a run's input or output, or on the dataset itself), by node id, for
    the datasets whose newest assertions have failures: the graph marks them.

    With ``as_of``, the newest facet sent at or before that time: a run's input and
    output facets are kept per run, and a facet on the dataset itself is kept per
    dataset version (a DatasetEvent makes a version of its own), so the assertions in
    force then are still stored whatever order the events arrived in. The dataset's
    latest facet alone would hide the one a later event replaced."""
    f = t.facets
    newest = newest_dataset_facets(
        conn, subjects, "dataQualityAssertions", f.c.kind.in_(("input", "output", "dataset")), as_of
    )
    found: dict[str, int] = {}
    for subject, payload in newest.items():
        items = payload.get("assertions") if isinstance(payload, dict) else None
        failed = sum(
            1 for item in items or () if isinstance(item, dict) and item.get("success") is False
        )
        if failed:
            found[subject] = failed
    return found


def node_summaries(
    conn: sa.Connection,
    node_ids: Sequence[str],
    as_of: datetime | None = None,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, dict[str, Any]]:
    """A small ``data`` dict per node id; versions are those current at ``as_of``.

    A parent job or run outside ``scope`` is left out (None).
    """
    by_type: dict[NodeType, list[tuple[str, NodeId]]] = defaultdict(list)
    for node_id in node_ids:
        parsed = NodeId.parse(node_id)
        by_type[parsed.type].append((node_id, parsed))
    result: dict[str, dict[str, Any]] = {}

    datasets = by_type[NodeType.DATASET]
    if datasets:
        keys = [(n.namespace, n.name) for _, n in datasets]
        current = {
            (namespace, name): version
            for namespace, (name, version) in _DATASET_VERSIONS.rows_by_name(conn, keys, as_of)
        }
        subjects = [f"dataset:{n.namespace}:{n.name}" for _, n in datasets]
        kinds = _dataset_types(conn, subjects)
        failing = _failed_assertions(conn, subjects, as_of)
        for node_id, n in datasets:
            version = n.version or current.get((n.namespace, n.name))
            result[node_id] = {"namespace": n.namespace, "name": n.name, "version": version}
            kind = kinds.get(f"dataset:{n.namespace}:{n.name}")
            if kind:
                result[node_id]["datasetType"] = kind
            failed = failing.get(f"dataset:{n.namespace}:{n.name}")
            if failed:
                result[node_id]["failedAssertions"] = failed

    jobs = by_type[NodeType.JOB]
    if jobs:
        rows = _job_rows(conn, [(n.namespace, n.name) for _, n in jobs], as_of)
        parents = job_parents(conn, [row.id for row in rows.values()])
        declared = _declared_jobs(conn, [row.id for row in rows.values()], as_of)
        for node_id, n in jobs:
            row = rows.get((n.namespace, n.name))
            parent = parents.get(row.id) if row is not None else None
            if parent is not None and not scope.sees(parent[0]):
                parent = None
            result[node_id] = {
                "namespace": n.namespace,
                "name": n.name,
                "version": row.version if row is not None else None,
                "latestRun": _run_summary(row) if row is not None and row.uuid else None,
                "parentJob": {"namespace": parent[0], "name": parent[1]} if parent else None,
            }
            if row is not None and row.id in declared:
                result[node_id]["declared"] = True

    runs = by_type[NodeType.RUN]
    if runs:
        rows = {row.uuid: row for row in run_rows(conn, [n.name for _, n in runs])}
        run_parent = run_parents(conn, list(rows))
        for node_id, n in runs:
            row = rows.get(n.name)
            parent_ref = run_parent.get(n.name)
            if parent_ref is not None and not _parent_seen(conn, parent_ref, scope):
                parent_ref = None
            summary = (
                _run_summary(row)
                if row is not None
                else {
                    "id": n.name,
                    "state": None,
                    "startedAt": None,
                    "endedAt": None,
                    "durationMs": None,
                }
            )
            result[node_id] = {
                "runId": n.name,
                "job": {"namespace": row.namespace, "name": row.job_name} if row else None,
                "parentRun": parent_ref.run_id if parent_ref else None,
                # The parent's job, so a view can label the group it collapses children into.
                "parentJob": (
                    {"namespace": parent_ref.job_namespace, "name": parent_ref.job_name}
                    if parent_ref and parent_ref.job_namespace and parent_ref.job_name
                    else None
                ),
                **{key: value for key, value in summary.items() if key != "id"},
            }

    fields = by_type[NodeType.DATASET_FIELD]
    if fields:
        types = field_types(conn, [n for _, n in fields])
        for node_id, n in fields:
            result[node_id] = {
                "namespace": n.namespace,
                "dataset": n.name,
                "field": n.field,
                "type": types.get(node_id),
            }
    return result


def _parent_seen(conn: sa.Connection, parent: ParentRef, scope: NamespaceScope) -> bool:
    """Whether a run's parent (its job, else the stored parent run's job) is inside ``scope``."""
    if not scope.limited:
        return True
    if parent.job_namespace is not None:
        return scope.sees(parent.job_namespace)
    return scope.sees(run_namespaces(conn, [parent.run_id]).get(parent.run_id))


def pinned_version(conn: sa.Connection, node: NodeId) -> tuple[datetime, list[str]]:
    """The time of the dataset version a ``#version`` node id pins, and its field names.

    A version's time is when its producing run last reported it; lineage "as of a
    version" is lineage as of that time. :class:`NotFoundError` if there is no such
    version of the node's dataset.
    """
    row = conn.execute(
        sa.select(_dv.c.updated_at, _dv.c.fields)
        .join(_ds, _ds.c.id == _dv.c.dataset_id)
        .join(t.namespaces, t.namespaces.c.id == _ds.c.namespace_id)
        .where(
            t.namespaces.c.name == node.namespace,
            _ds.c.name == node.name,
            _dv.c.uuid == node.version,
        )
    ).first()
    if row is None:
        raise NotFoundError(f"version '{node.version}' of dataset '{node.name}' not found")
    fields = row.fields if isinstance(row.fields, list) else []
    names = [f["name"] for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str)]
    when = aware(row.updated_at)
    assert when is not None
    return when, names
