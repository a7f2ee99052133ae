"""The ingestion fast path answers as the FastAPI routes would, and the OpenAPI still lists them."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.server.fastpath import IngestFastPath
from tests.server.events import run_event


def test_fast_path_is_installed_and_routes_stay_documented(client: TestClient) -> None:
    assert any(m.cls is IngestFastPath for m in client.app.user_middleware)  # type: ignore[attr-defined]
    paths = client.get("/openapi.json").json()["paths"]
    assert "post" in paths["/api/v1/lineage"]
    assert "post" in paths["/api/v1/lineage/batch"]


@pytest.mark.parametrize("path", ["/api/v1/lineage", "/api/v1/lineage/batch"])
def test_fast_path_errors_have_the_api_shape(make_client: Any, path: str) -> None:
    open_client = make_client()
    response = open_client.post(path, content=b"{not json", headers={"Content-Type":
                                                                    "application/json"})
    assert response.status_code == 400
    assert set(response.json()) >= {"error", "field"}
    locked = make_client(api_key="sekrit")
    body = run_event() if path.endswith("lineage") else [run_event()]
    response = locked.post(path, json=body)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert response.json()["field"] == "Authorization"
    response = locked.post(path, json=body, headers={"Authorization": "Bearer sekrit"})
    assert response.status_code == 200


def test_other_methods_and_paths_go_to_the_app(client: TestClient) -> None:
    assert client.get("/api/v1/lineage", params={"nodeId": "dataset:x:y"}).status_code in (
        200, 404)
    assert client.put("/api/v1/lineage", json={}).status_code == 405
