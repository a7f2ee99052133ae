"""Schema drift, read side: version and contract drifts newest first (``GET /api/v2/drift``).

Two kinds of row, listed together: ``dataset_drifts`` (a dataset's schema
changed between consecutive versions, ``kind`` ``version``) and the differing
``schema_contracts`` (a consumer job declares a schema its dataset is not
written with, ``kind`` ``contract``). Both are derived when the facts arrive
(:mod:`headwater.store.drift`, :mod:`headwater.store.contract`); this only
filters and pages them. Drifts of soft-deleted datasets (and contracts of
soft-deleted consumer jobs) are left out, as every list leaves those out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.reads.common import Page, aware, naive, paged
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import visible

__all__ = ["DriftFilter", "DriftKind", "drift_id", "drifts", "parse_drift_id"]

_dd, _sc, _d, _ns, _j = (t.dataset_drifts, t.schema_contracts, t.datasets, t.namespaces, t.jobs)
_jns = _ns.alias("job_namespace")

DriftKind = Literal["version", "contract"]


@dataclass(frozen=True, slots=True)
class DriftFilter:
    """Which drifts: changed in [``since``, ``until``), of one dataset, breaking or not, a kind."""

    since: datetime | None = None
    until: datetime | None = None
    dataset_id: int | None = None
    breaking: bool | None = None
    #: Only drifts of datasets in these namespaces (and consumers in them).
    scope: NamespaceScope = EVERYTHING
    kind: DriftKind | None = None
    #: One drift: the newer version's uuid, and a contract drift's declaring run.
    version_uuid: str | None = None
    run_uuid: str | None = None
    #: A contract drift's consumer job (its row id).
    job_id: int | None = None
    #: Only drifts of these datasets (the root-cause answer asks for an upstream's).
    dataset_ids: tuple[int, ...] | None = None


def _version_drifts(where: DriftFilter) -> sa.Select[Any]:
    return (
        sa.select(
            sa.literal_column("'version'").label("kind"),
            _dd.c.dataset_id,
            _ns.c.name.label("namespace"),
            _d.c.name.label("name"),
            _dd.c.version_uuid,
            _dd.c.previous_version_uuid,
            _dd.c.changed_at,
            _dd.c.breaking,
            _dd.c.changes,
            sa.null().label("job_namespace"),
            sa.null().label("job_name"),
            sa.null().label("run_uuid"),
            sa.literal_column("0").label("job_id"),
        )
        .select_from(
            _dd.join(_d, _d.c.id == _dd.c.dataset_id).join(_ns, _ns.c.id == _d.c.namespace_id)
        )
        .where(
            visible(_d),
            where.scope.where(_ns.c.name),
            *_common(where, _dd.c.changed_at, _dd.c.dataset_id, _dd.c.breaking),
            *_one(where, _dd.c.version_uuid),
        )
    )


def _contract_drifts(where: DriftFilter) -> sa.Select[Any]:
    return (
        sa.select(
            sa.literal_column("'contract'").label("kind"),
            _sc.c.dataset_id,
            _ns.c.name.label("namespace"),
            _d.c.name.label("name"),
            _sc.c.version_uuid,
            sa.null().label("previous_version_uuid"),
            _sc.c.changed_at,
            _sc.c.breaking,
            _sc.c.changes,
            _jns.c.name.label("job_namespace"),
            _j.c.name.label("job_name"),
            _sc.c.run_uuid,
            _sc.c.job_id,
        )
        .select_from(
            _sc.join(_d, _d.c.id == _sc.c.dataset_id)
            .join(_ns, _ns.c.id == _d.c.namespace_id)
            .join(_j, _j.c.id == _sc.c.job_id)
            .join(_jns, _jns.c.id == _j.c.namespace_id)
        )
        .where(
            _sc.c.differs.is_(True),
            visible(_d),
            visible(_j),
            where.scope.where(_ns.c.name),
            where.scope.where(_jns.c.name),
            *_common(where, _sc.c.changed_at, _sc.c.dataset_id, _sc.c.breaking),
            *_one(where, _sc.c.version_uuid),
            *([] if where.run_uuid is None else [_sc.c.run_uuid == where.run_uuid]),
            *([] if where.job_id is None else [_sc.c.job_id == where.job_id]),
        )
    )


def _common(
    where: DriftFilter, changed_at: Any, dataset_id: Any, breaking: Any
) -> list[sa.ColumnElement[bool]]:
    out: list[sa.ColumnElement[bool]] = []
    if where.since is not None:
        out.append(changed_at >= naive(where.since))
    if where.until is not None:
        out.append(changed_at < naive(where.until))
    if where.dataset_id is not None:
        out.append(dataset_id == where.dataset_id)
    if where.dataset_ids is not None:
        out.append(dataset_id.in_(where.dataset_ids))
    if where.breaking is not None:
        out.append(breaking == where.breaking)
    return out


def _one(where: DriftFilter, version_uuid: Any) -> list[sa.ColumnElement[bool]]:
    return [] if where.version_uuid is None else [version_uuid == where.version_uuid]


def drift_id(kind: str, version_uuid: str, run_uuid: str | None) -> str:
    """A drift's id: ``version:{newer version}``, ``contract:{declaring run}:{version}``.

    Both parts are event facts, so the id survives a rebuild of the store."""
    if kind == "contract":
        return f"contract:{run_uuid}:{version_uuid}"
    return f"version:{version_uuid}"


def parse_drift_id(text: str) -> DriftFilter | None:
    """The filter finding the drift ``text`` names, or None when it names none."""
    kind, _, rest = text.partition(":")
    if kind == "version" and rest and ":" not in rest:
        return DriftFilter(kind="version", version_uuid=rest)
    run, _, version = rest.rpartition(":")
    if kind == "contract" and run and version:
        return DriftFilter(kind="contract", version_uuid=version, run_uuid=run)
    return None


def drifts(conn: sa.Connection, where: DriftFilter, page: Page) -> tuple[list[dict[str, Any]], int]:
    """One page of drifts, newest first, and how many match in all."""
    parts = [
        build(where)
        for kind, build in (("version", _version_drifts), ("contract", _contract_drifts))
        if where.kind in (None, kind)
    ]
    both = (parts[0] if len(parts) == 1 else sa.union_all(*parts)).subquery("drifts")
    query = sa.select(both)
    order = (
        both.c.changed_at.desc(),
        both.c.kind.desc(),
        both.c.version_uuid.desc(),
        both.c.job_id.desc(),
    )
    rows, total = paged(conn, query, order, page)
    return [_answer(row) for row in rows], total


def _answer(row: Any) -> dict[str, Any]:
    out = {
        "id": drift_id(row.kind, row.version_uuid, row.run_uuid),
        "kind": row.kind,
        "datasetId": f"dataset:{row.namespace}:{row.name}",
        "namespace": row.namespace,
        "name": row.name,
        "version": row.version_uuid,
        "previousVersion": row.previous_version_uuid,
        "changedAt": aware(row.changed_at),
        "breaking": bool(row.breaking),
        "changes": row.changes,
        "consumer": None,
    }
    if row.kind == "contract":
        out["consumer"] = {
            "jobId": f"job:{row.job_namespace}:{row.job_name}",
            "namespace": row.job_namespace,
            "name": row.job_name,
            "run": row.run_uuid,
        }
    return out
