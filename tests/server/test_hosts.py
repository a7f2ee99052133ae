"""The Host check in-process: parsing the header, the default names, the app as served."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.errors import ConfigError
from headwater.server.app import create_app
from headwater.server.hosts import AllowedHosts, default_allowed_hosts, host_of
from headwater.server.run import serving_app
from headwater.store import Store


@pytest.mark.parametrize(("header", "name"), [
    ("localhost", "localhost"),
    ("LocalHost:5000", "localhost"),
    ("lineage.example.com.", "lineage.example.com"),
    ("[::1]:5000", "::1"),
    ("[::1]", "::1"),
    ("127.0.0.1:5000", "127.0.0.1"),
    ("[::1]x", None),
    ("[not-an-address]", None),
    ("example.com:http", None),
    ("user@example.com", None),
    ("example.com/path", None),
    ("", None),
])
def test_host_of(header: str, name: str | None) -> None:
    assert host_of(header) == name


def test_the_default_names() -> None:
    assert default_allowed_hosts("127.0.0.1") == ("127.0.0.1", "::1", "localhost")
    assert "10.1.2.3" in default_allowed_hosts("10.1.2.3")
    everywhere = default_allowed_hosts("0.0.0.0")
    assert "0.0.0.0" not in everywhere
    assert {"localhost", "127.0.0.1", "::1", socket.gethostname().lower()} <= set(everywhere)


def test_patterns() -> None:
    check = AllowedHosts(lambda *a: None, ["lineage.example.com", ".corp.example", "[::1]"])
    assert check.allows("lineage.example.com") and check.allows("::1")
    assert check.allows("corp.example") and check.allows("a.b.corp.example")
    assert not check.allows("evilcorp.example") and not check.allows("example.com")
    assert AllowedHosts(lambda *a: None, ["*"]).allows("anything")


def test_settings() -> None:
    settings = Settings.from_env({"HEADWATER_ALLOWED_HOSTS": "A.example.com, .corp.example"})
    assert settings.allowed_hosts == ("a.example.com", ".corp.example")
    with pytest.raises(ConfigError, match="names no host"):
        Settings.from_env({"HEADWATER_ALLOWED_HOSTS": " , "})


def _client(store: Store, **settings: Any) -> TestClient:
    app = serving_app(create_app(Settings(**settings), store), Settings(**settings))
    return TestClient(app, base_url="http://localhost:5000")


def test_the_served_app_checks_the_host_and_an_in_process_app_does_not(store: Store) -> None:
    with _client(store) as client:
        assert client.get("/api/v1/health").status_code == 200
        refused = client.get("/api/v1/health", headers={"Host": "rebound.example:5000"})
        assert refused.status_code == 400
        assert refused.json()["field"] == "Host"
        assert refused.headers["content-security-policy"].startswith("default-src 'none'")
        assert client.post("/api/v1/lineage", json={}, headers={"Host": "x"}).status_code == 400
    with _client(store, allowed_hosts=("rebound.example",)) as client:
        assert client.get("/api/v1/health", headers={"Host": "rebound.example"}).status_code == 200
        assert client.get("/api/v1/health").status_code == 400  # the default list is replaced
    with TestClient(create_app(Settings(), store)) as client:  # Host: testserver
        assert client.get("/api/v1/health").status_code == 200
