"""Every answer carries the browser security headers: the UI, the API, errors and refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.server.security_headers import CONTENT_SECURITY_POLICY
from headwater.ui.api_docs import DOCS_CONTENT_SECURITY_POLICY
from tests.server.events import run_event

EXPECTED = {
    "x-content-type-options": "nosniff",
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/", None),                                   # the UI shell
    ("GET", "/api/v1/health", None),
    ("GET", "/api/v1/namespaces", None),
    ("GET", "/api/v1/nothing-here", None),                # a 404
    ("POST", "/api/v1/lineage", run_event()),             # the ingestion endpoint
    ("POST", "/api/v1/lineage/batch", {"not": "a list"}),  # its 400
])
def test_every_answer_carries_the_headers(
    tmp_path: Path, method: str, path: str, body: object
) -> None:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'h.db'}")
    with TestClient(create_app(settings)) as client:
        response = client.request(method, path, json=body)
    for name, value in EXPECTED.items():
        assert response.headers.get(name) == value, (path, response.status_code, name)


def test_a_refusal_of_the_access_gate_carries_them_too(tmp_path: Path) -> None:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'h.db'}", api_key="secret")
    with TestClient(create_app(settings)) as client:
        response = client.get("/api/v1/namespaces")
    assert response.status_code == 401
    assert response.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(("page", "assets"), [
    ("/docs", ["/static/docs/swagger-ui.css", "/static/docs/swagger-ui-bundle.js",
               "/static/docs/swagger-init.js"]),
    ("/redoc", ["/static/docs/redoc.standalone.js", "/static/docs/redoc-init.js"]),
])
def test_the_api_docs_pages_load_everything_from_the_package(
    tmp_path: Path, page: str, assets: list[str]
) -> None:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'h.db'}")
    with TestClient(create_app(settings)) as client:
        answer = client.get(page)
        assert answer.status_code == 200
        assert answer.headers["content-security-policy"] == DOCS_CONTENT_SECURITY_POLICY
        assert "<script>" not in answer.text  # no inline script: the policy forbids it
        sources = re.findall(r'(?:src|href)="([^"]+)"', answer.text)
        assert sorted(s for s in sources if s != "data:,") == sorted(assets)
        for asset in assets:
            served = client.get(asset)
            assert served.status_code == 200 and len(served.content) > 100, asset
    assert "http" not in DOCS_CONTENT_SECURITY_POLICY  # no CDN is allowed either
