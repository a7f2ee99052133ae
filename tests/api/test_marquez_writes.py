"""Marquez's create/update PUTs and run writes, on SQLite and PostgreSQL.

Each write is checked by reading back through the read API, and each refusal by
checking that nothing was written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store

NS = "legacy"
RUN = "00000000-0000-4000-8000-00000000a001"
OTHER_RUN = "00000000-0000-4000-8000-00000000a002"


def _ok(response: Any, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return response.json()  # type: ignore[no-any-return]


def _refused(response: Any, status: int, field: str | None) -> None:
    assert response.status_code == status, response.text
    assert response.json().get("field") == field, response.text


TABLE = {
    "type": "DB_TABLE",
    "physicalName": "public.orders",
    "sourceName": "shop_db",
    "fields": [
        {"name": "id", "type": "INTEGER", "tags": ["pk"]},
        {"name": "amount", "type": "DECIMAL", "description": "order total"},
    ],
    "tags": ["finance"],
    "description": "orders of the shop",
}


@pytest.fixture
def shop(client: TestClient) -> TestClient:
    """A namespace, a source and a dataset created through the PUTs."""
    _ok(client.put(f"/api/v1/namespaces/{NS}", json={"ownerName": "me", "description": "old"}))
    _ok(client.put("/api/v1/sources/shop_db",
                   json={"type": "POSTGRESQL", "connectionUrl": "jdbc:postgresql://db:5432/shop"}))
    _ok(client.put(f"/api/v1/namespaces/{NS}/datasets/public.orders", json=TABLE))
    return client


def test_put_namespace_creates_and_updates(shop: TestClient) -> None:
    change = {"ownerName": "you", "description": "new"}
    body = _ok(shop.put(f"/api/v1/namespaces/{NS}", json=change))
    assert (body["name"], body["ownerName"], body["description"]) == (NS, "you", "new")
    assert _ok(shop.get(f"/api/v1/namespaces/{NS}"))["ownerName"] == "you"
    names = [n["name"] for n in _ok(shop.get("/api/v1/namespaces"))["namespaces"]]
    assert NS in names


def test_put_source(shop: TestClient) -> None:
    source = _ok(shop.get("/api/v1/sources/shop_db"))
    assert source["type"] == "POSTGRESQL"
    assert source["connectionUrl"] == "jdbc:postgresql://db:5432/shop"
    changed = _ok(shop.put("/api/v1/sources/shop_db", json={
        "type": "POSTGRESQL", "connectionUrl": "jdbc:postgresql://db2:5432/shop",
        "description": "moved"}))
    assert (changed["connectionUrl"], changed["description"]) == (
        "jdbc:postgresql://db2:5432/shop", "moved")


def test_put_dataset_reads_back(shop: TestClient) -> None:
    body = _ok(shop.get(f"/api/v1/namespaces/{NS}/datasets/public.orders"))
    assert body["sourceName"] == "shop_db"
    assert body["description"] == "orders of the shop"
    assert [(f["name"], f["type"]) for f in body["fields"]] == [
        ("id", "INTEGER"), ("amount", "DECIMAL")]
    assert body["fields"][0]["tags"] == ["pk"]
    assert body["fields"][1]["description"] == "order total"
    assert body["tags"] == ["finance"]


@pytest.mark.parametrize(
    ("change", "status", "field"),
    [
        ({"fields": [{"type": "INTEGER"}]}, 400, "body.fields[0].name"),
        ({"type": "VIEW"}, 400, "body.type"),
        ({"sourceName": "nowhere"}, 404, "body.sourceName"),
        ({"runId": "not-a-uuid"}, 400, "body.runId"),
        ({"runId": "00000000-0000-4000-8000-00000000ffff"}, 404, "body.runId"),
    ],
)
def test_put_dataset_refusals_write_nothing(
    shop: TestClient, change: dict[str, Any], status: int, field: str
) -> None:
    body = {k: v for k, v in {**TABLE, **change}.items() if v is not None}
    _refused(shop.put(f"/api/v1/namespaces/{NS}/datasets/other", json=body), status, field)
    assert shop.get(f"/api/v1/namespaces/{NS}/datasets/other").status_code == 404


def test_put_dataset_in_unknown_namespace_is_404(shop: TestClient) -> None:
    response = shop.put("/api/v1/namespaces/nope/datasets/x", json=TABLE)
    assert response.status_code == 404, response.text


def _job(**extra: Any) -> dict[str, Any]:
    return {"type": "BATCH", "inputs": [{"namespace": NS, "name": "public.orders"}],
            "outputs": [], "location": "https://git.example/etl.py",
            "description": "loads orders", "context": {"sql": "SELECT 1"}, **extra}


def test_put_job_and_a_run_of_it(shop: TestClient) -> None:
    job = _ok(shop.put(f"/api/v1/namespaces/{NS}/jobs/load", json=_job()))
    assert job["description"] == "loads orders"
    assert job["facets"]["sql"]["query"] == "SELECT 1"
    assert job["facets"]["sourceCodeLocation"]["url"] == "https://git.example/etl.py"

    run = _ok(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={
        "id": RUN, "nominalStartTime": "2026-05-01T00:00:00Z"}), 201)
    assert (run["id"], run["state"]) == (RUN, "NEW")
    assert run["nominalStartTime"] == "2026-05-01T00:00:00Z"

    # Naming the run makes the PUT's inputs and outputs the job's current version.
    job = _ok(shop.put(f"/api/v1/namespaces/{NS}/jobs/load", json=_job(runId=RUN)))
    assert job["inputs"] == [{"namespace": NS, "name": "public.orders"}]
    assert job["location"] == "https://git.example/etl.py"
    version = job["currentVersion"]

    # A second run created through the API is a run of that same version.
    second = _ok(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={"id": OTHER_RUN}), 201)
    assert second["jobVersion"]["version"] == version
    assert _ok(shop.get(f"/api/v1/namespaces/{NS}/jobs/load"))["currentVersion"] == version


def test_put_job_refusals_write_nothing(shop: TestClient) -> None:
    missing = _job(outputs=[{"namespace": NS, "name": "nope"}])
    _refused(shop.put(f"/api/v1/namespaces/{NS}/jobs/j2", json=missing), 404, "body.outputs[0]")
    _refused(shop.put(f"/api/v1/namespaces/{NS}/jobs/j2", json=_job(type="CRON")), 400,
             "body.type")
    assert shop.get(f"/api/v1/namespaces/{NS}/jobs/j2").status_code == 404
    assert shop.get(f"/api/v1/namespaces/{NS}/datasets/nope").status_code == 404


def test_put_job_with_a_run_of_another_job_is_400(shop: TestClient) -> None:
    _ok(shop.put(f"/api/v1/namespaces/{NS}/jobs/load", json=_job()))
    _ok(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={"id": RUN}), 201)
    _refused(shop.put(f"/api/v1/namespaces/{NS}/jobs/other", json=_job(runId=RUN)), 400,
             "body.runId")


def test_put_dataset_with_a_run_makes_a_version_of_that_run(shop: TestClient) -> None:
    _ok(shop.put(f"/api/v1/namespaces/{NS}/jobs/load", json=_job()))
    _ok(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={"id": RUN}), 201)
    _ok(shop.put(f"/api/v1/namespaces/{NS}/datasets/public.totals",
                 json={**TABLE, "runId": RUN}))
    versions = _ok(shop.get(f"/api/v1/namespaces/{NS}/datasets/public.totals/versions"))
    assert [v["createdByRun"]["id"] for v in versions["versions"]] == [RUN]


def test_run_transitions(shop: TestClient) -> None:
    _ok(shop.put(f"/api/v1/namespaces/{NS}/jobs/load", json=_job()))
    _ok(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={"id": RUN}), 201)
    started = _ok(shop.post(f"/api/v1/jobs/runs/{RUN}/start",
                            params={"at": "2026-05-01T10:00:00Z"}))
    assert (started["state"], started["startedAt"]) == ("RUNNING", "2026-05-01T10:00:00Z")
    done = _ok(shop.post(f"/api/v1/jobs/runs/{RUN}/complete",
                         params={"at": "2026-05-01T10:00:30Z"}))
    assert (done["state"], done["durationMs"]) == ("COMPLETED", 30_000)
    # A terminal state is never reopened by a later start.
    again = _ok(shop.post(f"/api/v1/jobs/runs/{RUN}/start", params={"at": "2026-05-01T11:00:00Z"}))
    assert again["state"] == "COMPLETED"

    _ok(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={"id": OTHER_RUN}), 201)
    assert _ok(shop.post(f"/api/v1/jobs/runs/{OTHER_RUN}/fail"))["state"] == "FAILED"
    assert _ok(shop.post(f"/api/v1/jobs/runs/{OTHER_RUN}/abort"))["state"] == "ABORTED"
    runs = _ok(shop.get(f"/api/v1/namespaces/{NS}/jobs/load/runs"))
    assert runs["totalCount"] == 2


def test_run_write_refusals(shop: TestClient) -> None:
    _ok(shop.put(f"/api/v1/namespaces/{NS}/jobs/load", json=_job()))
    _ok(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={"id": RUN}), 201)
    _refused(shop.post(f"/api/v1/namespaces/{NS}/jobs/load/runs", json={"id": RUN}), 409,
             "body.id")
    assert shop.post(f"/api/v1/namespaces/{NS}/jobs/nope/runs", json={}).status_code == 404
    _refused(shop.post(f"/api/v1/jobs/runs/{RUN}/start", params={"at": "soon"}), 400,
             "query.at")
    _refused(shop.post("/api/v1/jobs/runs/x/complete"), 400, "path.id")
    unknown = shop.post(f"/api/v1/jobs/runs/{OTHER_RUN}/complete")
    assert unknown.status_code == 404, unknown.text
    assert shop.get(f"/api/v1/jobs/runs/{OTHER_RUN}").status_code == 404


@pytest.fixture
def guarded(store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(api_key="secret"), store)) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", f"/api/v1/namespaces/{NS}"),
        ("PUT", "/api/v1/sources/s"),
        ("PUT", f"/api/v1/namespaces/{NS}/datasets/d"),
        ("PUT", f"/api/v1/namespaces/{NS}/jobs/j"),
        ("POST", f"/api/v1/namespaces/{NS}/jobs/j/runs"),
        ("POST", f"/api/v1/jobs/runs/{RUN}/start"),
        ("DELETE", f"/api/v1/namespaces/{NS}/datasets/d"),
        ("DELETE", f"/api/v1/namespaces/{NS}/jobs/j"),
        ("DELETE", f"/api/v1/namespaces/{NS}"),
    ],
)
def test_writes_need_the_api_key(guarded: TestClient, method: str, path: str) -> None:
    _refused(guarded.request(method, path, json={}), 401, "Authorization")
