"""What reading a run's facets as of a time inside it costs a compliance report as of that time.

A synthetic store: ``--jobs`` jobs, each copying columns of one PII-tagged source into its
own output, ``--runs`` runs each; every run STARTs with one columnLineage and COMPLETEs
30 s later with another. Run ``r`` of job ``j`` starts at ``r * 600 + (j % 100) * 2`` s,
so at ``r * 600 + 400`` s no run is going (``settled``) and at ``r * 600 + 20`` s the runs
of every job with ``j % 100 <= 10`` are (``straddling``: about 11 % of the jobs).

The compliance report (``GET /api/v2/compliance?tag=PII&asOf=...``, in process) is asked
at both times with the column edges read two ways, alternating each round: ``one
query`` (each run's latest facet, whatever its time: one ranked query) and ``raw read``
(the store's read: the same ranked query, and the straddling runs' facets read back from
their raw events). Prints each way's median wall and CPU time per answer, their ratio,
how many runs straddled, and the load average before and after.

    python benchmarks/lineage_as_of.py [--jobs 2000] [--runs 10] [--rounds 7]
        [--db sqlite|postgresql|URL]

``postgresql`` starts a throwaway cluster (tests/support/pgcluster.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from headwater.config import Settings  # noqa: E402
from headwater.events import parse_event  # noqa: E402
from headwater.server.app import create_app  # noqa: E402
from headwater.store import Store  # noqa: E402
from headwater.store.keys import job_node  # noqa: E402
from headwater.store.reads import classification as reads  # noqa: E402
from headwater.store.reads.common import naive  # noqa: E402

PRODUCER = "https://example.com/headwater-benchmark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/x.json"}
ZERO = datetime(2024, 1, 1)
SOURCE_FIELDS = ["id", "email", "name", "phone", "city", "country"]


def _when(seconds: float) -> str:
    return (ZERO + timedelta(seconds=seconds)).isoformat() + "Z"


def _dataset(name: str, fields: list[str], **facets: Any) -> dict[str, Any]:
    schema = {**FACET, "fields": [{"name": f, "type": "string"} for f in fields]}
    return {"namespace": "bench", "name": name, "facets": {"schema": schema, **facets}}


def _lineage(source: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        **FACET,
        "fields": {
            target: {
                "inputFields": [
                    {
                        "namespace": "bench",
                        "name": source,
                        "field": field,
                        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                    }
                ]
            }
            for target, field in pairs
        },
    }


def _run(job: int, run: int, event_type: str, at: float, pairs: list[tuple[str, str]]) -> Any:
    source = f"source_{job % 50}"
    output = _dataset(f"out_{job}", ["a", "b", "c"], columnLineage=_lineage(source, pairs))
    return {
        "eventType": event_type,
        "eventTime": _when(at),
        "run": {"runId": f"00000000-0000-4000-8000-{job:06d}{run:06d}", "facets": {}},
        "job": {"namespace": "bench", "name": f"job_{job}", "facets": {}},
        "inputs": [{"namespace": "bench", "name": source, "facets": {}}],
        "outputs": [output],
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }


def events(jobs: int, runs: int) -> list[dict[str, Any]]:
    sources = []
    for n in range(50):
        source = _dataset(f"source_{n}", SOURCE_FIELDS)
        source["facets"]["schema"]["fields"][1]["tags"] = [{"key": "PII", "value": "email"}]
        sources.append(
            {
                "eventType": "COMPLETE",
                "eventTime": _when(0),
                "run": {"runId": f"00000000-0000-4000-9000-{n:012d}", "facets": {}},
                "job": {"namespace": "bench", "name": f"ingest_{n}", "facets": {}},
                "inputs": [],
                "outputs": [source],
                "producer": PRODUCER,
                "schemaURL": SCHEMA_URL,
            }
        )
    out = sources
    for run in range(runs):
        for job in range(jobs):
            start = 600 + run * 600 + (job % 100) * 2
            out.append(_run(job, run, "START", start, [("a", "email"), ("b", "name")]))
            out.append(_run(job, run, "COMPLETE", start + 30, [("a", "id"), ("c", "email")]))
    return out


def _one_query_edges(conn: sa.Connection, as_of: datetime | None) -> list[reads.EdgeRow]:
    """Column edges from each run's latest facet, whatever its time: the ranked query
    alone, as the store read before straddling runs were read back."""
    rows = conn.execute(_ONE_QUERY, {"as_of": naive(as_of)})
    edges: set[reads.EdgeRow] = set()
    for row in rows:
        job = job_node(row.job_namespace, row.job_name)
        edges.update(reads._facet_edges(row.payload, row.namespace, row.name, job))
    return sorted(
        edges,
        key=lambda e: (e.source, e.target, e.job, e.transformation_type, e.transformation_subtype),
    )


def _one_query() -> sa.Select[Any]:
    f, v, r, j, d = reads._f, reads._v, reads._r, reads._j, reads._d
    jns, dns = reads._jns, reads._dns
    ranked = (
        sa.select(
            f.c.id.label("facet_id"),
            sa.func.row_number()
            .over(
                partition_by=(r.c.job_id, v.c.dataset_id),
                order_by=(r.c.created_at.desc(), r.c.uuid.desc()),
            )
            .label("rank"),
        )
        .select_from(reads._LINEAGE_FACETS)
        .where(reads._IS_LINEAGE, r.c.created_at <= sa.bindparam("as_of"))
        .subquery("ranked")
    )
    return (
        sa.select(
            f.c.payload,
            jns.c.name.label("job_namespace"),
            j.c.name.label("job_name"),
            dns.c.name.label("namespace"),
            d.c.name.label("name"),
        )
        .select_from(
            ranked.join(f, f.c.id == ranked.c.facet_id)
            .join(v, v.c.uuid == f.c.subject)
            .join(r, r.c.uuid == v.c.run_uuid)
            .join(j, j.c.id == r.c.job_id)
            .join(jns, jns.c.id == j.c.namespace_id)
            .join(d, d.c.id == v.c.dataset_id)
            .join(dns, dns.c.id == d.c.namespace_id)
        )
        .where(ranked.c.rank == 1)
    )


_ONE_QUERY = _one_query()
READS: dict[str, Callable[[sa.Connection, datetime | None], list[reads.EdgeRow]]] = {
    "one query": _one_query_edges,
    "raw read": reads.column_edges,
}


def _cost(client: TestClient, way: str, as_of: str) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process, flows) of one report read ``way``."""
    reads.column_edges = READS[way]  # type: ignore[assignment]
    clock, started = time.perf_counter(), time.process_time()
    answer = client.get("/api/v2/compliance", params={"tag": "PII", "asOf": as_of})
    spent = time.perf_counter() - clock, time.process_time() - started
    assert answer.status_code == 200, answer.text
    return (*spent, len(answer.json()["flows"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--db", default="sqlite")
    args = parser.parse_args()
    cluster = None
    if args.db == "postgresql":
        from tests.support.pgcluster import start_cluster

        cluster = start_cluster()
    try:
        with tempfile.TemporaryDirectory() as folder:
            if cluster is not None:
                url = cluster.create_database("lineage_as_of_bench")
            elif args.db == "sqlite":
                url = f"sqlite:///{Path(folder) / 'bench.db'}"
            else:
                url = args.db
            _measure(args, url)
    finally:
        if cluster is not None:
            cluster.stop()


def _measure(args: argparse.Namespace, url: str) -> None:
    store = Store.open(url, migrate=True)
    all_events = events(args.jobs, args.runs)
    started = time.perf_counter()
    for at in range(0, len(all_events), 500):
        store.record([parse_event(e) for e in all_events[at : at + 500]])
    print(
        f"{len(all_events):,} events recorded in {time.perf_counter() - started:.0f} s ({args.db})"
    )
    if store.engine.dialect.name == "postgresql":
        # Autovacuum analyzes a table this size within a minute of the load; the
        # measurement starts sooner, so it runs ANALYZE as a store in service has.
        # SQLite is left as the store leaves it: analyzed under PRAGMA analysis_limit
        # by its checkpoint thread as the events came in (headwater.store.statistics).
        with store.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    last = 600 + (args.runs - 1) * 600
    moments = {"settled": _when(last + 400), "straddling": _when(last + 20)}
    straddling = sum(1 for j in range(args.jobs) if (j % 100) * 2 <= 20)
    print(
        f"straddling: {straddling} of {args.jobs} jobs' latest runs are going at "
        f"{moments['straddling']}; none at {moments['settled']}"
    )
    load_before = os.getloadavg()
    original = reads.column_edges
    results: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    try:
        with TestClient(create_app(Settings(), store)) as client:
            for moment in moments.values():
                for way in READS:
                    _cost(client, way, moment)  # warm the statement caches
            for round_number in range(args.rounds):
                for name, moment in moments.items():
                    ways = list(READS) if round_number % 2 == 0 else list(reversed(READS))
                    for way in ways:
                        results.setdefault((name, way), []).append(_cost(client, way, moment))
    finally:
        reads.column_edges = original  # type: ignore[assignment]
        store.close()
    for name in moments:
        medians = {}
        for way in READS:
            runs = results[(name, way)]
            medians[way] = (
                statistics.median(r[0] for r in runs),
                statistics.median(r[1] for r in runs),
            )
            print(
                f"{name:>10} {way:>9}: wall {medians[way][0] * 1000:7.1f} ms, CPU "
                f"{medians[way][1] * 1000:7.1f} ms, {runs[0][2]} flows"
            )
        ratio_wall = medians["raw read"][0] / medians["one query"][0]
        ratio_cpu = medians["raw read"][1] / medians["one query"][1]
        print(f"{name:>10} raw read / one query: wall {ratio_wall:.2f}, CPU {ratio_cpu:.2f}")
    print(f"load average {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
