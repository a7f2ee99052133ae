"""List pages deep in big lists: ``cursor`` against ``offset``, on SQLite and PostgreSQL
(prints; not pass/fail).

Loads, through the store's own write path (``Store.record`` of parsed events in
500-event batches), one namespace with ``--datasets`` datasets (a DatasetEvent
each, three schema fields) and one job with ``--runs`` runs (a COMPLETE event
each), so the raw log holds both. Then, over HTTP (the in-process app, gzip as
a client would ask for it), interleaved round by round so every arm meets the
same load and caches, for each list:

- the first page (``limit=100``);
- the page ``--depth`` items deep by ``offset``;
- the same page by ``cursor`` (the ``nextCursor`` of the page before it);
- the bare path of the first page: its rows and its count fetched from the
  database, no record built, no JSON (``reads.common.paged`` on the list's query),
  so the HTTP answer's cost per item is seen beside what the database costs.

Target: a deep cursor page costs <= 2x the first page. Prints p50/p95 per arm,
the deep/first ratios, the load average, and the store's size on disk.

    .venv/bin/python benchmarks/lists.py [--datasets 110000] [--runs 110000]
        [--depth 100000] [--rounds 30] [--only sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient  # noqa: E402

from headwater.config import Settings  # noqa: E402
from headwater.events import parse_event  # noqa: E402
from headwater.server.app import create_app  # noqa: E402
from headwater.store import Store  # noqa: E402

NS = "bench"
JOB = "nightly"
PRODUCER = "https://github.com/headwater/headwater/benchmarks/lists"
START = datetime(2026, 1, 1, tzinfo=UTC)
LIMIT = 100


def _time(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _dataset_events(count: int) -> Iterator[dict[str, Any]]:
    schema_url = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"
    for i in range(count):
        fields = [{"name": f"c{k}", "type": "string"} for k in range(3)]
        yield {
            "eventTime": _time(START + timedelta(seconds=i)),
            "producer": PRODUCER,
            "schemaURL": schema_url,
            "dataset": {
                "namespace": NS,
                "name": f"ds_{i:07d}",
                "facets": {
                    "schema": {
                        "_producer": PRODUCER,
                        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                        "fields": fields,
                    }
                },
            },
        }


def _run_events(count: int) -> Iterator[dict[str, Any]]:
    schema_url = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    for i in range(count):
        yield {
            "eventType": "COMPLETE",
            "eventTime": _time(START + timedelta(seconds=i)),
            "producer": PRODUCER,
            "schemaURL": schema_url,
            "run": {"runId": str(uuid.UUID(int=i + 1, version=4))},
            "job": {"namespace": NS, "name": JOB},
            "inputs": [],
            "outputs": [],
        }


def load(store: Store, datasets: int, runs: int) -> tuple[int, float]:
    started = time.perf_counter()
    count = 0
    for source in (_dataset_events(datasets), _run_events(runs)):
        batch: list[Any] = []
        for event in source:
            batch.append(parse_event(event))
            if len(batch) == 500:
                store.record(batch)
                count += len(batch)
                batch = []
        if batch:
            store.record(batch)
            count += len(batch)
    return count, time.perf_counter() - started


LISTS: dict[str, tuple[str, dict[str, Any], str]] = {
    "datasets": (f"/api/v1/namespaces/{NS}/datasets", {}, "datasets"),
    "job runs": (f"/api/v1/namespaces/{NS}/jobs/{JOB}/runs", {}, "runs"),
    "events": ("/api/v1/events/lineage", {}, "events"),
}


def _deep_cursor(client: TestClient, path: str, params: dict[str, Any], depth: int) -> str:
    """The cursor of the page starting ``depth`` items deep (read once by offset)."""
    answer = client.get(path, params={**params, "limit": LIMIT, "offset": depth - LIMIT})
    answer.raise_for_status()
    cursor = answer.json()["nextCursor"]
    assert cursor, f"{path} holds fewer than {depth} items"
    return str(cursor)


def _bare_paths(store: Store) -> dict[str, Callable[[], Any]]:
    """The first page of each list as rows only (the list's own query and count)."""
    import sqlalchemy as sa

    from headwater.store import tables as t
    from headwater.store.reads import datasets as dataset_reads
    from headwater.store.reads import runs as run_reads
    from headwater.store.reads.common import Page, paged
    from headwater.store.reads.visibility import visible

    ds, r, ev = t.datasets, t.runs, t.events
    page = Page(limit=LIMIT)

    def datasets() -> Any:
        with store.engine.connect() as conn:
            namespace = dataset_reads.namespace_id(conn, NS)
            query = dataset_reads._dataset_select().where(
                ds.c.namespace_id == namespace, visible(ds)
            )
            return paged(conn, query, [ds.c.name], page)

    def job_runs() -> Any:
        with store.engine.connect() as conn:
            job = conn.execute(sa.select(t.jobs.c.id).where(t.jobs.c.name == JOB)).scalar_one()
            query = run_reads._run_select().where(r.c.job_id == job)
            return paged(conn, query, [r.c.created_at.desc(), r.c.uuid.desc()], page)

    def events() -> Any:
        with store.engine.connect() as conn:
            query = sa.select(ev.c.payload)
            return paged(conn, query, [ev.c.event_time.desc(), ev.c.id.desc()], page)

    return {"datasets": datasets, "job runs": job_runs, "events": events}


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1000 for s in samples)
    return statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def measure(client: TestClient, store: Store, depth: int, rounds: int) -> None:
    bare = _bare_paths(store)
    for label, (path, params, field) in LISTS.items():
        cursor = _deep_cursor(client, path, params, depth)
        arms: dict[str, Callable[[], Any]] = {
            "first page": lambda p=path, q=params: client.get(p, params={**q, "limit": LIMIT}),
            f"offset {depth:,}": lambda p=path, q=params: client.get(
                p, params={**q, "limit": LIMIT, "offset": depth}
            ),
            f"cursor {depth:,} deep": lambda p=path, q=params, c=cursor: client.get(
                p, params={**q, "limit": LIMIT, "cursor": c}
            ),
            "bare path, first page": bare[label],
        }
        samples: dict[str, list[float]] = {arm: [] for arm in arms}
        firsts: dict[str, Any] = {}
        for round_no in range(rounds + 2):
            order = list(arms) if round_no % 2 else list(arms)[::-1]
            for arm in order:
                started = time.perf_counter()
                answer = arms[arm]()
                elapsed = time.perf_counter() - started
                if round_no >= 2:  # warm-up
                    samples[arm].append(elapsed)
                if arm.startswith("bare"):
                    continue
                answer.raise_for_status()
                firsts.setdefault(arm, answer.json()[field])
        same = firsts[f"offset {depth:,}"] == firsts[f"cursor {depth:,} deep"]
        print(f"  {label}: (offset and cursor pages equal: {same})")
        base = _percentiles(samples["first page"])
        for arm, values in samples.items():
            p50, p95 = _percentiles(values)
            print(
                f"    {arm:<22} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms  "
                f"x first page: p50 {p50 / base[0]:5.2f}  p95 {p95 / base[1]:5.2f}"
            )
        print(f"    load {os.getloadavg()[0]:.1f}")


