"""Replay: the store is a function of the set of events, not of their order.

Over 10,000 generated events (jobs chained through datasets; START, RUNNING,
COMPLETE, FAIL, OTHER; two producers per run; schema changes; DatasetEvents
and JobEvents) ingested in order in 500-event batches, and again shuffled
with 20% duplicates in random batch sizes, must leave identical contents.
``dump`` says what is compared and the two things excluded (surrogate ids,
``events.received_at``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from headwater.store import Store, migrate
from tests.store.dump import dump
from tests.store.generate import generate
from tests.store.builders import record

EVENTS = 10_000


def _ingest_in_order(store: Store, events: list[dict[str, Any]]) -> None:
    for i in range(0, len(events), 500):
        results = record(store, events[i : i + 500])
        assert not any(r.duplicate for r in results)


def _ingest_shuffled(store: Store, events: list[dict[str, Any]], rng: random.Random) -> int:
    replay = events + rng.sample(events, len(events) // 5)
    rng.shuffle(replay)
    duplicates = 0
    i = 0
    while i < len(replay):
        size = rng.choice((1, 7, 64, 250, 500, 731))
        duplicates += sum(r.duplicate for r in record(store, replay[i : i + size]))
        i += size
    return duplicates


@pytest.mark.slow
def test_shuffled_duplicated_replay_gives_identical_store(db_url: str) -> None:
    events = generate(EVENTS)
    assert len(events) >= EVENTS
    kinds = {e.get("eventType") for e in events}
    assert {"START", "RUNNING", "COMPLETE", "FAIL", "OTHER"} <= kinds
    with Store.open(db_url) as in_order:
        _ingest_in_order(in_order, events)
        expected = dump(in_order)
        # Start the second ingestion from an empty schema in the same database.
        migrate.downgrade(in_order.engine, "base")
    with Store.open(db_url) as shuffled:
        assert shuffled.counts()["events"] == 0
        duplicates = _ingest_shuffled(shuffled, events, random.Random(2024))
        actual = dump(shuffled)
    assert duplicates == len(events) // 5
    assert len(expected["events"]) == len(events)
    for table in expected:
        assert actual[table] == expected[table], f"{table} differs after shuffled replay"
    # The comparison is not vacuous: every fact table holds rows.
    for table in ("runs", "dataset_versions", "job_versions", "column_lineage", "fields",
                  "facets", "event_subjects", "run_input_versions"):
        assert expected[table], table


@pytest.mark.postgres
def test_sqlite_and_postgresql_hold_identical_contents(pg_url: str, tmp_path: Path) -> None:
    """The same events give the same canonical dump on both databases."""
    events = generate(2_000, seed=11)
    dumps = []
    for url in (f"sqlite:///{tmp_path / 'same.db'}", pg_url):
        with Store.open(url) as store:
            for i in range(0, len(events), 250):
                record(store, events[i : i + 250])
            dumps.append(dump(store))
    sqlite_dump, pg_dump = dumps
    assert sqlite_dump["runs"]
    for table in sqlite_dump:
        assert sqlite_dump[table] == pg_dump[table], f"{table} differs between databases"
