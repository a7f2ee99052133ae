"""The paths that write a lot in one transaction or a few leave the WAL no larger than SQLite
keeps it (``journal_size_limit``), so the first write after them does not cut it down (SQLite).

The store's limit is lowered to 32 KiB here, with the same pragma every connection sets, so a
store of a few hundred events stands in for a grown one: what each path writes outgrows it.
Each path runs while the store stays open (a serving process), since SQLite deletes the WAL
when the last connection closes.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from headwater.store import Store, access, dialects, migrate
from headwater.store.retention import prune
from tests.store.builders import record
from tests.store.generate import generate

LIMIT = 32 * 1024
EVENTS = 400


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(dialects, "SQLITE_WAL_KEEP_BYTES", LIMIT)
    return LIMIT


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """A closed store file holding a generated history, and its row counts."""
    path = tmp_path_factory.mktemp("history") / "store.db"
    events = generate(EVENTS)
    with Store.open(f"sqlite:///{path}") as store:
        for start in range(0, len(events), 100):
            record(store, events[start : start + 100])
        counts = store.counts()
    assert not _wal(path).exists()  # the last connection's close checkpointed and removed it
    return path, counts


@pytest.fixture
def filled(
    history: tuple[Path, dict[str, int]], tmp_path: Path, small_limit: int
) -> Iterator[tuple[str, Path, dict[str, int]]]:
    """A copy of the history's store for one test: its URL, path and row counts."""
    source, counts = history
    path = tmp_path / "store.db"
    shutil.copyfile(source, path)
    yield f"sqlite:///{path}", path, counts


def _wal(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def _wal_bytes(path: Path) -> int:
    return _wal(path).stat().st_size if _wal(path).exists() else 0


def _intact(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        conn.close()


def test_a_migration_that_ran_leaves_the_wal_within_the_limit(filled) -> None:  # noqa: ANN001
    url, path, counts = filled
    engine = dialects.create_engine(url)
    try:  # back to before the fingerprints table, the runs' update-time index and the histories
        migrate.downgrade(engine, "0017")
    finally:
        engine.dispose()
    with Store.open(url) as store:  # migrates: the migrations above fill and index again
        assert migrate.current_revision(store.engine) == migrate.head_revision()
        assert _wal_bytes(path) <= LIMIT
        assert store.counts() == counts
        _intact(path)
        record(store, generate(5, seed=11))  # the store takes writes after it
        assert store.counts()["events"] > counts["events"]


def test_opening_an_up_to_date_store_leaves_the_wal_alone(filled) -> None:  # noqa: ANN001
    url, path, _ = filled
    with Store.open(url) as store:
        record(store, generate(40, seed=13))  # its group commits' WAL stays beside the store
        before = _wal_bytes(path)
        assert before > LIMIT
        with Store.open(url):  # a second process opening it: no migration ran, nothing is done
            assert _wal_bytes(path) == before


def test_retention_leaves_the_wal_within_the_limit(filled) -> None:  # noqa: ANN001
    url, path, counts = filled
    with Store.open(url) as store:
        with store.engine.connect() as conn:
            newest = conn.scalar(sa.text("SELECT max(updated_at) FROM runs"))
        newest = newest if isinstance(newest, datetime) else datetime.fromisoformat(newest)
        done = prune(store.engine, timedelta(hours=6), now=newest, settle=0, batch=20)
        assert done.runs > 0 and done.transactions > 1
        assert _wal_bytes(path) <= LIMIT
        assert store.counts()["runs"] == counts["runs"] - done.runs
        _intact(path)


def test_pruning_the_audit_log_leaves_the_wal_within_the_limit(filled) -> None:  # noqa: ANN001
    url, path, _ = filled
    old = datetime(2024, 1, 1)
    with Store.open(url) as store:
        with store.engine.begin() as conn:
            conn.execute(
                sa.insert(access.audit_log),
                [
                    {
                        "at": old + timedelta(seconds=i),
                        "operation": "lineage.read",
                        "target": f"dataset:s3://lake:clean/source_{i % 7}",
                        "outcome": "ok",
                        "count": 1,
                    }
                    for i in range(3_000)
                ],
            )
        assert access.prune_audit(store.engine, old + timedelta(days=1)) == 3_000
        assert _wal_bytes(path) <= LIMIT
        _intact(path)
