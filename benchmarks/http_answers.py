"""Marquez-compatible answers over HTTP against their bare path, per item (used by graph.py).

Three arms, alternated query by query in rotating order on one store:

- ``reused``: the server as it runs, records' JSON reused between answers
  (``headwater.server.record_fragments``), each query asked once before the
  timed rounds: every record comes from the cache, as between two writes;
- ``rebuilt``: a second app on the same store whose cache files nothing, so every
  record is built for every answer: what the first answer after a write costs,
  and what every answer cost before the records were reused;
- ``bare``: the same walk or page and the answer's rows fetched from the
  database, no record built and no JSON.

Under continuous writes (``measure_written``), one event is ingested before every
request of every arm (a new run of a random job of the graph: its START, then
its COMPLETE), as a store taking events all the time sees, with three arms:

- ``per-row``: the server as it runs, each record's JSON reused until a write
  changes its rows (``headwater.store.revisions``);
- ``watermark``: the same cache keyed by the whole store's watermark instead,
  so every write makes every record be built again (how records were kept
  before per-row revisions);
- ``bare``: as above.

The HTTP requests are answered in-process through ASGI (every middleware, the
route in the thread pool, gzip accepted as a browser would), with no HTTP client
in the process: the time is until the app has sent the whole answer. Per
answered item (lineage node, list item): wall-clock p50/p95 and CPU (this
process's, which holds the SQLite engine and the app's threads; not
PostgreSQL's server processes). Under continuous writes also the median of the
answers' CPU per item: a garbage collection of what the watermark arm and the
ingest allocated lands in whichever request runs then, and moves the mean of a
cheap arm by more than the arm's own cost.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa
import synthetic

from headwater.config import Settings
from headwater.events import parse_event
from headwater.graph.model import Direction, NodeId, NodeType
from headwater.graph.traverse import walk
from headwater.server.app import create_app
from headwater.server.record_fragments import RecordFragments
from headwater.server.routes.lineage_read import MAX_V1_NODES
from headwater.store import Store
from headwater.store import tables as t
from headwater.store.reads import datasets as dataset_reads
from headwater.store.reads import jobs as job_reads
from headwater.store.reads.common import Page
from headwater.store.reads.table_lineage import TableLineage
from headwater.store.reads.visibility import visible
from headwater.store.reads.watermark import read_watermark

__all__ = ["measure_first_pages", "measure_lists", "measure_v1", "measure_written"]

ARMS = ("reused", "rebuilt", "bare")
# A query: the HTTP path and parameters, the bare path (returns its item count), and
# the key of the answer's items.
Query = tuple[str, dict[str, Any], Callable[[Any], int], str]


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


class _InProcess:
    """An app answered in-process through ASGI on one event loop, with no HTTP client:
    the request's cost is the app's (middleware, route, thread pool), as under
    uvicorn, without a client's own work in the same process's CPU time."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.runner = asyncio.Runner()
        self.lifespan = app.router.lifespan_context(app)
        self.runner.run(self.lifespan.__aenter__())

    def close(self) -> None:
        self.runner.run(self.lifespan.__aexit__(None, None, None))
        self.runner.close()

    def get(self, path: str, params: dict[str, Any]) -> tuple[float, float, bytes, bytes]:
        """(wall s, cpu s, body as sent, body decoded) of one GET accepting gzip."""
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": urlencode(params).encode(), "root_path": "",
            "headers": [(b"host", b"bench"), (b"accept-encoding", b"gzip")],
            "client": ("127.0.0.1", 1), "server": ("bench", 80), "state": {},
        }
        sent: list[Any] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        started, started_cpu = time.perf_counter(), time.process_time()
        self.runner.run(self.app(scope, receive, send))
        wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
        assert sent[0]["status"] == 200, (path, params, sent)
        headers = {k.decode().lower(): v.decode() for k, v in sent[0]["headers"]}
        body = b"".join(m.get("body", b"") for m in sent[1:])
        encoded = headers.get("content-encoding") == "gzip"
        return wall, cpu, body, gzip.decompress(body) if encoded else body


