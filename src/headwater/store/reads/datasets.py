"""Read queries for namespaces, sources, datasets and dataset versions.

Every ``*_records`` function is batched: it answers for many rows with a fixed
number of queries, so a lineage graph of N datasets costs the same few round trips
as one dataset.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.store import namespace_counts
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.reads.common import Page, aware, chunks, paged
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.scoped_select import ScopedSelect
from headwater.store.reads.visibility import hidden, visible

__all__ = [
    "dataset_records",
    "dataset_rows_by_keys",
    "dataset_rows_page",
    "dataset_version_records",
    "get_dataset",
    "get_dataset_version",
    "get_namespace",
    "get_source",
    "list_dataset_versions",
    "list_datasets",
    "list_namespaces",
    "list_sources",
    "namespace_id",
    "tags_by_subject",
]

_ns = t.namespaces
_ds = t.datasets


# --- namespaces and sources ----------------------------------------------------------------


def _namespace_select() -> sa.Select[Any]:
    return sa.select(_ns, hidden(_ns).label("is_hidden"))


def _namespace_record(row: sa.Row[Any]) -> dict[str, Any]:
    return {
        "name": row.name,
        "createdAt": aware(row.created_at),
        "updatedAt": aware(row.updated_at),
        "ownerName": row.owner_name,
        "description": row.description,
        "isHidden": bool(row.is_hidden),
    }


def list_namespaces(
    conn: sa.Connection, page: Page, names: Collection[str] | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Namespaces by name, without soft-deleted ones; only ``names`` when given."""
    query = _namespace_select().where(visible(_ns))
    if names is not None:
        query = query.where(_ns.c.name.in_(sorted(names)))
    rows, total = paged(conn, query, [_ns.c.name], page)
    return [_namespace_record(r) for r in rows], total


def get_namespace(conn: sa.Connection, name: str) -> dict[str, Any]:
    """A namespace; a soft-deleted one answers with ``isHidden: true`` (as in Marquez)."""
    row = conn.execute(_namespace_select().where(_ns.c.name == name)).first()
    if row is None:
        raise NotFoundError(f"namespace '{name}' not found")
    return _namespace_record(row)


def namespace_id(conn: sa.Connection, name: str) -> int:
    """The id of namespace ``name``; :class:`NotFoundError` if it does not exist."""
    found = conn.execute(sa.select(_ns.c.id).where(_ns.c.name == name)).scalar()
    if found is None:
        raise NotFoundError(f"namespace '{name}' not found")
    return int(found)


def _source_record(row: sa.Row[Any]) -> dict[str, Any]:
    url = row.connection_url or ""
    scheme = url.split(":", 1)[0].upper() if ":" in url else ""
    return {
        "type": row.type or scheme or "UNKNOWN",
        "name": row.name,
        "createdAt": aware(row.created_at),
        "updatedAt": aware(row.updated_at),
        "connectionUrl": row.connection_url,
        "description": row.description,
    }


def _sources_in(scope: NamespaceScope) -> list[sa.ColumnElement[bool]]:
    """SQL: the source is one a dataset inside ``scope`` names (or is named after)."""
    if not scope.limited:
        return []
    used = (
        sa.select(sa.func.coalesce(_ds.c.source_name, _ns.c.name))
        .join(_ns, _ns.c.id == _ds.c.namespace_id)
        .where(scope.where(_ns.c.name), visible(_ds))
    )
    return [t.sources.c.name.in_(used)]


def list_sources(
    conn: sa.Connection, page: Page, scope: NamespaceScope = EVERYTHING
) -> tuple[list[dict[str, Any]], int]:
    """Sources by name; with a limited ``scope``, those of its datasets."""
    query = sa.select(t.sources).where(*_sources_in(scope))
    rows, total = paged(conn, query, [t.sources.c.name], page)
    return [_source_record(r) for r in rows], total


def get_source(
    conn: sa.Connection, name: str, scope: NamespaceScope = EVERYTHING
) -> dict[str, Any]:
    row = conn.execute(
        sa.select(t.sources).where(t.sources.c.name == name, *_sources_in(scope))
    ).first()
    if row is None:
        raise NotFoundError(f"source '{name}' not found")
    return _source_record(row)


# --- tags ----------------------------------------------------------------------------------


# Every list statement of a record takes its ids (dataset ids, subjects) as ``ids``.
_IDS = sa.bindparam("ids", expanding=True)
_TAGS = ListSelect(
    sa.select(t.tag_assignments.c.subject, t.tags.c.name)
    .join(t.tags, t.tags.c.id == t.tag_assignments.c.tag_id)
    .where(t.tag_assignments.c.subject.in_(_IDS))
)


