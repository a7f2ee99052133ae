"""Concurrent single events share store calls, and each request keeps its own outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from headwater.errors import EventError
from headwater.server.coalesce import Coalescer
from headwater.store import RecordResult, Store
from tests.server.events import run_event


def test_concurrent_events_are_written_and_answered_each(store: Store) -> None:
    events = [run_event() for _ in range(40)]

    async def record_all() -> list[RecordResult]:
        coalescer = Coalescer(store, max_events=16)
        return list(await asyncio.gather(*(coalescer.record(e) for e in events)))

    results = asyncio.run(record_all())
    assert [r.duplicate for r in results] == [False] * 40
    assert len({r.event_hash for r in results}) == 40
    assert store.counts()["events"] == 40


def test_the_same_event_twice_in_one_lot_is_one_row(store: Store) -> None:
    event = run_event()

    async def record_twice() -> list[RecordResult]:
        coalescer = Coalescer(store)
        return list(await asyncio.gather(coalescer.record(event), coalescer.record(dict(event))))

    first, second = asyncio.run(record_twice())
    assert first.event_hash == second.event_hash
    assert sorted([first.duplicate, second.duplicate]) == [False, True]
    assert store.counts()["events"] == 1


def test_an_event_the_store_refuses_fails_alone(store: Store) -> None:
    # Not validated first (the routes always validate): the store itself refuses
    # this one, and only its caller sees the error.
    refused: dict[str, Any] = {"eventTime": 5, "producer": "p", "run": {}, "job": {}}
    good = [run_event(), run_event()]

    async def record_lot() -> list[Any]:
        coalescer = Coalescer(store)
        return list(await asyncio.gather(
            coalescer.record(good[0]), coalescer.record(refused), coalescer.record(good[1]),
            return_exceptions=True,
        ))

    first, error, third = asyncio.run(record_lot())
    assert isinstance(first, RecordResult) and isinstance(third, RecordResult)
    assert isinstance(error, EventError)
    assert error.field == "eventTime"
    assert store.counts()["events"] == 2


@pytest.mark.parametrize("lot_size", [1, 3])
def test_a_lone_request_is_not_held_back(store: Store, lot_size: int) -> None:
    async def one_after_another() -> None:
        coalescer = Coalescer(store, max_events=lot_size)
        for _ in range(3):
            await asyncio.wait_for(coalescer.record(run_event()), timeout=30)

    asyncio.run(one_after_another())
    assert store.counts()["events"] == 3