def _run(store: Store, label: str, queries: list[Query], unit: str) -> None:
    reused_app = create_app(Settings(), store)
    rebuilt_app = create_app(Settings(), store)
    rebuilt_app.state.record_fragments = RecordFragments(max_bytes=0)

    wall: dict[str, list[float]] = {arm: [] for arm in ARMS}
    cpu: dict[str, float] = dict.fromkeys(ARMS, 0.0)
    items_seen: list[int] = []
    sent_bytes = json_bytes = 0
    clients = {"reused": _InProcess(reused_app), "rebuilt": _InProcess(rebuilt_app)}
    # Every answer asked once first: the reused arm then measures records already built
    # at this watermark, a store's steady state between writes.
    for path, params, _, _ in queries:
        clients["reused"].get(path, params)
    with store.engine.connect() as conn:
        for round_no, (path, params, bare, key) in enumerate(queries):
            order = ARMS[round_no % 3 :] + ARMS[: round_no % 3]
            seconds: dict[str, tuple[float, float]] = {}
            answers: dict[str, bytes] = {}
            for arm in order:
                if arm == "bare":
                    started, started_cpu = time.perf_counter(), time.process_time()
                    bare(conn)
                    seconds[arm] = (
                        time.perf_counter() - started, time.process_time() - started_cpu
                    )
                else:
                    took, took_cpu, sent, body = clients[arm].get(path, params)
                    seconds[arm] = (took, took_cpu)
                    answers[arm] = body
                    if arm == "reused":
                        sent_size = len(sent)
            # The same content (a record's facets are in the order the database
            # returned them, which on PostgreSQL may differ between two builds).
            content = json.loads(answers["reused"])
            assert content == json.loads(answers["rebuilt"]), (path, params)
            items = max(1, len(content[key]))
            if round_no < 3:
                continue  # warm-up
            sent_bytes += sent_size
            json_bytes += len(answers["reused"])
            items_seen.append(items)
            for arm in ARMS:
                wall[arm].append(seconds[arm][0] / items)
                cpu[arm] += seconds[arm][1]
    for client in clients.values():
        client.close()
    total = sum(items_seen)
    print(f"  {label}: {len(items_seen)} answers, {unit}/answer median "
          f"{statistics.median(items_seen):.0f} max {max(items_seen)}; bytes/{unit} "
          f"{json_bytes / total:,.0f} as JSON, {sent_bytes / total:,.0f} sent (gzip)")
    for arm in ARMS:
        us = sorted(v * 1e6 for v in wall[arm])
        p95 = us[min(len(us) - 1, round(0.95 * (len(us) - 1)))]
        print(f"    {arm:8s} per {unit}: wall p50 {statistics.median(us):8.1f} us  p95 "
              f"{p95:8.1f} us   cpu {cpu[arm] / total * 1e6:8.1f} us")

    def ratio(arm: str, of: str) -> str:
        by_wall = statistics.median(wall[arm]) / statistics.median(wall[of])
        return f"wall {by_wall:.1f}x cpu {cpu[arm] / cpu[of]:.1f}x"

    print(f"    reused / bare {ratio('reused', 'bare')} (target <= 2x);  rebuilt / reused "
          f"{ratio('rebuilt', 'reused')};  rebuilt / bare {ratio('rebuilt', 'bare')}  "
          f"load {_load()}")


def measure_v1(store: Store, graph: synthetic.SyntheticGraph, queries: int,
               rng: random.Random) -> None:
    """``GET /api/v1/lineage`` (depth 20) from random middle-layer datasets."""
    ns = synthetic.NAMESPACE
    middle = [o for job in graph.jobs if 3 <= job.layer <= synthetic.LAYERS - 3
              for o in job.outputs] or [o for job in graph.jobs for o in job.outputs]

    chosen = [f"dataset:{ns}:{rng.choice(middle)}" for _ in range(queries + 3)]
    _run(store, "v1 lineage, depth 20, HTTP vs bare path",
         [("/api/v1/lineage", {"nodeId": n, "depth": 20}, _v1_bare(n), "graph") for n in chosen],
         "node")


