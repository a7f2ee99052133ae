"""``headwater token create|list|revoke`` and ``headwater audit`` against a database."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from headwater.store import access as tokens
from tests.support.cli_server import serve_cli_from


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_create_list_revoke_and_the_server_honours_them(db_url: str) -> None:
    secret = _run("token", "create", "spark", "--scope", "ingest", "--scope", "read",
                  "--namespace", "retail", "--db", db_url).strip()
    assert secret.startswith("hw_") and "\n" not in secret
    _run("token", "create", "ops", "--scope", "admin", "--db", db_url)  # keeps it closed
    listed = json.loads(_run("token", "list", "--format", "json", "--db", db_url))[:1]
    assert listed == [{"name": "spark", "scopes": ["ingest", "read"], "namespaces": ["retail"],
                       "createdAt": listed[0]["createdAt"], "revokedAt": None}]
    assert secret not in _run("token", "list", "--db", db_url)
    with Store.open(db_url) as store, TestClient(create_app(Settings(), store)) as client:
        headers = {"Authorization": f"Bearer {secret}"}
        assert client.get("/api/v1/namespaces", headers=headers).status_code == 200
        _run("token", "revoke", "spark", "--db", db_url)
        client.app.state.access.tokens.invalidate()  # as the 5-second reload would
        assert client.get("/api/v1/namespaces", headers=headers).status_code == 401
    table = _run("token", "list", "--db", db_url)
    assert table.startswith("spark\tingest,read\tretail\t")
    assert "revoked" in table.splitlines()[0] and table.splitlines()[1].endswith("\tlive")


def test_errors_are_cli_errors(db_url: str) -> None:
    _run("token", "create", "ops", "--scope", "admin", "--db", db_url)
    again = CliRunner().invoke(main, ["token", "create", "ops", "--scope", "read", "--db", db_url])
    assert again.exit_code == 1 and "exists already" in again.output
    missing = CliRunner().invoke(main, ["token", "revoke", "nobody", "--db", db_url])
    assert missing.exit_code == 1 and "no live token named 'nobody'" in missing.output


def test_audit_shows_the_log(db_url: str) -> None:
    with Store.open(db_url) as store, TestClient(create_app(Settings(), store)) as client:
        assert client.put("/api/v1/tags/pii", json={}).status_code == 200
    rows = json.loads(_run("audit", "--format", "json", "--db", db_url))
    assert [(r["operation"], r["target"], r["status"]) for r in rows] == [
        ("tag", "/api/v1/tags/pii", 200)]
    table = _run("audit", "--db", db_url, "--since", "2000-01-01")
    assert "\ttag\t/api/v1/tags/pii\tok\t200\t1" in table
    assert _run("audit", "--db", db_url, "--since", "2999-01-01") == ""


def test_query_commands_send_the_token(db_url: str, monkeypatch: Any) -> None:
    with Store.open(db_url) as store:
        secret, _ = tokens.create_token(store.engine, "reader", ["read"])
        with TestClient(create_app(Settings(), store)) as client:

            serve_cli_from(monkeypatch, client, "http://headwater")
            refused = CliRunner().invoke(main, ["search", "orders", "--url", "http://headwater"])
            assert refused.exit_code == 1 and "HTTP 401" in refused.output
            monkeypatch.setenv("HEADWATER_TOKEN", secret)
            assert _run("search", "orders", "--url", "http://headwater") == ""
            monkeypatch.delenv("HEADWATER_TOKEN")
            _run("search", "orders", "--url", "http://headwater", "--token", secret)
