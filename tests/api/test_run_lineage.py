"""GET /api/v1/runlineage/upstream (Marquez's upstream run lineage) on the retail events."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.retail_events import run_id
from tests.graph.retail import NS


def _upstream(client: TestClient, run: str, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/api/v1/runlineage/upstream", params={"runId": run, **params})
    assert response.status_code == 200, response.text
    return response.json()["runs"]  # type: ignore[no-any-return]


def test_upstream_runs_hop_by_hop(retail: TestClient) -> None:
    reader = run_id("publish", 2)
    runs = _upstream(retail, reader, depth=2)
    assert [(r["run"]["id"], r["job"]["name"]) for r in runs] == [
        (reader, "publish"),
        (run_id("build_revenue", 2), "build_revenue"),
        (run_id("clean_orders", 2), "clean_orders"),
    ]
    first = runs[0]
    assert first["run"]["status"] == "COMPLETED"
    assert first["run"]["start"] == "2026-03-02T14:00:00Z"
    assert first["run"]["end"] == "2026-03-02T14:30:00Z"
    assert first["job"]["namespace"] == NS and first["job"]["version"]
    [read] = first["inputs"]
    assert (read["namespace"], read["name"]) == (NS, "gold.revenue")
    assert read["producedByRunId"] == run_id("build_revenue", 2)
    version = retail.get(
        f"/api/v1/namespaces/{NS}/datasets/gold.revenue/versions/{read['version']}"
    ).json()
    assert version["createdByRun"]["id"] == run_id("build_revenue", 2)
    # Raw inputs have no version (nothing wrote them), so they are not listed.
    assert runs[2]["inputs"] == []


def test_depth_zero_is_the_run_alone(retail: TestClient) -> None:
    runs = _upstream(retail, run_id("build_revenue", 1), depth=0)
    assert [r["run"]["id"] for r in runs] == [run_id("build_revenue", 1)]
    [read] = runs[0]["inputs"]
    assert read["producedByRunId"] == run_id("clean_orders", 1)


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"runId": "00000000-0000-4000-8000-999999999999"}, 404, None),
        ({"runId": "nope"}, 400, "query.runId"),
        ({}, 400, "query.runId"),
        ({"runId": "00000000-0000-4000-8000-000100000001", "depth": "-1"}, 400, "query.depth"),
    ],
)
def test_refusals(
    retail: TestClient, params: dict[str, str], status: int, field: str | None
) -> None:
    response = retail.get("/api/v1/runlineage/upstream", params=params)
    assert response.status_code == status, response.text
    assert response.json().get("field") == field