def _v1_bare(node: str) -> Callable[[Any], int]:
    """The v1 lineage answer's bare path: the walk and its nodes' rows, no record."""
    def bare(conn: Any) -> int:
        found = walk(TableLineage(conn), node, Direction.BOTH, 20, MAX_V1_NODES)
        parsed = [NodeId.parse(n.id) for n in found.nodes]
        dataset_reads.dataset_rows_by_keys(
            conn, [(p.namespace, p.name) for p in parsed if p.type is NodeType.DATASET])
        job_reads.job_rows_by_keys(
            conn, [(p.namespace, p.name) for p in parsed if p.type is NodeType.JOB])
        return len(found.nodes)

    return bare


def measure_lists(store: Store, queries: int, rng: random.Random) -> None:
    """``GET /api/v1/namespaces/{ns}/datasets`` and ``.../jobs``, ``limit=100`` at random
    offsets, against the page's rows."""
    ns = synthetic.NAMESPACE
    with store.engine.connect() as conn:
        datasets = dataset_reads.dataset_rows_page(conn, ns, Page(limit=1))[1]
        jobs = job_reads.job_rows_page(conn, ns, Page(limit=1))[1]
    for kind, count, rows_page in (
        ("datasets", datasets, dataset_reads.dataset_rows_page),
        ("jobs", jobs, job_reads.job_rows_page),
    ):
        def bare_of(offset: int, rows_page: Any = rows_page) -> Callable[[Any], int]:
            return lambda conn: len(rows_page(conn, ns, Page(limit=100, offset=offset))[0])

        offsets = [rng.randrange(max(1, count - 100)) for _ in range(queries + 3)]
        _run(store, f"v1 {kind} list, limit 100, HTTP vs bare path",
             [(f"/api/v1/namespaces/{ns}/{kind}", {"limit": 100, "offset": o}, bare_of(o), kind)
              for o in offsets], "item")


def _counted_total(table: sa.Table) -> Callable[[Any], int]:
    """count(*) of the namespace's shown rows: how the lists counted ``totalCount``
    before the store kept it (``store.namespace_counts``)."""
    namespace_id = (
        sa.select(t.namespaces.c.id)
        .where(t.namespaces.c.name == synthetic.NAMESPACE)
        .scalar_subquery()
    )
    statement = sa.select(sa.func.count()).where(
        table.c.namespace_id == namespace_id, visible(table)
    )
    return lambda conn: int(conn.execute(statement).scalar_one())


def measure_first_pages(store: Store, queries: int) -> None:
    """The datasets and jobs lists' first page (``limit=100``), interleaved: over HTTP,
    the store's page with its kept ``totalCount``, and that page with the namespace's
    rows counted as well (the count the lists ran per request before the kept one)."""
    ns = synthetic.NAMESPACE
    app = _InProcess(create_app(Settings(), store))
    arms = ("http", "kept", "counted")
    for kind, table, rows_page in (
        ("datasets", t.datasets, dataset_reads.dataset_rows_page),
        ("jobs", t.jobs, job_reads.job_rows_page),
    ):
        count = _counted_total(table)
        wall: dict[str, list[float]] = {arm: [] for arm in arms}
        with store.engine.connect() as conn:
            for round_no in range(queries + 3):
                seconds: dict[str, float] = {}
                for arm in arms[round_no % 3 :] + arms[: round_no % 3]:
                    started = time.perf_counter()
                    if arm == "http":
                        body = json.loads(app.get(f"/api/v1/namespaces/{ns}/{kind}",
                                                  {"limit": 100})[3])
                        total = body["totalCount"]
                    else:
                        kept = rows_page(conn, ns, Page(limit=100))[1]
                        if arm == "counted":
                            assert count(conn) == kept == total, (kind, kept, total)
                    seconds[arm] = time.perf_counter() - started
                if round_no >= 3:  # warm-up
                    for arm in arms:
                        wall[arm].append(seconds[arm])
        print(f"  v1 {kind} list, first page (limit 100) of {total:,}: {queries} rounds")
        for arm in arms:
            ms = sorted(v * 1e3 for v in wall[arm])
            p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
            print(f"    {arm:8s} wall p50 {statistics.median(ms):8.2f} ms  p95 {p95:8.2f} ms")
        ratio = statistics.median(wall["counted"]) / statistics.median(wall["kept"])
        print(f"    counted / kept: {ratio:.1f}x (p50)  load {_load()}")
    app.close()


