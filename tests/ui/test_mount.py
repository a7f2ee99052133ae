"""The web UI is served by the app itself: the page for client routes, assets, and API 404s kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.ui import STATIC_DIR, mount_ui


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings.from_env({}, db_url=f"sqlite:///{tmp_path / 'headwater.db'}")
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/lineage?nodeId=dataset:file:/data/orders&depth=2",
        "/datasets/file/%2Fwarehouse%2Fretail%2Fsilver%2Forders",
        "/jobs/retail/silver.clean_orders",
        "/runs/0f3c7e0e-0000-4000-8000-000000000000",
        "/search?q=orders",
    ],
)
def test_client_routes_get_the_page(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-cache"
    assert '<div id="search-slot">' in response.text or 'id="search-slot"' in response.text
    assert "/static/assets/" in response.text


def test_assets_named_by_the_page_are_served(client: TestClient) -> None:
    page = client.get("/").text
    assets = [part.split('"')[0] for part in page.split('"/static/assets/')[1:]]
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
    for asset in assets:
        response = client.get(f"/static/assets/{asset}")
        assert response.status_code == 200, asset
        assert len(response.content) > 1000


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("path", ["/api/v1/no-such-thing", "/api/v2/nothing/here", "/api"])
def test_unknown_api_paths_keep_their_json_404(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    assert "error" in response.json()


def test_missing_static_file_is_404_not_the_page(client: TestClient) -> None:
    response = client.get("/static/assets/not-there.js")
    assert response.status_code == 404
    assert "text/html" not in response.headers.get("content-type", "")


def test_api_routes_still_answer(client: TestClient) -> None:
    assert client.get("/api/v1/health").status_code == 200
    assert client.get("/api/v1/namespaces").json() == {"namespaces": [], "totalCount": 0}
    assert client.get("/openapi.json").status_code == 200


def test_without_a_build_the_api_still_works(tmp_path: Path) -> None:
    app = FastAPI()

    @app.get("/api/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    mount_ui(app, static_dir=tmp_path / "absent")
    with TestClient(app) as test_client:
        assert test_client.get("/api/v1/health").status_code == 200
        assert test_client.get("/").status_code == 404


def test_static_dir_ships_the_built_page() -> None:
    assert (STATIC_DIR / "index.html").is_file()
    assert (STATIC_DIR / "build-info.json").is_file()
