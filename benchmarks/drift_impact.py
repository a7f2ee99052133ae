"""What each drift's impact costs the drift feed (``GET /api/v2/drift``).

A synthetic store: ``--sources`` source datasets of ``--fields`` columns, each read by a
chain of ``--depth`` jobs (every job copies each column DIRECT and filters on the first
one INDIRECT, so a change fans out to every column downstream), then every source
gets a second version with one column's type changed: one version drift per source.
The feed's first page (``limit``, default 100 drifts) is asked with ``impact=true`` and
``impact=false`` in alternating order, in process (FastAPI's TestClient, no socket);
prints the CPU seconds of each answer, the ratio with/without per round, the median,
the cost per drift and the load average before and after.

    python benchmarks/drift_impact.py [--sources 100] [--fields 8] [--depth 4]
        [--rounds 5] [--db sqlite|postgresql|URL]

``postgresql`` starts a throwaway cluster (tests/support/pgcluster.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient  # noqa: E402

from headwater.config import Settings  # noqa: E402
from headwater.events import parse_event  # noqa: E402
from headwater.server.app import create_app  # noqa: E402
from headwater.store import Store  # noqa: E402

PRODUCER = "https://example.com/headwater-benchmark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/x.json"}


def _dataset(
    name: str, fields: list[tuple[str, str]], upstream: str | None = None
) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "schema": {**FACET, "fields": [{"name": n, "type": t} for n, t in fields]}
    }
    if upstream is not None:
        first = fields[0][0]
        facets["columnLineage"] = {
            **FACET,
            "fields": {
                n: {
                    "inputFields": [
                        {
                            "namespace": "file",
                            "name": upstream,
                            "field": n,
                            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                        },
                        {
                            "namespace": "file",
                            "name": upstream,
                            "field": first,
                            "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}],
                        },
                    ]
                }
                for n, _ in fields
            },
        }
    return {"namespace": "file", "name": name, "facets": facets}


def _event(
    run: int, second: int, job: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2024-01-01T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z",
        "run": {"runId": f"00000000-0000-4000-8000-{run:012d}", "facets": {}},
        "job": {"namespace": "bench", "name": job, "facets": {}},
        "inputs": inputs,
        "outputs": outputs,
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }


def events(sources: int, fields: int, depth: int) -> list[dict[str, Any]]:
    out = []
    run = 0
    columns = [(f"c{i}", "int") for i in range(fields)]
    for s in range(sources):
        name = f"/src/{s}"
        run += 1
        out.append(_event(run, 1, f"load_{s}", [], [_dataset(name, columns)]))
        upstream = name
        for level in range(depth):
            run += 1
            target = f"/d{level}/{s}"
            out.append(
                _event(
                    run,
                    2 + level,
                    f"job_{s}_{level}",
                    [_dataset(upstream, columns)],
                    [_dataset(target, columns, upstream)],
                )
            )
            upstream = target
        run += 1
        changed = [("c0", "string"), *columns[1:]]
        out.append(_event(run, 100, f"load_{s}", [], [_dataset(name, changed)]))
    return out


def _cost(client: TestClient, impact: bool, limit: int) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of one answer; with PostgreSQL the
    database's own work shows in the wall time only."""
    started, clock = time.process_time(), time.perf_counter()
    answer = client.get("/api/v2/drift", params={"impact": str(impact).lower(), "limit": limit})
    spent = time.process_time() - started, time.perf_counter() - clock
    assert answer.status_code == 200, answer.text
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--fields", type=int, default=8)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--db", default="sqlite")
    args = parser.parse_args()
    load_before = os.getloadavg()
    cluster = None
    if args.db == "postgresql":
        from tests.support.pgcluster import start_cluster

        cluster = start_cluster()
    try:
        _measure(args, cluster)
    finally:
        if cluster is not None:
            cluster.stop()
    print(f"load average {load_before[0]:.1f} -> {os.getloadavg()[0]:.1f}")


def _measure(args: argparse.Namespace, cluster: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        if cluster is not None:
            url = cluster.create_database("drift_impact_bench")
        else:
            url = f"sqlite:///{Path(folder) / 'bench.db'}" if args.db == "sqlite" else args.db
        store = Store.open(url, migrate=True)
        store.record([parse_event(e) for e in events(args.sources, args.fields, args.depth)])
        with TestClient(create_app(Settings(), store)) as client:
            body = client.get("/api/v2/drift", params={"limit": args.limit}).json()
            shown = len(body["drifts"])
            reached = statistics.median(len(d["impact"]["nodes"]) for d in body["drifts"])
            print(
                f"{body['totalCount']} drifts, {shown} per page, median {reached} nodes "
                f"reached per drift ({args.depth} jobs deep, {args.fields} columns)"
            )
            ratios, walls = [], []
            for round_number in range(args.rounds):
                order = (True, False) if round_number % 2 == 0 else (False, True)
                cost = {impact: _cost(client, impact, args.limit) for impact in order}
                (cpu_with, wall_with), (cpu_without, wall_without) = cost[True], cost[False]
                ratios.append(cpu_with / cpu_without)
                walls.append((wall_with - wall_without) / shown * 1000)
                print(
                    f"round {round_number + 1}: CPU with impact {cpu_with:.3f} s, without "
                    f"{cpu_without:.3f} s, ratio {ratios[-1]:.1f}; wall {wall_with:.3f} s "
                    f"against {wall_without:.3f} s, {walls[-1]:.1f} ms per drift"
                )
        store.close()
    print(
        f"median CPU ratio {statistics.median(ratios):.1f} (min {min(ratios):.1f}, max "
        f"{max(ratios):.1f}); wall per drift median {statistics.median(walls):.1f} ms"
    )


if __name__ == "__main__":
    main()