class _WatermarkFragments(RecordFragments):
    """Records' JSON kept against the whole store's watermark (the ``watermark`` arm):
    any write changes it, so every record is built again after every write."""

    def epoch(self, conn: Any) -> Any:
        return read_watermark(conn)


def _writes(graph: synthetic.SyntheticGraph, rng: random.Random) -> Iterator[dict[str, Any]]:
    """One event at a time: a new run of a random job after the graph's runs, START then
    COMPLETE, reading and writing what the job does (no facets, as a re-run sends)."""
    when = synthetic.START + timedelta(hours=graph.runs_per_job + 1)
    while True:
        job = rng.choice(graph.jobs)
        run = {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4))}
        for event_type in ("START", "COMPLETE"):
            when += timedelta(seconds=1)
            yield {
                "eventType": event_type,
                "eventTime": when.isoformat(),
                "run": run,
                "job": {"namespace": synthetic.NAMESPACE, "name": job.name},
                "inputs": [{"namespace": synthetic.NAMESPACE, "name": d} for d in job.inputs],
                "outputs": [{"namespace": synthetic.NAMESPACE, "name": d} for d in job.outputs],
                "producer": synthetic.PRODUCER,
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            }


def _run_written(store: Store, label: str, queries: list[Query], unit: str,
                 writes: Iterator[dict[str, Any]]) -> None:
    arms = ("per-row", "watermark", "bare")
    per_row_app = create_app(Settings(), store)
    watermark_app = create_app(Settings(), store)
    watermark_app.state.record_fragments = _WatermarkFragments()
    clients = {"per-row": _InProcess(per_row_app), "watermark": _InProcess(watermark_app)}
    wall: dict[str, list[float]] = {arm: [] for arm in arms}
    cpu: dict[str, float] = dict.fromkeys(arms, 0.0)
    # Each answer's CPU per item too: its median is not moved by the one request a
    # garbage collection (of what the whole process allocated) happens to land in.
    cpu_items: dict[str, list[float]] = {arm: [] for arm in arms}
    built = dict.fromkeys(arms, 0)
    items_seen: list[int] = []
    for path, params, _, _ in queries:  # every record built once, as on a server up a while
        for client in clients.values():
            client.get(path, params)
    with store.engine.connect() as conn:
        for round_no, (path, params, bare, key) in enumerate(queries):
            order = arms[round_no % 3 :] + arms[: round_no % 3]
            seconds: dict[str, tuple[float, float]] = {}
            items = 1
            for arm in order:
                store.record([parse_event(next(writes))])  # one event before each request
                if arm == "bare":
                    conn.rollback()  # a new snapshot: the rows as they are now
                    started, started_cpu = time.perf_counter(), time.process_time()
                    bare(conn)
                    seconds[arm] = (
                        time.perf_counter() - started, time.process_time() - started_cpu
                    )
                    continue
                fragments = clients[arm].app.state.record_fragments
                before = fragments.built
                took, took_cpu, _, body = clients[arm].get(path, params)
                seconds[arm] = (took, took_cpu)
                if round_no >= 3:
                    built[arm] += fragments.built - before
                items = max(1, len(json.loads(body)[key]))
            if round_no < 3:
                continue  # warm-up
            items_seen.append(items)
            for arm in arms:
                wall[arm].append(seconds[arm][0] / items)
                cpu[arm] += seconds[arm][1]
                cpu_items[arm].append(seconds[arm][1] / items)
    # No write since: the per-row arm's answers are the ones built from scratch.
    fresh_app = create_app(Settings(), store)
    fresh_app.state.record_fragments = RecordFragments(max_bytes=0)
    fresh = _InProcess(fresh_app)
    for path, params, _, _ in queries[:10]:
        kept = json.loads(clients["per-row"].get(path, params)[3])
        assert kept == json.loads(fresh.get(path, params)[3]), (path, params)
    fresh.close()
    for client in clients.values():
        client.close()
    total = sum(items_seen)
    print(f"  {label}: {len(items_seen)} answers, one event ingested before each request; "
          f"{unit}s/answer median {statistics.median(items_seen):.0f}")
    for arm in arms:
        us = sorted(v * 1e6 for v in wall[arm])
        p95 = us[min(len(us) - 1, round(0.95 * (len(us) - 1)))]
        share = f"   records built {built[arm] / total:5.1%} of {unit}s" if arm != "bare" else ""
        print(f"    {arm:9s} per {unit}: wall p50 {statistics.median(us):8.1f} us  p95 "
              f"{p95:8.1f} us   cpu {cpu[arm] / total * 1e6:8.1f} us  cpu p50 "
              f"{statistics.median(cpu_items[arm]) * 1e6:8.1f} us{share}")

    def ratio(arm: str, of: str) -> str:
        by_wall = statistics.median(wall[arm]) / statistics.median(wall[of])
        by_cpu = statistics.median(cpu_items[arm]) / statistics.median(cpu_items[of])
        return f"wall {by_wall:.1f}x cpu {cpu[arm] / cpu[of]:.1f}x cpu p50 {by_cpu:.1f}x"

    print(f"    per-row / bare {ratio('per-row', 'bare')};  watermark / per-row "
          f"{ratio('watermark', 'per-row')};  watermark / bare {ratio('watermark', 'bare')}  "
          f"load {_load()}")