def tags_by_subject(conn: sa.Connection, subjects: Sequence[str]) -> dict[str, list[str]]:
    """Tag names per subject node id, sorted."""
    result: dict[str, list[str]] = defaultdict(list)
    for batch in chunks(sorted(set(subjects))):
        for subject, name in _TAGS.rows(conn, {"ids": batch}):
            result[subject].append(name)
    return {subject: sorted(names) for subject, names in result.items()}


# --- datasets ------------------------------------------------------------------------------


def _dataset_select() -> sa.Select[Any]:
    return sa.select(_ds, _ns.c.name.label("namespace")).join(_ns, _ns.c.id == _ds.c.namespace_id)


def dataset_rows_by_keys(
    conn: sa.Connection, keys: Sequence[tuple[str, str]], scope: NamespaceScope = EVERYTHING
) -> list[sa.Row[Any]]:
    """Dataset rows (with ``namespace``) for (namespace, name) keys; unknown,
    soft-deleted and out-of-scope ones are skipped."""
    by_namespace: dict[str, list[str]] = defaultdict(list)
    for namespace, name in set(keys):
        if scope.sees(namespace):
            by_namespace[namespace].append(name)
    rows: list[sa.Row[Any]] = []
    for namespace, names in by_namespace.items():
        for batch in chunks(sorted(names)):
            rows += conn.execute(
                _dataset_select().where(
                    _ns.c.name == namespace, _ds.c.name.in_(batch), visible(_ds)
                )
            ).all()
    return rows


def dataset_records(
    conn: sa.Connection, rows: Sequence[sa.Row[Any]], scope: NamespaceScope = EVERYTHING
) -> list[dict[str, Any]]:
    """Marquez ``Dataset`` records for dataset rows, in the same order; column-lineage
    inputs and facet references outside ``scope`` left out."""
    if not rows:
        return []
    ids = [r.id for r in rows]
    node_of = {r.id: f"dataset:{r.namespace}:{r.name}" for r in rows}
    fields: dict[int, list[Any]] = defaultdict(list)
    for batch in chunks(ids):
        for f in _FIELDS.rows(conn, {"ids": batch}):
            fields[f.dataset_id].append(f)
    field_nodes = [
        f"datasetField:{r.namespace}:{r.name}:{f.name}" for r in rows for f in fields[r.id]
    ]
    tags = tags_by_subject(conn, [*node_of.values(), *field_nodes])
    facets = _latest_facets(conn, "dataset", list(node_of.values()))
    lineage = _column_lineage_entries(conn, ids, scope)
    modified = _last_modified(conn, ids, scope)
    current = _current_versions(conn, rows, scope)
    records = []
    for r in rows:
        node = node_of[r.id]
        records.append(
            {
                "id": {"namespace": r.namespace, "name": r.name},
                "type": "DB_TABLE",
                "name": r.name,
                "physicalName": r.name,
                "createdAt": aware(r.created_at),
                "updatedAt": aware(r.updated_at),
                "namespace": r.namespace,
                "sourceName": r.source_name or r.namespace,
                "fields": [
                    {
                        "name": f.name,
                        "type": f.type,
                        "tags": tags.get(f"datasetField:{r.namespace}:{r.name}:{f.name}", []),
                        "description": f.description,
                    }
                    for f in fields[r.id]
                ],
                "tags": tags.get(node, []),
                "lastModifiedAt": aware(modified.get(r.id)),
                "lastLifecycleState": r.lifecycle_state,
                "description": r.description,
                "currentVersion": current.get(r.id),
                "columnLineage": lineage.get(r.id),
                "facets": scope.facets(facets.get(node, {})),
                "deleted": False,
            }
        )
    return records


_FIELDS = ListSelect(
    sa.select(t.fields).where(t.fields.c.dataset_id.in_(_IDS)).order_by(t.fields.c.position)
)
# By name within a subject: the same facet order whichever plan the database picks.
_FACETS = ListSelect(
    sa.select(t.facets.c.subject, t.facets.c.name, t.facets.c.payload)
    .where(
        t.facets.c.kind == sa.bindparam("kind"),
        t.facets.c.run_uuid == sa.bindparam("run_uuid"),
        t.facets.c.subject.in_(_IDS),
    )
    .order_by(t.facets.c.subject, t.facets.c.name)
)


