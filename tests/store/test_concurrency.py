"""Group commit: many threads, one writer; failures stay with the call that caused them."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from headwater.errors import StoreError
from headwater.store import RecordResult, Store
from tests.store.builders import dataset, record, run_event

THREADS = 16


def _run_threads(target, count: int) -> None:  # type: ignore[no-untyped-def]
    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_single_event_callers(store: Store) -> None:
    results: dict[int, list[RecordResult]] = {}
    same = run_event("START", "2024-01-01T00:00:00Z", "00000000-0000-0000-0000-0000000000aa")

    def client(i: int) -> None:
        mine = []
        for n in range(10):
            run = f"00000000-0000-0000-{i:04d}-{n:012d}"
            mine += record(store, [run_event(
                "COMPLETE", f"2024-01-01T00:{n:02d}:00Z", run, job=f"job{i}",
                outputs=[dataset("file", f"/out/{i}")])])
        mine += record(store, [same])
        results[i] = mine

    _run_threads(client, THREADS)
    counts = store.counts()
    assert counts["runs"] == THREADS * 10 + 1
    assert counts["events"] == THREADS * 10 + 1
    # The shared event was stored by exactly one caller; every other call saw a duplicate.
    firsts = [r[-1].duplicate for r in results.values()]
    assert firsts.count(False) == 1
    assert all(not r.duplicate for rs in results.values() for r in rs[:-1])


def _install_failure(store: Store) -> None:
    """A real database error for events of job 'explode' (a trigger, not a mock)."""
    with store.engine.begin() as conn:
        if store.dialect == "sqlite":
            conn.exec_driver_sql(
                "CREATE TRIGGER explode BEFORE INSERT ON events WHEN NEW.job_name = 'explode' "
                "BEGIN SELECT RAISE(ABORT, 'boom'); END")
        else:
            conn.exec_driver_sql(
                "CREATE FUNCTION explode() RETURNS trigger AS $$ BEGIN "
                "IF NEW.job_name = 'explode' THEN RAISE EXCEPTION 'boom'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql")
            conn.exec_driver_sql(
                "CREATE TRIGGER explode BEFORE INSERT ON events "
                "FOR EACH ROW EXECUTE FUNCTION explode()")


def test_a_failing_call_does_not_fail_its_group(store: Store) -> None:
    _install_failure(store)
    outcomes: dict[int, object] = {}

    def client(i: int) -> None:
        job = "explode" if i == 3 else f"job{i}"
        good = run_event("START", "2024-01-01T00:00:00Z", f"00000000-0000-0000-0000-{i:012d}",
                         job=job, outputs=[dataset("file", f"/o/{i}")])
        try:
            outcomes[i] = record(store, [good])
        except StoreError as exc:
            outcomes[i] = exc

    _run_threads(client, 8)
    (refused,) = outcomes[3]  # type: ignore[misc]
    assert not refused.stored and "boom" in refused.refused
    assert all(isinstance(outcomes[i], list) and outcomes[i][0].stored  # type: ignore[index]
               for i in outcomes if i != 3)
    counts = store.counts()
    assert counts["events"] == 7 and counts["runs"] == 7
    # Nothing of the failed call was written, not even its dataset.
    with store.engine.connect() as conn:
        names = set(conn.scalars(sa.text("SELECT name FROM datasets")))
    assert "/o/3" not in names and len(names) == 7


def test_record_after_close_is_refused(db_url: str) -> None:
    store = Store.open(db_url)
    run = "00000000-0000-0000-0000-00000000000a"
    record(store, [run_event("START", "2024-01-01T00:00:00Z", run)])
    store.close()
    with pytest.raises(StoreError):
        record(store, [run_event("START", "2024-01-01T00:00:01Z", run)])
