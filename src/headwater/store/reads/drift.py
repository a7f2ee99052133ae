"""Schema drift, read side: ``dataset_drifts`` rows newest first (``GET /api/v2/drift``).

The rows are derived when versions arrive (:mod:`headwater.store.drift`); this
only filters and pages them. Drifts of soft-deleted datasets are left out, as
every list leaves those datasets out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.reads.common import Page, aware, naive, paged
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import visible

__all__ = ["DriftFilter", "drifts"]

_dd, _d, _ns = t.dataset_drifts, t.datasets, t.namespaces


@dataclass(frozen=True, slots=True)
class DriftFilter:
    """Which drifts: changed in [``since``, ``until``), of one dataset, breaking or not."""

    since: datetime | None = None
    until: datetime | None = None
    dataset_id: int | None = None
    breaking: bool | None = None
    #: Only drifts of datasets in these namespaces.
    scope: NamespaceScope = EVERYTHING


def drifts(conn: sa.Connection, where: DriftFilter, page: Page) -> tuple[list[dict[str, Any]], int]:
    """One page of drifts, newest first, and how many match in all."""
    query = (
        sa.select(_dd.c.version_uuid, _dd.c.previous_version_uuid, _dd.c.changed_at,
                  _dd.c.breaking, _dd.c.changes, _ns.c.name.label("namespace"),
                  _d.c.name.label("name"))
        .select_from(_dd.join(_d, _d.c.id == _dd.c.dataset_id)
                     .join(_ns, _ns.c.id == _d.c.namespace_id))
        .where(visible(_d), where.scope.where(_ns.c.name))
    )
    if where.since is not None:
        query = query.where(_dd.c.changed_at >= naive(where.since))
    if where.until is not None:
        query = query.where(_dd.c.changed_at < naive(where.until))
    if where.dataset_id is not None:
        query = query.where(_dd.c.dataset_id == where.dataset_id)
    if where.breaking is not None:
        query = query.where(_dd.c.breaking == where.breaking)
    rows, total = paged(conn, query, (_dd.c.changed_at.desc(), _dd.c.version_uuid.desc()), page)
    return [
        {"datasetId": f"dataset:{row.namespace}:{row.name}", "namespace": row.namespace,
         "name": row.name, "version": row.version_uuid,
         "previousVersion": row.previous_version_uuid, "changedAt": aware(row.changed_at),
         "breaking": row.breaking, "changes": row.changes}
        for row in rows
    ], total
