"""Does serving the ingestion POSTs in front of FastAPI's routing pay? (prints figures)

CPU per single-event POST from 16 concurrent in-process clients (httpx over
ASGI, so the client's CPU is in the figure too, the same for both arms):
through the app as served (``IngestEndpoint`` in front of the routing) and
through the same app with the POST routes served by FastAPI instead, in
interleaved rounds on one store.

    python benchmarks/ingest_endpoint.py [events per round, default 500] [rounds, default 8]
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.server.events

import httpx  # noqa: E402

from headwater.config import Settings  # noqa: E402
from headwater.server.app import create_app  # noqa: E402
from headwater.server.ingest_endpoint import IngestEndpoint  # noqa: E402
from headwater.server.routes import lineage  # noqa: E402
from headwater.store import Store  # noqa: E402
from tests.server.events import run_event  # noqa: E402

CLIENTS = 16


async def cpu_per_request(app: Any, bodies: list[bytes]) -> float:
    """This process's CPU µs per POST of ``bodies`` to ``app``."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        gate = asyncio.Semaphore(CLIENTS)

        async def post(body: bytes) -> None:
            async with gate:
                response = await client.post("/api/v1/lineage", content=body,
                                             headers={"Content-Type": "application/json"})
                assert response.status_code == 200, response.text

        started = time.process_time()
        await asyncio.gather(*(post(body) for body in bodies))
        return (time.process_time() - started) / len(bodies) * 1e6


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    store = Store.open(f"sqlite:///{tempfile.mkdtemp()}/endpoint.db")
    served = create_app(Settings(), store)
    routed = create_app(Settings(), store)
    routed.user_middleware = [m for m in routed.user_middleware if m.cls is not IngestEndpoint]
    routed.include_router(lineage.router)
    figures: dict[str, list[float]] = {"endpoint": [], "routes": []}
    print(f"load average at start {os.getloadavg()[0]:.2f}; {rounds} rounds of {events} "
          f"single POSTs per arm, {CLIENTS} clients")
    for turn in range(rounds):
        arms = [("endpoint", served), ("routes", routed)]
        if turn % 2:
            arms.reverse()
        for name, app in arms:
            bodies = [json.dumps(run_event()).encode() for _ in range(events)]
            figures[name].append(asyncio.run(cpu_per_request(app, bodies)))
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    for name, values in figures.items():
        print(f"{name:8} CPU us/request per round {[round(v) for v in values]}, "
              f"median {statistics.median(values):.0f}")
    ratios = [a / b for a, b in zip(figures["endpoint"], figures["routes"], strict=True)]
    print(f"endpoint / routes per round {[round(r, 3) for r in ratios]}: "
          f"median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")
    store.close()


if __name__ == "__main__":
    main()
