"""Search, tags and the event log, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.api.retail_events import events
from tests.graph.retail import NS


def test_search_matches_names_case_insensitively(retail: TestClient) -> None:
    body = retail.get("/api/v1/search", params={"q": "ORDERS"}).json()
    assert {r["nodeId"] for r in body["results"]} == {
        f"dataset:{NS}:raw.orders",
        f"dataset:{NS}:silver.orders",
        f"job:{NS}:clean_orders",
    }
    assert body["totalCount"] == 3
    only_jobs = retail.get("/api/v1/search", params={"q": "orders", "filter": "job"}).json()
    assert [(r["type"], r["name"]) for r in only_jobs["results"]] == [("JOB", "clean_orders")]
    limited = retail.get("/api/v1/search", params={"q": "o", "limit": 2}).json()
    assert len(limited["results"]) == 2
    assert limited["totalCount"] > 2
    wildcard = retail.get("/api/v1/search", params={"q": "gold._"}).json()
    assert {r["name"] for r in wildcard["results"]} == {"gold.ltv", "gold.revenue"}


def test_search_needs_q(client: TestClient) -> None:
    response = client.get("/api/v1/search")
    assert response.status_code == 400
    assert response.json()["field"] == "query.q"


def test_tags_create_assign_and_remove(retail: TestClient) -> None:
    assert retail.put("/api/v1/tags/PII", json={"description": "personal data"}).status_code == 200
    tags = retail.get("/api/v1/tags").json()["tags"]
    assert {"name": "PII", "description": "personal data"} in tags

    tagged = retail.post(f"/api/v1/namespaces/{NS}/datasets/raw.customers/tags/PII")
    assert tagged.status_code == 200, tagged.text
    assert tagged.json()["tags"] == ["PII"]
    field = retail.post(f"/api/v1/namespaces/{NS}/datasets/raw.customers/fields/name/tags/PII")
    assert field.status_code == 200, field.text
    assert next(f for f in field.json()["fields"] if f["name"] == "name")["tags"] == ["PII"]
    job = retail.post(f"/api/v1/namespaces/{NS}/jobs/clean_customers/tags/PII")
    assert job.json()["tags"] == ["PII"]

    untagged = retail.delete(f"/api/v1/namespaces/{NS}/datasets/raw.customers/tags/PII")
    assert untagged.json()["tags"] == []
    field_untagged = retail.delete(
        f"/api/v1/namespaces/{NS}/datasets/raw.customers/fields/name/tags/PII"
    )
    assert all(f["tags"] == [] for f in field_untagged.json()["fields"])
    job_untagged = retail.delete(f"/api/v1/namespaces/{NS}/jobs/clean_customers/tags/PII")
    assert job_untagged.json()["tags"] == []


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v1/namespaces/{NS}/datasets/raw.customers/tags/NOPE",
        f"/api/v1/namespaces/{NS}/datasets/nope/tags/PII",
        f"/api/v1/namespaces/{NS}/datasets/raw.customers/fields/nope/tags/PII",
        f"/api/v1/namespaces/{NS}/jobs/nope/tags/PII",
    ],
)
def test_tagging_unknown_things_is_404(retail: TestClient, path: str) -> None:
    retail.put("/api/v1/tags/PII", json={})
    response = retail.post(path)
    assert response.status_code == 404, response.text
    assert "not found" in response.json()["error"]


def test_events_by_time_with_paging(retail: TestClient) -> None:
    sent = events()
    everything = retail.get("/api/v1/events/lineage", params={"limit": 100}).json()
    assert everything["totalCount"] == len(sent)
    times = [e["eventTime"] for e in everything["events"]]
    assert times == sorted(times, reverse=True)
    day_one = retail.get(
        "/api/v1/events/lineage",
        params={"after": "2026-03-01T00:00:00Z", "before": "2026-03-02T00:00:00Z",
                "sortDirection": "asc", "limit": 4, "offset": 2},
    ).json()
    assert day_one["totalCount"] == 10
    assert [e["eventTime"] for e in day_one["events"]] == [e["eventTime"] for e in sent[2:6]]
    bad = retail.get("/api/v1/events/lineage", params={"before": "soon"})
    assert bad.status_code == 400
    assert bad.json()["field"] == "query.before"
