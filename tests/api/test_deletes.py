"""Soft deletes (DELETE dataset / job / namespace) on the retail events, SQLite and PostgreSQL:
hidden from lists, search and lineage until a later event mentions the object again."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.retail_events import PRODUCER, SCHEMA_URL
from tests.graph.retail import NS, col, ds, job

LATER_RUN = "00000000-0000-4000-8000-00000000b001"


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _dataset_names(client: TestClient) -> set[str]:
    return {d["name"] for d in _ok(client.get(f"/api/v1/namespaces/{NS}/datasets"))["datasets"]}


def _v2_nodes(client: TestClient, node_id: str, direction: str) -> set[str]:
    body = _ok(client.get("/api/v2/lineage", params={"nodeId": node_id, "direction": direction}))
    return {n["id"] for n in body["nodes"]}


def _mention(client: TestClient, job_name: str, inputs: list[str], outputs: list[str]) -> None:
    """A run with an event time after any delete (the delete uses the server's clock)."""
    base = {
        "run": {"runId": LATER_RUN}, "job": {"namespace": NS, "name": job_name},
        "producer": PRODUCER, "schemaURL": SCHEMA_URL,
        "inputs": [{"namespace": NS, "name": n} for n in inputs],
        "outputs": [{"namespace": NS, "name": n} for n in outputs],
    }
    events = [{**base, "eventType": "COMPLETE", "eventTime": "2100-01-01T00:00:00Z"}]
    assert client.post("/api/v1/lineage/batch", json=events).status_code < 300


def test_deleted_dataset_is_hidden_everywhere(retail: TestClient) -> None:
    before = _ok(retail.delete(f"/api/v1/namespaces/{NS}/datasets/gold.ltv"))
    assert before["name"] == "gold.ltv"
    assert retail.get(f"/api/v1/namespaces/{NS}/datasets/gold.ltv").status_code == 404
    assert "gold.ltv" not in _dataset_names(retail)
    found = _ok(retail.get("/api/v1/search", params={"q": "ltv"}))["results"]
    assert [r["name"] for r in found] == ["build_ltv"]
    down = _v2_nodes(retail, ds("silver.orders"), "downstream")
    assert job("build_ltv") in down and ds("gold.ltv") not in down
    v1 = {n["id"] for n in _ok(retail.get("/api/v1/lineage",
                                           params={"nodeId": job("build_ltv")}))["graph"]}
    assert ds("gold.ltv") not in v1 and ds("silver.orders") in v1
    columns = _v2_nodes(retail, col("silver.orders", "amount"), "downstream")
    assert col("gold.ltv", "value") not in columns
    assert col("gold.revenue", "total") in columns
    lineage = retail.get("/api/v2/lineage", params={"nodeId": ds("gold.ltv")})
    assert lineage.status_code == 404
    assert retail.delete(f"/api/v1/namespaces/{NS}/datasets/gold.ltv").status_code == 404


def test_a_later_event_brings_a_dataset_back(retail: TestClient) -> None:
    _ok(retail.delete(f"/api/v1/namespaces/{NS}/datasets/gold.ltv"))
    _mention(retail, "build_ltv", ["silver.orders"], ["gold.ltv"])
    back = _ok(retail.get(f"/api/v1/namespaces/{NS}/datasets/gold.ltv"))
    assert back["name"] == "gold.ltv"
    assert "gold.ltv" in _dataset_names(retail)
    assert ds("gold.ltv") in _v2_nodes(retail, ds("silver.orders"), "downstream")


def test_deleted_job_is_hidden(retail: TestClient) -> None:
    _ok(retail.delete(f"/api/v1/namespaces/{NS}/jobs/build_ltv"))
    assert retail.get(f"/api/v1/namespaces/{NS}/jobs/build_ltv").status_code == 404
    assert retail.get(f"/api/v1/namespaces/{NS}/jobs/build_ltv/runs").status_code == 404
    jobs = {j["name"] for j in _ok(retail.get(f"/api/v1/namespaces/{NS}/jobs"))["jobs"]}
    assert "build_ltv" not in jobs and "build_revenue" in jobs
    down = _v2_nodes(retail, ds("silver.orders"), "downstream")
    assert job("build_ltv") not in down and job("build_revenue") in down
    assert retail.delete(f"/api/v1/namespaces/{NS}/jobs/nope").status_code == 404


def test_deleted_namespace_hides_everything_in_it(retail: TestClient) -> None:
    before = _ok(retail.delete(f"/api/v1/namespaces/{NS}"))
    assert before["isHidden"] is False
    assert NS not in {n["name"] for n in _ok(retail.get("/api/v1/namespaces"))["namespaces"]}
    assert _ok(retail.get(f"/api/v1/namespaces/{NS}"))["isHidden"] is True
    assert _dataset_names(retail) == set()
    assert _ok(retail.get(f"/api/v1/namespaces/{NS}/jobs"))["totalCount"] == 0
    assert _ok(retail.get("/api/v1/search", params={"q": "o"}))["totalCount"] == 0

    _mention(retail, "publish", ["gold.revenue"], ["report.dash"])
    assert _ok(retail.get(f"/api/v1/namespaces/{NS}"))["isHidden"] is False
    assert _dataset_names(retail) == {"gold.revenue", "report.dash"}
    jobs = {j["name"] for j in _ok(retail.get(f"/api/v1/namespaces/{NS}/jobs"))["jobs"]}
    assert jobs == {"publish"}


def test_deleting_unknown_things_is_404(retail: TestClient) -> None:
    assert retail.delete("/api/v1/namespaces/nope").status_code == 404
    assert retail.delete("/api/v1/namespaces/nope/datasets/x").status_code == 404
    assert retail.delete(f"/api/v1/namespaces/{NS}/datasets/nope").status_code == 404
