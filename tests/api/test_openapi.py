"""The OpenAPI document lists the statuses the routes answer, with the error body they use."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store

ERROR_BODY = {"$ref": "#/components/schemas/ErrorResponse"}
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
# Values for path parameters that name nothing, of the shape each route expects.
PATH_VALUES = {"id": "00000000-0000-4000-8000-999999999999"}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    with TestClient(create_app(Settings(db_url="sqlite:///:memory:"))) as client:
        answer: dict[str, Any] = client.get("/openapi.json").json()
    return answer


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method.upper(), path, operation


def concrete(path: str) -> str:
    return re.sub(r"\{([^}]*)\}", lambda m: PATH_VALUES.get(m.group(1), "nothing"), path)


def test_validation_errors_are_documented_as_400(document: dict[str, Any]) -> None:
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for method, path, operation in operations(document):
        if operation.get("parameters") or operation.get("requestBody"):
            assert "400" in operation["responses"], f"{method} {path}"


def test_every_error_answer_has_the_error_body(document: dict[str, Any]) -> None:
    for method, path, operation in operations(document):
        for status, response in operation["responses"].items():
            if status.startswith(("4", "5")):
                schema = response["content"]["application/json"]["schema"]
                assert schema == ERROR_BODY, f"{method} {path} {status}"


def test_every_route_but_health_documents_503(document: dict[str, Any]) -> None:
    # /metrics answers from memory while the database is down (its table counts
    # keep their last sample), which is when its figures matter most.
    for method, path, operation in operations(document):
        if path not in ("/api/v1/health", "/metrics"):
            assert "503" in operation["responses"], f"{method} {path}"


def test_every_write_without_the_key_is_a_documented_401(
    document: dict[str, Any], tmp_path: Path
) -> None:
    settings = Settings(api_key="secret")
    with TestClient(create_app(settings, Store.open(f"sqlite:///{tmp_path / 'h.db'}"))) as client:
        for method, path, operation in operations(document):
            if method == "GET":
                continue
            response = client.request(method, concrete(path))
            assert response.status_code == 401, f"{method} {path}: {response.text}"
            assert "401" in operation["responses"], f"{method} {path}"


def test_with_the_database_gone_every_answer_is_documented(
    document: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "h.db"
    store = Store.open(f"sqlite:///{db}")
    try:
        with TestClient(create_app(Settings(), store)) as client:
            for file in tmp_path.glob("h.db*"):
                file.unlink()
            store.engine.dispose()  # the next connection finds an empty file
            for method, path, operation in operations(document):
                response = client.request(method, concrete(path), params={"nodeId": "job:a:b"})
                assert str(response.status_code) in operation["responses"], (
                    f"{method} {path}: {response.status_code} {response.text}"
                )
    finally:
        store.close()


def test_405_allows_every_method_the_path_has(document: dict[str, Any]) -> None:
    with TestClient(create_app(Settings(db_url="sqlite:///:memory:"))) as client:
        for path, item in document["paths"].items():
            documented = {method.upper() for method in item if method in METHODS}
            response = client.request("PATCH", concrete(path))
            assert response.status_code == 405, path
            assert set(response.headers["allow"].split(", ")) == documented, path
