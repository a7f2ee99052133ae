"""Who read a dataset: the runs that had it as an input in a time window (``GET
/api/v2/datasets/{nodeId}/readers``), with their jobs and Spark users.

A run reads a dataset when one of its events lists it among ``inputs``;
``run_inputs.created_at`` is the first such event's time, the time of the read
(indexed with the dataset). The Spark user is the ``userName`` of the run's
``spark_applicationDetails`` facet (the Spark listeners send it on START), or of
its parent run's when the run has none. A run that wrote nothing is a
read-only action (``collect``, ``toPandas``, ``count``), which the headwater
agent reports only with ``spark.headwater.captureReadOnlyActions=true``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.reads.common import Page, aware, naive, paged
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import visible

__all__ = ["readers"]

_ri, _ro, _r, _j, _ns, _f = t.run_inputs, t.run_outputs, t.runs, t.jobs, t.namespaces, t.facets
#: Run facets naming the Spark user, in the order they are asked.
_USER_FACETS = ("spark_applicationDetails", "spark_properties")


def _user_of(facets: dict[str, Any]) -> str | None:
    details = facets.get("spark_applicationDetails")
    if isinstance(details, dict):
        for key in ("userName", "sparkUser"):
            if isinstance(details.get(key), str) and details[key]:
                return str(details[key])
    props = facets.get("spark_properties")
    props = props.get("properties") if isinstance(props, dict) else None
    if isinstance(props, dict):
        for key in ("spark.user", "user.name"):
            if isinstance(props.get(key), str) and props[key]:
                return str(props[key])
    return None


def _run_facets(conn: sa.Connection, runs: list[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if not runs:
        return found
    query = sa.select(_f.c.subject, _f.c.name, _f.c.payload).where(
        _f.c.kind == "run",
        _f.c.subject.in_([f"run:{uuid}" for uuid in runs]),
        _f.c.name.in_(_USER_FACETS),
        _f.c.run_uuid == "",
    )
    for subject, name, payload in conn.execute(query):
        found.setdefault(subject.removeprefix("run:"), {})[name] = payload
    return found


def readers(
    conn: sa.Connection,
    dataset_id: int,
    since: datetime | None,
    until: datetime | None,
    page: Page,
    scope: NamespaceScope = EVERYTHING,
) -> tuple[list[dict[str, Any]], int]:
    """One page of the runs that read the dataset in [``since``, ``until``), newest read
    first, and how many there are; runs of jobs outside ``scope`` or deleted are left out."""
    query = (
        sa.select(
            _ri.c.run_uuid,
            _ri.c.created_at,
            _r.c.state,
            _r.c.started_at,
            _r.c.ended_at,
            _r.c.parent_run_uuid,
            _ns.c.name.label("namespace"),
            _j.c.name.label("job"),
        )
        .select_from(
            _ri.join(_r, _r.c.uuid == _ri.c.run_uuid)
            .join(_j, _j.c.id == _r.c.job_id)
            .join(_ns, _ns.c.id == _j.c.namespace_id)
        )
        .where(_ri.c.dataset_id == dataset_id, visible(_j), scope.where(_ns.c.name))
    )
    if since is not None:
        query = query.where(_ri.c.created_at >= naive(since))
    if until is not None:
        query = query.where(_ri.c.created_at < naive(until))
    rows, total = paged(conn, query, (_ri.c.created_at.desc(), _ri.c.run_uuid.desc()), page)
    runs = [row.run_uuid for row in rows]
    wrote = set(conn.scalars(sa.select(_ro.c.run_uuid).where(_ro.c.run_uuid.in_(runs))))
    facets = _run_facets(conn, runs)
    parents = sorted(
        {
            row.parent_run_uuid
            for row in rows
            if row.parent_run_uuid and _user_of(facets.get(row.run_uuid, {})) is None
        }
    )
    parent_facets = _run_facets(conn, parents)
    answer = []
    for row in rows:
        user = _user_of(facets.get(row.run_uuid, {}))
        if user is None and row.parent_run_uuid:
            user = _user_of(parent_facets.get(row.parent_run_uuid, {}))
        answer.append(
            {
                "runId": row.run_uuid,
                "job": f"job:{row.namespace}:{row.job}",
                "readAt": aware(row.created_at),
                "state": row.state,
                "startedAt": aware(row.started_at),
                "endedAt": aware(row.ended_at),
                "parentRunId": row.parent_run_uuid,
                "sparkUser": user,
                "readOnly": row.run_uuid not in wrote,
            }
        )
    return answer, total
