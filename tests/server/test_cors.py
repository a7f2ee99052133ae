"""CORS stays off unless origins are named; then only those origins, and no credentials."""

from __future__ import annotations

from typing import Any

import pytest

from headwater.config import Settings
from headwater.errors import ConfigError
from headwater.store import Store
from headwater.store import access as tokens

PAGE = "https://lineage-portal.example.com"


def _preflight(client: Any, origin: str, method: str = "GET") -> Any:
    return client.options("/api/v1/namespaces", headers={
        "Origin": origin, "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "authorization",
    })


def test_cors_is_off_by_default(make_client: Any) -> None:
    client = make_client()
    answer = client.get("/api/v1/namespaces", headers={"Origin": PAGE})
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers
    assert "access-control-allow-origin" not in _preflight(client, PAGE).headers


def test_named_origins_only_and_no_credentials(make_client: Any, store: Store) -> None:
    secret, _ = tokens.create_token(store.engine, "portal", ["read"])
    client = make_client(cors_origins=(PAGE, "http://localhost:3000"))
    # The preflight carries no token: it is answered before the access gate.
    allowed = _preflight(client, PAGE)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == PAGE
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in allowed.headers
    refused = _preflight(client, "https://evil.example")
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers

    read = client.get("/api/v1/namespaces", headers={
        "Origin": PAGE, "Authorization": f"Bearer {secret}"})
    assert read.status_code == 200
    assert read.headers["access-control-allow-origin"] == PAGE
    other = client.get("/api/v1/namespaces", headers={
        "Origin": "https://evil.example", "Authorization": f"Bearer {secret}"})
    assert "access-control-allow-origin" not in other.headers
    # The gate still applies to the real request.
    assert client.get("/api/v1/namespaces", headers={"Origin": PAGE}).status_code == 401


@pytest.mark.parametrize("origin", ["*", "null", "lineage.example.com",
                                    "https://example.com/path", "ftp://example.com"])
def test_only_explicit_web_origins_are_accepted(origin: str) -> None:
    with pytest.raises(ConfigError, match="CORS origin"):
        Settings.from_env({"HEADWATER_CORS_ORIGINS": origin})


def test_origins_from_the_environment() -> None:
    settings = Settings.from_env({"HEADWATER_CORS_ORIGINS": "https://A.example.com/, http://b:8080"})
    assert settings.cors_origins == ("https://a.example.com", "http://b:8080")
