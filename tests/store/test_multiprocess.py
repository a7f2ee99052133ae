"""Several processes writing one store, as ``headwater serve --workers N`` runs it.

Real processes (multiprocessing, spawn): on SQLite they hand the write lock
over through the lock file beside the database; on PostgreSQL they write
concurrently. Either way every event is stored once and derived state is the
same as if one process had written everything.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import sqlalchemy as sa

from headwater.store import Store
from tests.store.builders import dataset, record, run_event
from tests.store.dump import dump

WRITERS = 3
RUNS_PER_WRITER = 40


def _events(writer: int) -> list[dict[str, object]]:
    """Each writer's own runs, chained through shared datasets, plus events all writers send."""
    events = []
    for n in range(RUNS_PER_WRITER):
        run = f"00000000-0000-0000-{writer:04d}-{n:012d}"
        hop = n % 5
        io = {"inputs": [dataset("file", f"/lake/t{hop}", [("id", "bigint")])],
              "outputs": [dataset("file", f"/lake/t{hop + 1}", [("id", "bigint"),
                                                                 ("v", f"decimal({n % 3 + 10},2)")])]}
        events.append(run_event("START", f"2024-01-01T00:{n:02d}:00Z", run, job=f"job{hop}", **io))
        events.append(run_event("COMPLETE", f"2024-01-01T00:{n:02d}:30Z", run, job=f"job{hop}",
                                **io))
    shared = "00000000-0000-0000-ffff-000000000001"
    events.append(run_event("START", "2024-01-01T01:00:00Z", shared, job="shared"))
    events.append(run_event("COMPLETE", "2024-01-01T01:00:10Z", shared, job="shared"))
    return events


def _write(url: str, writer: int) -> None:
    store = Store.open(url)
    try:
        events = _events(writer)
        for i in range(0, len(events), 7):
            record(store, events[i : i + 7])
    finally:
        store.close()


def test_processes_writing_one_store_match_one_writer(db_url: str, tmp_path: Path) -> None:
    Store.open(db_url).close()  # migrate once, as `serve --workers` does before starting them
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write, args=(db_url, w)) for w in range(WRITERS)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=300)
    assert [p.exitcode for p in processes] == [0] * WRITERS

    alone_url = f"sqlite:///{tmp_path / 'alone.db'}"
    alone = Store.open(alone_url)
    try:
        for writer in range(WRITERS):
            record(alone, _events(writer))
        expected = dump(alone)
    finally:
        alone.close()
    together = Store.open(db_url)
    try:
        counts = together.counts()
        assert counts["events"] == WRITERS * RUNS_PER_WRITER * 2 + 2
        assert counts["runs"] == WRITERS * RUNS_PER_WRITER + 1
        assert dump(together) == expected
    finally:
        together.close()
    if db_url.startswith("sqlite"):
        database = sa.make_url(db_url).database
        assert database is not None and os.path.exists(f"{database}-writelock")
