"""Three ``headwater serve`` processes on one PostgreSQL database, producers spread across them.

The scale path runs stateless replicas behind a load balancer, so a run's
START reaches one server and its COMPLETE another, and a producer retrying
through the balancer can deliver one event to two servers at the same
moment. Six producer threads send a few hundred events that way, as single
POSTs and small batches, each producer in its own shuffled order, while a
reader asks every server for lineage throughout (so a server that keeps
answers it computed earlier is caught serving them stale). Afterwards:

* nothing lost and nothing stored twice: the raw log holds each distinct
  event once, and exactly one answer per event says it was new;
* the database holds what a fresh one holds after a single server received
  every event in order (``tests/store/dump.py`` says what is compared);
* every server answers the read API exactly as that single server does.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from headwater.store import Store
from tests.server.event_factory import DATASETS, JOBS, RunPlan, content_key, good_events
from tests.server.live import running_server
from tests.server.stores import Databases, comparable_dump, open_client, post, stored_payloads

pytestmark = [pytest.mark.postgres, pytest.mark.live, pytest.mark.slow]

SERVERS = 3
PRODUCERS = 6
RUNS = 110
BATCH = 5
TWIN_EVERY = 9  # every ninth event also goes to a second server at the same moment

# Read answers every server must give exactly as a single server does.
READS = [
    ("/api/v1/namespaces/isolation/jobs", {"limit": 100}),
    ("/api/v1/namespaces/file/datasets", {"limit": 100}),
    ("/api/v1/lineage", {"nodeId": "dataset:file:/lake/clean/orders", "depth": 10}),
    ("/api/v1/column-lineage", {"nodeId": "dataset:s3://lake:marts/orders_daily",
                                "depth": 10, "withDownstream": "true"}),
    ("/api/v2/lineage", {"nodeId": "job:isolation:clean", "depth": 10}),
    ("/api/v1/tags", {}),
]


@dataclass(frozen=True)
class Delivery:
    """Events one producer sends in one request, or one event sent to two servers at once."""

    events: list[dict[str, Any]]
    servers: tuple[int, ...]
    batch: bool = False


def traffic() -> tuple[list[dict[str, Any]], list[Delivery]]:
    """Every event in event-time order, and the deliveries that send them."""
    plans = [RunPlan(k % len(JOBS), k % len(DATASETS), (k * 7 + 1) % len(DATASETS),
                     "FAIL" if k % 11 == 0 else "COMPLETE", running=k % 3 == 0,
                     wide=k % 4 < 2) for k in range(RUNS)]
    events = good_events(plans)
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        runs.setdefault(event["run"]["runId"], []).append(event)
    # A run's events go to consecutive servers: START and its end never share one.
    routed: list[tuple[int, dict[str, Any]]] = [
        ((k + step) % SERVERS, event)
        for k, run in enumerate(runs.values()) for step, event in enumerate(run)]
    deliveries: list[Delivery] = []
    pending: dict[int, list[dict[str, Any]]] = {server: [] for server in range(SERVERS)}
    for n, (server, event) in enumerate(routed):
        if n % TWIN_EVERY == 0:
            deliveries.append(Delivery([event], (server, (server + 1) % SERVERS)))
        elif n % 3 == 0:
            pending[server].append(event)
            if len(pending[server]) == BATCH:
                deliveries.append(Delivery(pending[server], (server,), batch=True))
                pending[server] = []
        else:
            deliveries.append(Delivery([event], (server,)))
    deliveries += [Delivery(batch, (server,), batch=True)
                   for server, batch in pending.items() if batch]
    return events, deliveries


class Producer:
    """Sends its share of the deliveries and counts, per event, the answers saying 'new'."""

    def __init__(self, clients: list[httpx.Client]) -> None:
        self.clients = clients
        self.fresh: Counter[str] = Counter()
        self.problems: list[str] = []
        self.lock = threading.Lock()  # a twin's two answers are counted from two threads
        self.twin_pool = ThreadPoolExecutor(2)

    def send_all(self, deliveries: list[Delivery]) -> None:
        for delivery in deliveries:
            self.send(delivery)

    def send(self, delivery: Delivery) -> None:
        if delivery.batch:
            self._batch(delivery.servers[0], delivery.events)
        elif len(delivery.servers) == 1:
            self._single(delivery.servers[0], delivery.events[0])
        else:
            gate = threading.Barrier(len(delivery.servers))

            def at_once(server: int) -> None:
                gate.wait()
                self._single(server, delivery.events[0])

            list(self.twin_pool.map(at_once, delivery.servers))

    def _single(self, server: int, event: dict[str, Any]) -> None:
        response = post(self.clients[server], "/api/v1/lineage", event)
        if response.status_code != 200:
            self.problems.append(f"server {server}: {response.status_code} {response.text[:200]}")
        elif not response.json()["duplicate"]:
            with self.lock:
                self.fresh[content_key(event)] += 1

    def _batch(self, server: int, events: list[dict[str, Any]]) -> None:
        response = post(self.clients[server], "/api/v1/lineage/batch", events)
        body = response.json()
        if response.status_code != 200 or body["failed_events"]:
            self.problems.append(f"server {server}: {response.status_code} {response.text[:200]}")
            return
        # A batch reports how many were new, not which: counted under its first event.
        new = body["summary"]["successful"] - body["summary"]["duplicates"]
        self.fresh[f"batch:{content_key(events[0])}"] += new


def read_all(client: httpx.Client) -> dict[str, Any]:
    answers = {}
    for path, params in READS:
        response = client.get(path, params=params)
        answers[f"{path} {params}"] = (response.status_code, response.json())
    return answers


@pytest.fixture
def databases(pg_url: str, tmp_path: Path) -> Iterator[Databases]:
    with Databases(pg_url, tmp_path) as made:
        yield made


def test_three_servers_on_one_database_lose_nothing_and_store_nothing_twice(
    pg_url: str, databases: Databases
) -> None:
    events, deliveries = traffic()
    random.Random(2026).shuffle(deliveries)
    with ExitStack() as stack:
        # One after another: the first migrates the empty database, the others find it done.
        bases = [stack.enter_context(running_server("--db", pg_url))
                 for _ in range(SERVERS)]
        clients = [stack.enter_context(httpx.Client(base_url=base, timeout=60)) for base in bases]
        producers = [Producer(clients) for _ in range(PRODUCERS)]
        done = threading.Event()

        def keep_reading() -> int:
            rounds = 0
            while not done.is_set():
                for client in clients:
                    read_all(client)
                rounds += 1
            return rounds

        with ThreadPoolExecutor(PRODUCERS + 1) as pool:
            reader = pool.submit(keep_reading)
            shares = [pool.submit(producer.send_all, deliveries[i::PRODUCERS])
                      for i, producer in enumerate(producers)]
            for share in shares:
                share.result()
            done.set()
            assert reader.result() > 0
        for producer in producers:
            producer.twin_pool.shutdown()
        problems = [line for p in producers for line in p.problems]
        assert not problems, "\n".join(problems[:20])
        served = [read_all(client) for client in clients]

    sent = {content_key(e) for e in events}
    twins = {content_key(d.events[0]) for d in deliveries if len(d.servers) > 1}
    fresh = sum((p.fresh for p in producers), Counter())
    assert sum(fresh.values()) == len(sent), (
        f"{sum(fresh.values())} answers said 'new' for {len(sent)} distinct events")
    assert all(fresh[key] == 1 for key in twins), (
        f"{sum(1 for key in twins if fresh[key] != 1)} of {len(twins)} events sent to two "
        "servers at once were not answered 'new' exactly once")

    with Store.open(pg_url) as shared:
        stored = Counter(content_key(p) for p in stored_payloads(shared))
        assert shared.counts()["events"] == len(sent)
        assert set(stored) == sent and set(stored.values()) == {1}
        actual = comparable_dump(shared)

    with databases.store() as alone, open_client(alone) as client:
        for i in range(0, len(events), 100):
            response = post(client, "/api/v1/lineage/batch", events[i : i + 100])
            assert response.status_code == 200 and not response.json()["failed_events"]
        expected = comparable_dump(alone)
        expected_reads = read_all(client)

    assert expected["runs"] and expected["column_lineage"] and expected["tag_assignments"]
    for table in expected:
        assert actual[table] == expected[table], (
            f"{table} differs from a single server that received every event in order")
    for server, answers in enumerate(served):
        for read, answer in expected_reads.items():
            assert answer[0] == 200, f"{read}: {answer}"
            assert answers[read] == answer, f"server {server} answers {read} differently"
