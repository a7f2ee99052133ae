"""Parent and child runs: job/run node data on /api/v2/lineage, Job.parentJobName and
GET /api/v1/jobs/runs/{id}/children, on SQLite and PostgreSQL (events: app_events.py)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.store.reads.parents import job_uuid
from tests.api.app_events import (
    APP_1,
    APP_2,
    BUILD_1,
    LOAD_1,
    LOAD_2,
    NS,
    ORPHAN,
    REMOTE,
    events,
)


@pytest.fixture
def apps(client: TestClient) -> TestClient:
    response = client.post("/api/v1/lineage/batch", json=events())
    assert response.status_code < 300, response.text
    return client


def _nodes(client: TestClient, node_id: str, **params: Any) -> dict[str, dict[str, Any]]:
    response = client.get("/api/v2/lineage", params={"nodeId": node_id, **params})
    assert response.status_code == 200, response.text
    return {n["id"]: n["data"] for n in response.json()["nodes"]}


def test_job_nodes_carry_latest_run_and_parent_job(apps: TestClient) -> None:
    nodes = _nodes(apps, f"dataset:{NS}:silver.orders", direction="both", depth=1)
    load = nodes[f"job:{NS}:etl_app.load"]
    assert load["latestRun"] == {
        "id": LOAD_2,
        "state": "COMPLETED",
        "startedAt": "2026-04-01T10:05:00Z",
        "endedAt": "2026-04-01T10:12:00Z",
        "durationMs": 7 * 60 * 1000,
    }
    assert load["parentJob"] == {"namespace": NS, "name": "etl_app"}
    build = nodes[f"job:{NS}:etl_app.build"]
    assert build["latestRun"]["id"] == BUILD_1
    assert build["latestRun"]["state"] == "FAILED"
    assert build["parentJob"] == {"namespace": NS, "name": "etl_app"}


def test_a_job_without_parent_or_runs_as_of_before_them(apps: TestClient) -> None:
    app = _nodes(apps, f"job:{NS}:etl_app", depth=0)[f"job:{NS}:etl_app"]
    assert app["parentJob"] is None
    assert app["latestRun"]["id"] == APP_2
    before = _nodes(apps, f"job:{NS}:etl_app", depth=0, asOf="2026-04-01T09:30:00Z")
    assert before[f"job:{NS}:etl_app"]["latestRun"]["id"] == APP_1
    earlier = _nodes(apps, f"job:{NS}:etl_app", depth=0, asOf="2026-04-01T08:00:00Z")
    assert earlier[f"job:{NS}:etl_app"]["latestRun"] is None


def test_parent_job_comes_from_the_facet_when_the_parent_never_reported(
    apps: TestClient,
) -> None:
    lonely = _nodes(apps, f"job:{NS}:lonely", depth=0)[f"job:{NS}:lonely"]
    assert lonely["parentJob"] == {"namespace": NS, "name": "remote_app"}


def test_run_nodes_carry_parent_run_and_job(apps: TestClient) -> None:
    nodes = _nodes(apps, f"run:{LOAD_1}", direction="downstream", depth=1)
    run = nodes[f"run:{LOAD_1}"]
    assert run["parentRun"] == APP_1
    assert run["parentJob"] == {"namespace": NS, "name": "etl_app"}
    assert run["job"] == {"namespace": NS, "name": "etl_app.load"}
    assert run["state"] == "COMPLETED"
    assert run["durationMs"] == 5 * 60 * 1000
    app = _nodes(apps, f"run:{APP_1}", depth=0)[f"run:{APP_1}"]
    assert app["parentRun"] is None and app["parentJob"] is None
    assert app["job"] == {"namespace": NS, "name": "etl_app"}


def test_job_response_names_its_parent(apps: TestClient) -> None:
    response = apps.get(f"/api/v1/namespaces/{NS}/jobs/etl_app.load")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["parentJobName"] == "etl_app"
    assert body["parentJobUuid"] == job_uuid(NS, "etl_app")
    app = apps.get(f"/api/v1/namespaces/{NS}/jobs/etl_app").json()
    assert app["parentJobName"] is None and app["parentJobUuid"] is None
    jobs = apps.get(f"/api/v1/namespaces/{NS}/jobs").json()["jobs"]
    listed = {j["name"]: j["parentJobName"] for j in jobs}
    assert listed == {
        "etl_app": None,
        "etl_app.build": "etl_app",
        "etl_app.load": "etl_app",
        "lonely": "remote_app",
    }


def test_child_runs_of_an_application_run(apps: TestClient) -> None:
    response = apps.get(f"/api/v1/jobs/runs/{APP_1}/children")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["totalCount"] == 2
    assert [(r["id"], r["job"]["name"], r["state"]) for r in body["runs"]] == [
        (LOAD_1, "etl_app.load", "COMPLETED"),
        (BUILD_1, "etl_app.build", "FAILED"),
    ]
    assert all(r["job"]["namespace"] == NS for r in body["runs"])
    second = apps.get(f"/api/v1/jobs/runs/{APP_2}/children").json()
    assert [r["id"] for r in second["runs"]] == [LOAD_2]


def test_child_runs_are_paged(apps: TestClient) -> None:
    body = apps.get(f"/api/v1/jobs/runs/{APP_1}/children", params={"limit": 1, "offset": 1}).json()
    assert body["totalCount"] == 2
    assert [r["id"] for r in body["runs"]] == [BUILD_1]


def test_children_of_a_parent_that_never_reported_and_of_a_leaf(apps: TestClient) -> None:
    remote = apps.get(f"/api/v1/jobs/runs/{REMOTE}/children").json()
    assert [r["id"] for r in remote["runs"]] == [ORPHAN]
    leaf = apps.get(f"/api/v1/jobs/runs/{LOAD_1}/children").json()
    assert leaf == {"runs": [], "totalCount": 0, "nextCursor": None}


@pytest.mark.parametrize(
    ("run_id", "params", "status", "field"),
    [
        ("00000000-0000-4000-8000-000000000999", {}, 404, None),
        ("not-a-uuid", {}, 400, "path.id"),
        (APP_1, {"limit": "-1"}, 400, "query.limit"),
        (APP_1, {"offset": "x"}, 400, "query.offset"),
    ],
)
def test_child_runs_errors(
    apps: TestClient, run_id: str, params: dict[str, str], status: int, field: str | None
) -> None:
    response = apps.get(f"/api/v1/jobs/runs/{run_id}/children", params=params)
    assert response.status_code == status, response.text
    assert response.json().get("field") == field