def _latest_facets(
    conn: sa.Connection, kind: str, subjects: Sequence[str], run_uuid: str = ""
) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = defaultdict(dict)
    for batch in chunks(subjects):
        for row in _FACETS.rows(conn, {"kind": kind, "run_uuid": run_uuid, "ids": batch}):
            result[row.subject][row.name] = row.payload
    return result


def _column_lineage_statement(scope: NamespaceScope) -> sa.Select[Any]:
    cl = t.column_lineage
    src = _ds.alias("src")
    src_ns = _ns.alias("src_ns")
    return (
        sa.select(cl, src.c.name.label("source_name"), src_ns.c.name.label("source_namespace"))
        .join(src, src.c.id == cl.c.source_dataset_id)
        .join(src_ns, src_ns.c.id == src.c.namespace_id)
        .where(cl.c.target_dataset_id.in_(_IDS), cl.c.target_field != "",
               scope.where(src_ns.c.name), *_by_runs_inside(cl, scope))
        .order_by(cl.c.target_field, src_ns.c.name, src.c.name, cl.c.source_field)
    )


def _column_lineage_entries(
    conn: sa.Connection, dataset_ids: Sequence[int], scope: NamespaceScope
) -> dict[int, list[dict[str, Any]]]:
    by_target: dict[int, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for batch in chunks(dataset_ids):
        for row in _COLUMN_LINEAGE.rows(conn, scope, {"ids": batch}):
            by_target[row.target_dataset_id].setdefault(row.target_field, []).append(
                {
                    "namespace": row.source_namespace,
                    "dataset": row.source_name,
                    "field": row.source_field,
                    "transformationDescription": row.description,
                    "transformationType": row.transformation_type or None,
                }
            )
    return {
        target: [
            {
                "name": field,
                "inputFields": inputs,
                "transformationDescription": inputs[0]["transformationDescription"],
                "transformationType": inputs[0]["transformationType"],
            }
            for field, inputs in fields.items()
        ]
        for target, fields in by_target.items()
    }


def _by_runs_inside(table: sa.Table, scope: NamespaceScope) -> list[sa.ColumnElement[bool]]:
    """SQL: the row of ``table`` (column lineage, a dataset version) came from a run of a
    job inside ``scope``, or from no run (a dataset event)."""
    if not scope.limited:
        return []
    run_ns = (
        sa.select(_ns.c.name)
        .select_from(t.runs)
        .join(t.jobs, t.jobs.c.id == t.runs.c.job_id)
        .join(_ns, _ns.c.id == t.jobs.c.namespace_id)
        .where(t.runs.c.uuid == table.c.run_uuid)
        .scalar_subquery()
    )
    return [sa.or_(table.c.run_uuid.is_(None), scope.where(run_ns))]


def _current_versions(
    conn: sa.Connection, rows: Sequence[sa.Row[Any]], scope: NamespaceScope
) -> dict[int, str | None]:
    """Each dataset's current version, unless a run of a job outside ``scope`` wrote it."""
    found = {r.id: r.current_version_uuid for r in rows}
    if not scope.limited:
        return found
    dv = t.dataset_versions
    wanted = [u for u in found.values() if u]
    kept: set[str] = set()
    for batch in chunks(wanted):
        kept.update(conn.execute(
            sa.select(dv.c.uuid).where(dv.c.uuid.in_(batch), *_by_runs_inside(dv, scope))
        ).scalars())
    return {dataset_id: u if u in kept else None for dataset_id, u in found.items()}


def _last_modified_statement(scope: NamespaceScope) -> sa.Select[Any]:
    dv, r = t.dataset_versions, t.runs
    return (
        sa.select(dv.c.dataset_id, sa.func.max(dv.c.updated_at).label("last_modified"))
        .join(r, r.c.uuid == dv.c.run_uuid)
        .where(dv.c.dataset_id.in_(_IDS), r.c.state == "COMPLETE", *_by_runs_inside(dv, scope))
        .group_by(dv.c.dataset_id)
    )


_COLUMN_LINEAGE = ScopedSelect(_column_lineage_statement)
_LAST_MODIFIED = ScopedSelect(_last_modified_statement)


def _last_modified(
    conn: sa.Connection, dataset_ids: Sequence[int], scope: NamespaceScope
) -> dict[int, Any]:
    """Latest version time per dataset written by a run (inside ``scope``) that completed."""
    result: dict[int, Any] = {}
    for batch in chunks(dataset_ids):
        result.update((row[0], row[1]) for row in _LAST_MODIFIED.rows(conn, scope, {"ids": batch}))
    return result


def dataset_rows_page(
    conn: sa.Connection, namespace: str, page: Page
) -> tuple[list[sa.Row[Any]], int]:
    """One page of the namespace's dataset rows (with ``namespace``) by name, and how
    many there are (kept by the database: ``store.namespace_counts``);
    :class:`NotFoundError` if the namespace does not exist."""
    ns_id = namespace_id(conn, namespace)
    query = _dataset_select().where(_ds.c.namespace_id == ns_id, visible(_ds))
    total = namespace_counts.shown(conn, ns_id, "datasets")
    return paged(conn, query, [_ds.c.name], page, total)


def list_datasets(
    conn: sa.Connection, namespace: str, page: Page, scope: NamespaceScope = EVERYTHING
) -> tuple[list[dict[str, Any]], int]:
    rows, total = dataset_rows_page(conn, namespace, page)
    return dataset_records(conn, rows, scope), total


def _dataset_row(conn: sa.Connection, namespace: str, name: str) -> sa.Row[Any]:
    namespace_id(conn, namespace)
    row = conn.execute(
        _dataset_select().where(_ns.c.name == namespace, _ds.c.name == name, visible(_ds))
    ).first()
    if row is None:
        raise NotFoundError(f"dataset '{name}' not found in namespace '{namespace}'")
    return row


def get_dataset(
    conn: sa.Connection, namespace: str, name: str, scope: NamespaceScope = EVERYTHING
) -> dict[str, Any]:
    return dataset_records(conn, [_dataset_row(conn, namespace, name)], scope)[0]


# --- dataset versions ----------------------------------------------------------------------


def dataset_version_records(
    conn: sa.Connection,
    dataset: sa.Row[Any],
    versions: Sequence[sa.Row[Any]],
    scope: NamespaceScope = EVERYTHING,
) -> list[dict[str, Any]]:
    """Marquez ``DatasetVersion`` records of one dataset's version rows.

    A version written by a run of a job outside ``scope`` has no ``createdByRun``.
    """
    from headwater.store.reads.runs import run_records

    run_uuids = [v.run_uuid for v in versions if v.run_uuid]
    runs = {rec["id"]: rec for rec in run_records(conn, run_uuids, scope)}
    facets = _latest_facets(conn, "dataset_version", [v.uuid for v in versions])
    node = f"dataset:{dataset.namespace}:{dataset.name}"
    tags = tags_by_subject(conn, [node]).get(node, [])
    records = []
    for v in versions:
        version_fields = v.fields if isinstance(v.fields, list) else []
        records.append(
            {
                "id": {"namespace": dataset.namespace, "name": dataset.name, "version": v.uuid},
                "type": "DB_TABLE",
                "name": dataset.name,
                "physicalName": dataset.name,
                "createdAt": aware(v.updated_at),
                "version": v.uuid,
                "namespace": dataset.namespace,
                "sourceName": dataset.source_name or dataset.namespace,
                "fields": [
                    {
                        "name": f.get("name"),
                        "type": f.get("type"),
                        "tags": [],
                        "description": f.get("description"),
                    }
                    for f in version_fields
                    if isinstance(f, dict) and isinstance(f.get("name"), str)
                ],
                "tags": tags,
                "lifecycleState": v.lifecycle_state,
                "description": dataset.description,
                "createdByRun": runs.get(v.run_uuid) if v.run_uuid else None,
                "facets": scope.facets(facets.get(v.uuid, {})),
            }
        )
    return records


def list_dataset_versions(
    conn: sa.Connection, namespace: str, name: str, page: Page,
    scope: NamespaceScope = EVERYTHING,
) -> tuple[list[dict[str, Any]], int]:
    """The dataset's versions, newest first; those written by runs of jobs outside
    ``scope`` are left out."""
    dataset = _dataset_row(conn, namespace, name)
    dv = t.dataset_versions
    query = sa.select(dv).where(dv.c.dataset_id == dataset.id, *_by_runs_inside(dv, scope))
    rows, total = paged(conn, query, [dv.c.updated_at.desc(), dv.c.uuid.desc()], page)
    return dataset_version_records(conn, dataset, rows, scope), total


def get_dataset_version(
    conn: sa.Connection, namespace: str, name: str, version: str,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, Any]:
    dataset = _dataset_row(conn, namespace, name)
    dv = t.dataset_versions
    row = conn.execute(
        sa.select(dv).where(
            dv.c.dataset_id == dataset.id, dv.c.uuid == version, *_by_runs_inside(dv, scope)
        )
    ).first()
    if row is None:
        raise NotFoundError(f"version '{version}' of dataset '{namespace}:{name}' not found")
    return dataset_version_records(conn, dataset, [row], scope)[0]