def measure_written(store: Store, graph: synthetic.SyntheticGraph, queries: int,
                    rng: random.Random) -> None:
    """``GET /api/v1/lineage`` (depth 20) and the v1 dataset and job lists while the store
    takes one event before every request (see the module docstring)."""
    ns = synthetic.NAMESPACE
    writes = _writes(graph, random.Random(rng.random()))
    middle = [o for job in graph.jobs if 3 <= job.layer <= synthetic.LAYERS - 3
              for o in job.outputs] or [o for job in graph.jobs for o in job.outputs]
    chosen = [f"dataset:{ns}:{rng.choice(middle)}" for _ in range(queries + 3)]
    _run_written(store, "v1 lineage, depth 20, continuous writes",
                 [("/api/v1/lineage", {"nodeId": n, "depth": 20}, _v1_bare(n), "graph")
                  for n in chosen], "node", writes)
    with store.engine.connect() as conn:
        counts = {
            "datasets": dataset_reads.dataset_rows_page(conn, ns, Page(limit=1))[1],
            "jobs": job_reads.job_rows_page(conn, ns, Page(limit=1))[1],
        }
    pages = {"datasets": dataset_reads.dataset_rows_page, "jobs": job_reads.job_rows_page}
    for kind, rows_page in pages.items():
        def bare_of(offset: int, rows_page: Any = rows_page) -> Callable[[Any], int]:
            return lambda conn: len(rows_page(conn, ns, Page(limit=100, offset=offset))[0])

        offsets = [rng.randrange(max(1, counts[kind] - 100)) for _ in range(queries + 3)]
        _run_written(store, f"v1 {kind} list, limit 100, continuous writes",
                     [(f"/api/v1/namespaces/{ns}/{kind}", {"limit": 100, "offset": o},
                       bare_of(o), kind) for o in offsets], "item", writes)
