"""``drift_outbox``: drifts queued for the drift webhook, and the worker's statements.

The write transaction that writes a drift row queues the drift's key
(:func:`enqueue`, from :mod:`headwater.store.drift` and
:mod:`headwater.store.contract`), so the queue holds a drift exactly when its row
was committed. A key already queued stays queued once: the worker reads the drift
as it stands when it delivers, so a later change of the same drift is carried by
the same delivery.

The worker (:mod:`headwater.server.drift_webhook`) takes the due rows oldest
first (:func:`due`), claims one by moving its ``next_attempt_at`` ahead only if
no other worker moved it first (:func:`claim`; several server processes may
share a store), then deletes it when delivered or given up (:func:`remove`) or
sets its next attempt (:func:`retry`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from headwater.store import dialects
from headwater.store import tables as t
from headwater.store.transactions import now_utc, translate, write_transaction

__all__ = [
    "DriftKey",
    "Queued",
    "claim",
    "contract_key",
    "due",
    "enqueue",
    "parse_key",
    "prune",
    "queued_count",
    "remove",
    "retry",
    "version_key",
]

_o = t.drift_outbox


def version_key(version_uuid: str) -> str:
    return f"version:{version_uuid}"


def contract_key(dataset_id: int, job_id: int) -> str:
    return f"contract:{dataset_id}:{job_id}"


@dataclass(frozen=True, slots=True)
class DriftKey:
    """A queued drift: a version drift by its newer version, a contract drift by its
    (dataset, consumer job) row ids."""

    kind: str
    version_uuid: str | None = None
    dataset_id: int | None = None
    job_id: int | None = None


def parse_key(key: str) -> DriftKey:
    kind, _, rest = key.partition(":")
    if kind == "contract":
        dataset_id, _, job_id = rest.partition(":")
        return DriftKey("contract", dataset_id=int(dataset_id), job_id=int(job_id))
    return DriftKey("version", version_uuid=rest)


def enqueue(conn: sa.Connection, keys: Iterable[str]) -> None:
    """Queue ``keys`` in the caller's transaction (a key already queued stays as it is)."""
    now = now_utc()
    rows = [
        {
            "drift_key": key,
            "enqueued_at": now,
            "attempts": 0,
            "next_attempt_at": now,
            "last_error": None,
        }
        for key in sorted(set(keys))
    ]
    if rows:
        statement = dialects.insert(conn.dialect.name, _o).on_conflict_do_nothing(
            index_elements=["drift_key"]
        )
        conn.execute(statement, rows)


@dataclass(frozen=True, slots=True)
class Queued:
    id: int
    drift_key: str
    enqueued_at: datetime
    attempts: int
    next_attempt_at: datetime


_DUE = (
    sa.select(_o.c.id, _o.c.drift_key, _o.c.enqueued_at, _o.c.attempts, _o.c.next_attempt_at)
    .where(_o.c.next_attempt_at <= sa.bindparam("now"))
    .order_by(_o.c.next_attempt_at, _o.c.id)
    .limit(sa.bindparam("limit"))
)


def due(engine: sa.Engine, limit: int, now: datetime | None = None) -> list[Queued]:
    """Up to ``limit`` rows whose next attempt is due, the longest waiting first."""
    try:
        with engine.connect() as conn:
            rows = conn.execute(_DUE, {"now": now or now_utc(), "limit": limit})
            return [Queued(*row) for row in rows]
    except SQLAlchemyError as exc:
        raise translate(exc) from exc


def claim(engine: sa.Engine, item: Queued, until: datetime) -> bool:
    """Hold ``item`` until ``until`` unless another worker claimed or finished it first."""
    return _update(engine, item, next_attempt_at=until) == 1


def retry(engine: sa.Engine, item: Queued, at: datetime, error: str) -> None:
    """Count a failed attempt on a claimed ``item`` and set its next one."""
    _update(engine, item, attempts=item.attempts + 1, next_attempt_at=at, last_error=error[:1000])


def remove(engine: sa.Engine, item: Queued) -> None:
    """Delete ``item`` (delivered, given up, or its drift gone)."""
    try:
        with write_transaction(engine, records=False) as conn:
            conn.execute(_o.delete().where(_o.c.id == item.id))
    except SQLAlchemyError as exc:
        raise translate(exc) from exc


def prune(conn: sa.Connection, before: datetime) -> int:
    """Delete the drifts queued before ``before`` in the caller's transaction; how many.

    Retention calls it with its cutoff: without a webhook nothing else empties the
    queue, and a drift queued before the window is past the worker's give-up time.
    """
    return conn.execute(_o.delete().where(_o.c.enqueued_at < before)).rowcount or 0


def _update(engine: sa.Engine, item: Queued, **values: object) -> int:
    # Matched on the attempt count too: a row another worker retried meanwhile is not ours.
    statement = _o.update().where(_o.c.id == item.id, _o.c.attempts == item.attempts)
    if "attempts" not in values:
        statement = statement.where(_o.c.next_attempt_at == item.next_attempt_at)
    try:
        with write_transaction(engine, records=False) as conn:
            return conn.execute(statement.values(**values)).rowcount
    except SQLAlchemyError as exc:
        raise translate(exc) from exc


def queued_count(engine: sa.Engine) -> int:
    """How many drifts wait for delivery."""
    try:
        with engine.connect() as conn:
            return int(conn.scalar(sa.select(sa.func.count()).select_from(_o)) or 0)
    except SQLAlchemyError as exc:
        raise translate(exc) from exc
