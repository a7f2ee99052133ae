"""What does the access gate cost an ingest request? (prints figures)

CPU per single-event POST from 16 concurrent in-process clients (httpx over
ASGI, client CPU included, the same for every arm), in interleaved rounds:

- ``bare``: the app with the gate replaced by a middleware that only admits
  everyone (what a request cannot do without);
- ``keyless``: the app as served with no token: the gate finds the server open
  and queues an audit row;
- ``token``: the app as served on a store holding a token, each POST carrying
  it: digest, cached lookup, constant-time compare, ``Cache-Control: private``,
  an audit row;
- ``jwt``: the app served with ``--oidc-issuer`` (a real issuer on 127.0.0.1,
  tests/server/oidc_issuer.py), each POST carrying an RS256 JWT it signed: the
  stored-token miss, header parse, RSA signature check and claims, then as
  ``token`` (the keys are fetched once, before the first round).

    python benchmarks/access_gate.py [events per round, default 400] [rounds, default 6]
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
from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402
from tests.server.events import run_event  # noqa: E402
from tests.server.oidc_issuer import AUDIENCE, running_issuer  # noqa: E402

from headwater.config import Settings  # noqa: E402
from headwater.server.access import OPEN, PRINCIPAL_KEY, AccessGate  # noqa: E402
from headwater.server.app import create_app  # noqa: E402
from headwater.store import Store  # noqa: E402
from headwater.store.access import create_token  # noqa: E402

CLIENTS = 16


class AdmitEveryone:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[PRINCIPAL_KEY] = OPEN
        await self.app(scope, receive, send)


async def cpu_per_request(app: Any, bodies: list[bytes], secret: str | None) -> float:
    """This process's CPU µs per POST of ``bodies`` to ``app``."""
    headers = {"Content-Type": "application/json"}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        gate = asyncio.Semaphore(CLIENTS)

        async def post(body: bytes) -> None:
            async with gate:
                response = await client.post("/api/v1/lineage", content=body, headers=headers)
                assert response.status_code == 200, response.text

        started = time.process_time()
        await asyncio.gather(*(post(body) for body in bodies))
        return (time.process_time() - started) / len(bodies) * 1e6


def main() -> None:
    with running_issuer() as issuer:
        run(issuer)


def run(issuer: Any) -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    folder = tempfile.mkdtemp()
    # One store per arm: a store's cost per event grows with what it holds, so each
    # arm's store grows alike.
    stores = [Store.open(f"sqlite:///{folder}/{name}.db")
              for name in ("bare", "open", "closed", "jwt")]
    secret, _ = create_token(stores[2].engine, "bench", ["ingest"])
    bare = create_app(Settings(), stores[0])
    bare.user_middleware = [m if m.cls is not AccessGate else type(m)(AdmitEveryone)
                            for m in bare.user_middleware]
    arms: list[tuple[str, Any, str | None]] = [
        ("bare", bare, None),
        ("keyless", create_app(Settings(), stores[1]), None),
        ("token", create_app(Settings(), stores[2]), secret),
        ("jwt", create_app(Settings(oidc_issuer=issuer.url, oidc_audience=AUDIENCE),
                           stores[3]), issuer.token("bench", scope="ingest")),
    ]
    for _, app, _ in arms:
        app.state.access.audit.start()  # its batched writes are part of the cost
    arms[3][1].state.access.jwt.refresh()  # the keys, fetched once
    figures: dict[str, list[float]] = {name: [] for name, _, _ in arms}
    print(f"load average at start {os.getloadavg()[0]:.2f}; {rounds} rounds of {events} "
          f"single POSTs per arm, {CLIENTS} clients")
    for turn in range(rounds):
        order = arms[turn % len(arms):] + arms[:turn % len(arms)]
        for name, app, key in order:
            bodies = [json.dumps(run_event()).encode() for _ in range(events)]
            figures[name].append(asyncio.run(cpu_per_request(app, bodies, key)))
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    for name, values in figures.items():
        print(f"{name:8} CPU us/request per round {[round(v) for v in values]}, "
              f"median {statistics.median(values):.0f}")
    for name in ("keyless", "token", "jwt"):
        ratios = [a / b for a, b in zip(figures[name], figures["bare"], strict=True)]
        print(f"{name} / bare per round {[round(r, 3) for r in ratios]}: median "
              f"{statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")
    verifier, token = arms[3][1].state.access.jwt, arms[3][2]
    started = time.process_time()
    for _ in range(2000):
        verifier.principal(token)
    check = (time.process_time() - started) / 2000 * 1e6
    print(f"the JWT check alone (header, RS256 signature, claims): {check:.0f} us CPU, "
          f"{check / statistics.median(figures['bare']):.3f} of a bare request's median")
    for _, app, _ in arms:
        app.state.access.audit.close()
    for store in stores:
        store.close()


if __name__ == "__main__":
    main()
