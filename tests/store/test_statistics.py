"""A SQLite store gathers planner statistics by itself (``store.statistics``): its background
thread analyzes the tables, under ``analysis_limit``, while events come in, and the planner then
picks the index the statistics favour. The period is shortened here so a store of a few hundred
events, written in less than it, is refreshed by time rather than by growth."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from headwater.store import Store, checkpoint, dialects, migrate
from tests.store.builders import record
from tests.store.generate import generate

EVENTS = 600
PERIOD_S = 0.5
# Each event has a handful of subjects and each subject many events: with statistics the planner
# narrows by the event's hash; without them it guesses the subject index's leading column does.
LOOKUP = "SELECT * FROM event_subjects WHERE subject = 3 AND event_hash = 'x'"


def _plan(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return " ".join(row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {LOOKUP}"))
    finally:
        connection.close()


def _analyzed_tables(path: Path) -> set[str]:
    connection = sqlite3.connect(path)
    try:
        return {row[0] for row in connection.execute("SELECT DISTINCT tbl FROM sqlite_stat1")}
    finally:
        connection.close()


def test_periodic_refresh_gives_the_planner_statistics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert EVENTS < checkpoint.STATISTICS_MIN_EVENTS  # refreshed by the period, not by growth
    monkeypatch.setattr(checkpoint, "STATISTICS_EVERY_S", PERIOD_S)
    path = tmp_path / "store.db"
    events = generate(EVENTS)
    with Store.open(f"sqlite:///{path}") as store:
        # The refresh after the migrations found every table empty: nothing to record.
        assert not ({"events", "event_subjects"} & _analyzed_tables(path))
        assert "ix_event_subjects_subject_event_time" in _plan(path)
        for start in range(0, len(events), 100):
            record(store, events[start : start + 100])
        checkpointer = store._checkpointer
        assert checkpointer is not None
        deadline = time.monotonic() + PERIOD_S + 2 * checkpoint.CHECKPOINT_AFTER_S + 3
        while checkpointer.statistics_refreshes == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert checkpointer.statistics_refreshes >= 1
        assert {"events", "event_subjects", "runs", "facets", "jobs"} <= _analyzed_tables(path)
        assert "USING INDEX ix_event_subjects_event_hash" in _plan(path)


def test_closing_refreshes_what_came_in_since(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with Store.open(f"sqlite:///{path}") as store:
        # Fewer events than a refresh by growth takes, written well within the period.
        record(store, generate(EVENTS))
        assert "event_subjects" not in _analyzed_tables(path)
    assert "USING INDEX ix_event_subjects_event_hash" in _plan(path)


def test_an_upgraded_store_starts_with_statistics(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    with Store.open(url) as store:
        record(store, generate(EVENTS))
    engine = dialects.create_engine(url)
    try:
        migrate.downgrade(engine, "-1")
        with engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM sqlite_stat1")
    finally:
        engine.dispose()
    assert "ix_event_subjects_subject_event_time" in _plan(path)
    store = Store.open(url)  # upgrades the last revision again
    try:
        assert "USING INDEX ix_event_subjects_event_hash" in _plan(path)
    finally:
        store.close()