def run_one(label: str, url: str, args: argparse.Namespace, size: Callable[[], str]) -> None:
    print(f"\n== {label}")
    store = Store.open(url, migrate=True)
    try:
        count, seconds = load(store, args.datasets, args.runs)
        print(f"  loaded {count:,} events in {seconds:.1f} s ({count / seconds:,.0f}/s); "
              f"store {size()}")
        with store.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
        with TestClient(create_app(Settings(), store)) as client:
            measure(client, store, args.depth, args.rounds)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=110_000)
    parser.add_argument("--runs", type=int, default=110_000)
    parser.add_argument("--depth", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    if min(args.datasets, args.runs) < args.depth + LIMIT:
        parser.error("--datasets and --runs must exceed --depth by a page")
    print(f"lists: {args.datasets:,} datasets, {args.runs:,} runs of one job, "
          f"pages of {LIMIT} at depth {args.depth:,}; load {os.getloadavg()[0]:.1f}")
    if args.only in (None, "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "lists.db"

            def sqlite_size() -> str:
                total = sum(p.stat().st_size for p in Path(tmp).iterdir())
                return f"{total / 1e6:,.0f} MB on disk"

            run_one("SQLite", f"sqlite:///{path}", args, sqlite_size)
    if args.only in (None, "postgresql"):
        from tests.support.pgcluster import find_pg_bin, start_cluster

        if find_pg_bin() is None:
            print("\n== PostgreSQL: server binaries not installed; skipped")
            return
        cluster = start_cluster()
        try:
            url = cluster.create_database("lists_bench")

            def pg_size() -> str:
                import sqlalchemy as sa

                engine = sa.create_engine(url)
                with engine.connect() as conn:
                    size = conn.exec_driver_sql(
                        "SELECT pg_database_size(current_database())"
                    ).scalar_one()
                engine.dispose()
                return f"{size / 1e6:,.0f} MB on disk"

            run_one("PostgreSQL", url, args, pg_size)
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
