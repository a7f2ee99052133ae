"""WAL checkpoints run in the store's own thread, not inside a writer's commit (SQLite)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from headwater.store import Store
from headwater.store.checkpoint import WalCheckpointer
from headwater.store.dialects import SQLITE_AUTOCHECKPOINT_PAGES
from tests.store.generate import generate
from tests.store.builders import record


def _wait_for(condition, seconds: float = 20.0) -> bool:  # noqa: ANN001 - a test helper
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _wal_database(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # only the checkpointer copies pages back
    conn.execute("CREATE TABLE t (x TEXT)")
    return conn


def test_checkpoints_after_enough_events(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    writer = _wal_database(path)
    checkpointer = WalCheckpointer(str(path), after_events=100, after_s=3600)
    try:
        with writer:  # one transaction
            writer.execute("BEGIN")
            writer.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 2_000)
        checkpointer.committed(99)
        time.sleep(0.3)
        assert checkpointer.checkpoints == 0  # below the threshold, before the timer
        assert path.stat().st_size < 100_000  # the rows are only in the WAL so far
        checkpointer.committed(1)
        assert _wait_for(lambda: checkpointer.checkpoints == 1)
        # The checkpoint copied them into the database file.
        assert path.stat().st_size > 2_000 * 500
    finally:
        checkpointer.close()
        writer.close()


def test_a_trickle_is_checkpointed_by_the_timer(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    writer = _wal_database(path)
    checkpointer = WalCheckpointer(str(path), after_events=1_000_000, after_s=0.2)
    try:
        writer.execute("INSERT INTO t VALUES ('one')")
        checkpointer.committed(1)
        assert _wait_for(lambda: checkpointer.checkpoints == 1)
        time.sleep(0.5)
        assert checkpointer.checkpoints == 1  # nothing committed since: nothing to do
    finally:
        checkpointer.close()
        writer.close()


def test_store_checkpoints_in_the_background(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = Store.open(f"sqlite:///{path}")
    try:
        checkpointer = store._checkpointer  # noqa: SLF001 - the behaviour under test
        assert checkpointer is not None
        with store.engine.connect() as conn:
            pages = conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar()
        assert pages == SQLITE_AUTOCHECKPOINT_PAGES  # the writers' own: a backstop only
        events = generate(1_200)
        for start in range(0, len(events), 300):
            record(store, events[start:start + 300])
        assert _wait_for(lambda: checkpointer.checkpoints >= 1)
        assert store.counts()["events"] == len(events)
    finally:
        store.close()
    assert not checkpointer._thread.is_alive()  # noqa: SLF001
    # Closed cleanly: SQLite folded the WAL into the file and removed it.
    assert not (tmp_path / "store.db-wal").exists()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == len(events)


def test_memory_store_has_no_checkpointer() -> None:
    store = Store.open("sqlite://")
    try:
        assert store._checkpointer is None  # noqa: SLF001
    finally:
        store.close()


def test_a_failed_round_is_retried(tmp_path: Path) -> None:
    """A checkpoint that fails (here: the file is not there yet) must not stop the thread."""
    path = tmp_path / "later" / "db.sqlite"
    checkpointer = WalCheckpointer(str(path), after_events=1, after_s=0.1)
    try:
        checkpointer.committed(1)
        time.sleep(0.5)  # several rounds fail: "unable to open database file"
        assert checkpointer.checkpoints == 0
        assert checkpointer._thread.is_alive()  # noqa: SLF001
        path.parent.mkdir()
        writer = _wal_database(path)
        writer.execute("INSERT INTO t VALUES ('one')")
        assert _wait_for(lambda: checkpointer.checkpoints >= 1)
        writer.close()
    finally:
        checkpointer.close()
