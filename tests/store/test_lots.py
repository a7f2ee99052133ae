"""Bounded lots, fair turns and isolation: the store's one batcher on both databases."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from headwater.events import parse_event
from headwater.store import LOT_EVENTS, Store
from tests.store.builders import dataset, record, run_event
from tests.store.test_concurrency import _install_failure


def _events(count: int, job: str = "job", offset: int = 0) -> list[dict[str, object]]:
    return [run_event("COMPLETE", f"2024-01-01T00:00:{(i % 60):02d}Z",
                      f"00000000-0000-0000-0000-{offset + i:012d}", job=job,
                      outputs=[dataset("file", f"/o/{job}/{i % 7}")])
            for i in range(count)]


@contextmanager
def _commits(store: Store) -> Iterator[list[float]]:
    """The times of every commit the store's engine makes meanwhile."""
    times: list[float] = []

    def on_commit(_conn: object) -> None:
        times.append(time.monotonic())

    sa.event.listen(store.engine, "commit", on_commit)
    try:
        yield times
    finally:
        sa.event.remove(store.engine, "commit", on_commit)


def test_a_large_call_is_written_in_bounded_transactions(store: Store) -> None:
    events = _events(LOT_EVENTS * 2 + 100)
    with _commits(store) as commits:
        results = record(store, events)
    assert len(results) == len(events) and all(r.stored and not r.duplicate for r in results)
    assert len(commits) == 3  # 500 + 500 + 100
    assert store.counts()["events"] == len(events)


def test_a_single_event_is_not_kept_waiting_behind_a_large_call(store: Store) -> None:
    big = [parse_event(e) for e in _events(LOT_EVENTS * 8, job="big")]
    done: dict[str, float] = {}

    def write_big() -> None:
        store.record(big)
        done["big"] = time.monotonic()

    with _commits(store) as commits:
        thread = threading.Thread(target=write_big)
        thread.start()
        while not commits:  # the large call's first lot is in
            time.sleep(0.001)
        (result,) = record(store, _events(1, job="single", offset=10**6))
        done["single"] = time.monotonic()
        thread.join()
    assert result.stored
    # The single event went in between the large call's lots, not after all of them.
    assert done["single"] < done["big"]
    assert sum(1 for t in commits if t <= done["single"]) <= 3


def test_one_refused_event_costs_its_lot_nothing(store: Store) -> None:
    _install_failure(store)  # the database refuses events of job 'explode'
    events = _events(LOT_EVENTS - 1, job="fine")
    events.insert(137, run_event("START", "2024-01-01T00:00:00Z",
                                 "00000000-0000-0000-0001-000000000000", job="explode"))
    with _commits(store) as commits:
        results = record(store, events)
    refused = [i for i, r in enumerate(results) if not r.stored]
    assert refused == [137]
    assert "boom" in (results[137].refused or "")
    assert store.counts()["events"] == LOT_EVENTS - 1
    # Bisection: about two transactions per halving, not one per event.
    assert len(commits) < 25


def test_refused_events_are_found_wherever_they_sit(store: Store) -> None:
    _install_failure(store)
    events = _events(40, job="fine")
    bad_at = [0, 13, 14, 39]
    for i in bad_at:
        events[i] = run_event("START", "2024-01-01T00:00:00Z",
                              f"00000000-0000-0000-0002-{i:012d}", job="explode")
    results = record(store, events)
    assert [i for i, r in enumerate(results) if not r.stored] == bad_at
    assert store.counts()["events"] == 40 - len(bad_at)
    # Stored events that came back in a later call are duplicates, refused ones refused again.
    again = record(store, events)
    assert [r.duplicate for i, r in enumerate(again) if i not in bad_at] == [True] * 36
    assert all(not again[i].stored for i in bad_at)
