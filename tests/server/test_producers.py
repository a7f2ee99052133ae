"""``GET /api/v2/producers`` and the producers on ``/metrics``: every producer counted from
its events, refusals included, and a headwater agent's emission facet shown with it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient

from tests.server.test_metrics import scrape, value
from tests.store.builders import facet, run_event

JAVA = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"
AGENT = "https://github.com/headwater/headwater/tree/0.1.0/agent"


def _run(producer: str, namespace: str, **kw: Any) -> dict[str, Any]:
    return run_event(
        "COMPLETE",
        "2026-01-01T00:00:00Z",
        str(uuid.uuid4()),
        job="nightly",
        namespace=namespace,
        producer=producer,
        **kw,
    )


def test_producers_are_listed_and_scraped(client: TestClient) -> None:
    emission = facet(
        queued=12,
        sent=9,
        retried=4,
        spooled=3,
        replayed=0,
        rejected=0,
        dropped=0,
        sendMs={"count": 5, "p50": 4.0, "p95": 20.0, "max": 31.0},
    )
    java = [_run(JAVA, "emr") for _ in range(4)]
    batch = [
        *java,
        java[0],
        _run(AGENT, "etl", run_facets={"headwater_emission": emission}),
        {"producer": JAVA, "eventTime": "yesterday", "job": {"namespace": "emr"}},
    ]
    response = client.post("/api/v1/lineage/batch", json=batch)
    assert response.json()["summary"]["failed"] == 1
    assert (
        client.post("/api/v1/lineage", json={"producer": AGENT, "eventTime": 3}).status_code == 400
    )

    listed = client.get("/api/v2/producers")
    assert listed.status_code == 200
    found = {(p["producer"], p["namespace"]): p for p in listed.json()["producers"]}
    assert set(found) == {(JAVA, "emr"), (AGENT, "etl"), (AGENT, "")}
    java_row = found[(JAVA, "emr")]
    assert (java_row["events"], java_row["rejected"], java_row["eventsLastHour"]) == (4, 1, 4)
    assert java_row["agent"] is None
    last_seen = datetime.fromisoformat(java_row["lastSeen"].replace("Z", "+00:00"))
    assert datetime.now(UTC) - last_seen < timedelta(minutes=5)
    agent = found[(AGENT, "etl")]["agent"]
    assert agent["figures"]["spooled"] == 3 and agent["figures"]["sendMs"]["p95"] == 20.0
    assert (found[(AGENT, "")]["events"], found[(AGENT, "")]["rejected"]) == (0, 1)

    samples = scrape(client)
    assert value(samples, "headwater_producer_events_total", producer=JAVA, namespace="emr") == 4
    assert value(samples, "headwater_producer_rejected_total", producer=JAVA, namespace="emr") == 1
    seen = value(
        samples, "headwater_producer_last_seen_timestamp_seconds", producer=JAVA, namespace="emr"
    )
    assert abs(seen - last_seen.timestamp()) < 1
    assert (
        value(
            samples,
            "headwater_producer_agent_events",
            producer=AGENT,
            namespace="etl",
            outcome="spooled",
        )
        == 3
    )
    assert (
        value(
            samples,
            "headwater_producer_agent_send_seconds",
            producer=AGENT,
            namespace="etl",
            quantile="0.95",
        )
        == 0.02
    )


def test_producers_need_the_read_scope(make_client: Any) -> None:
    client = make_client(api_key="hw_secret")
    assert client.get("/api/v2/producers").status_code == 401
    answer = client.get("/api/v2/producers", headers={"Authorization": "Bearer hw_secret"})
    assert answer.status_code == 200 and answer.json() == {"producers": []}
