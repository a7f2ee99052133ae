"""Retention and schema drift, on both databases: a version retention keeps (a kept run
wrote it) and the next version it keeps become adjacent when the versions between them
go, and their drift is the one the kept versions give, as a rebuild derives it, in the
deleting transaction, without notifying the drift webhook (the data did not change)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from headwater.store import Store, drift
from headwater.store import tables as t
from headwater.store.retention import prune
from tests.server.test_retention import KEEP, NOW
from tests.store.builders import dataset, record, run_event
from tests.store.ownership_nights import night_time, owned_nights

A = [("id", "long")]
B = [("id", "long"), ("amount", "double")]
C = [("id", "string"), ("amount", "double")]
GOLD = "/lake/gold/revenue"


def _drift_rows(conn: sa.Connection) -> set[tuple[Any, ...]]:
    """Each drift as (dataset, newer version's run, older version's run, time, changes)."""
    v, d, dd = t.dataset_versions, t.datasets, t.dataset_drifts
    older = v.alias("older")
    query = sa.select(
        d.c.name, v.c.run_uuid, older.c.run_uuid, dd.c.changed_at, dd.c.changes
    ).select_from(
        dd.join(d, d.c.id == dd.c.dataset_id)
        .outerjoin(v, v.c.uuid == dd.c.version_uuid)
        .outerjoin(older, older.c.uuid == dd.c.previous_version_uuid)
    )
    return {(n, new, old, at, str(changes)) for n, new, old, at, changes in conn.execute(query)}


def _stored_and_recomputed(store: Store) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """The drift rows stored, and those a rebuild derives from the versions stored."""
    with store.engine.connect() as conn:
        stored = _drift_rows(conn)
        drift.rebuild(conn)
        recomputed = _drift_rows(conn)
        conn.rollback()
    return stored, recomputed


def _clear_outbox(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(t.drift_outbox.delete())


def _queued(store: Store) -> list[str]:
    with store.engine.connect() as conn:
        return list(conn.scalars(sa.select(t.drift_outbox.c.drift_key)))


def _run(job: str, days_ago: float, number: int, fields: list[tuple[str, str]]) -> list[Any]:
    at = NOW - timedelta(days=days_ago)
    run_id = str(uuid.UUID(int=number))
    out = [dataset("file", "/shared", fields)]
    return [
        run_event(kind, (at + timedelta(minutes=m)).isoformat() + "Z", run_id, job=job, outputs=out)
        for kind, m in (("START", 0), ("COMPLETE", 5))
    ]


@pytest.mark.parametrize("batch", [1, 100])
def test_the_versions_left_around_deleted_ones_get_their_drift(store: Store, batch: int) -> None:
    # A: a job that wrote once, 100 days ago (its latest run before the cutoff stays).
    # B: 101, 99 and 98 days ago (deleted), 97 (its latest before the cutoff, and the
    # version in force at it) and a day ago. C: once, between B's deleted runs (kept as
    # A is). A's version, oldest left, loses its drift from B's deleted one before it.
    record(
        store,
        [
            *_run("b", 101, 7, C),
            *_run("a", 100, 1, A),
            *_run("b", 99, 2, B),
            *_run("c", 98.5, 3, C),
            *_run("b", 98, 4, B),
            *_run("b", 97, 5, B),
            *_run("b", 1, 6, B),
        ],
    )
    with store.engine.connect() as conn:
        assert ("/shared", str(uuid.UUID(int=1)), str(uuid.UUID(int=7))) in {
            row[:3] for row in _drift_rows(conn)
        }
    _clear_outbox(store)
    done = prune(store.engine, KEEP, now=NOW, batch=batch, settle=0)
    assert done.runs == 3 and done.dataset_versions == 3
    stored, recomputed = _stored_and_recomputed(store)
    assert stored == recomputed
    # Newer run -> older run: C after A, and B after C, both now adjacent.
    assert {(new[-1], old[-1]) for _, new, old, _, _ in stored} == {("3", "1"), ("5", "3")}
    assert _queued(store) == []


def test_a_run_kept_for_its_input_facets_keeps_a_version_before_a_schema_change(
    store: Store,
) -> None:
    # Facets from night 11: night 36's revenue run stays, with its gold/revenue version
    # (no era), and nights 37-59's versions go; night 60's (era) is in force at the cutoff.
    record(store, [event for night in owned_nights(facets_from=11) for event in night])
    night = lambda day: str(uuid.UUID(int=(day + 1) * 1000 + 3))  # noqa: E731
    with store.engine.connect() as conn:
        before = _drift_rows(conn)
    assert (GOLD, night(40), night(39)) in {row[:3] for row in before}
    _clear_outbox(store)
    assert prune(store.engine, KEEP, now=NOW, settle=0).dataset_versions > 0
    stored, recomputed = _stored_and_recomputed(store)
    assert stored == recomputed
    gold = {row[1:4] for row in stored if row[0] == GOLD}
    changed_at = night_time(60) + timedelta(minutes=35)
    assert (night(60), night(36), changed_at) in gold
    assert changed_at.date().isoformat() == "2026-03-03"
    assert all(old is not None for _, _, old, _, _ in stored)
    assert _queued(store) == []
