"""Every operation the server documents refuses a missing or wrong token and a token
without its scope, and admits the right one with a ``Cache-Control: private`` answer:
generated from ``/openapi.json``, so a new
route cannot escape the gate. In-process and against a real ``headwater serve``, on
SQLite and PostgreSQL.

The scope each operation needs is spelled out here (:func:`expected_scope`) rather than
taken from :func:`headwater.server.access.required_scope`, so the test checks the gate
against the rule docs/server.md states, not against itself.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from headwater.store import access as tokens
from tests.server.events import run_event
from tests.server.live import running_server

SCOPES = ("admin", "ingest", "read")
API_KEY = "hw_every-operation-api-key"
# Values for path parameters: real names where the seeded event has them, so most reads
# answer 200; any other answer but 401/403/5xx still shows the gate let the request in.
PATH_VALUES = {
    "namespace": "retail", "job": "orders_daily", "dataset": "silver.orders",
    "name": "no-such-token", "tag": "pii", "field": "id", "version": "v1",
    "id": "00000000-0000-4000-8000-000000000000", "run_id": "00000000-0000-4000-8000-000000000000",
}


def expected_scope(method: str, path: str) -> str | None:
    """The scope docs/server.md says a request needs (None: the health check, open)."""
    if path == "/api/v1/health":
        return None
    if method == "POST" and path in ("/api/v1/lineage", "/api/v1/lineage/batch"):
        return "ingest"
    if method in ("GET", "HEAD") and not path.startswith(("/api/v2/tokens", "/api/v2/audit")):
        return "read"
    return "admin"


def _fill(template: str) -> str:
    return re.sub(r"\{([^}:]+)(?::[^}]*)?\}",
                  lambda m: PATH_VALUES.get(m.group(1), "x"), template)


def _body(method: str, path: str) -> Any:
    if path == "/api/v1/lineage":
        return run_event()
    if path == "/api/v1/lineage/batch":
        return [run_event()]
    if path == "/api/v2/tokens" and method == "POST":
        return {"name": f"made-{method}", "scopes": ["read"]}
    return {} if method in ("POST", "PUT", "PATCH") else None


def operations(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(method, template, filled path) of every documented operation."""
    found = []
    for template, item in document["paths"].items():
        for method in item:
            if method.upper() in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
                found.append((method.upper(), template, _fill(template)))
    return found


def _send(client: httpx.Client | TestClient, method: str, path: str, body: Any,
          authorization: str | None) -> httpx.Response:
    headers = {"Authorization": authorization} if authorization else {}
    return client.request(method, path, json=body, headers=headers)


def check_every_operation(client: httpx.Client | TestClient, secrets: dict[str, str]) -> int:
    """Run the four checks on every operation; returns how many were checked."""
    seeded = _send(client, "POST", "/api/v1/lineage", run_event(), f"Bearer {secrets['ingest']}")
    assert seeded.status_code == 200, seeded.text
    document = _send(client, "GET", "/openapi.json", None, f"Bearer {secrets['read']}").json()
    checked = 0
    for method, template, path in operations(document):
        need = expected_scope(method, template)
        body = _body(method, template)
        if need is None:
            assert _send(client, method, path, body, None).status_code == 200, path
            continue
        for authorization in (None, "Bearer hw_not-a-token", f"Basic {secrets[need]}",
                              secrets[need]):
            refused = _send(client, method, path, body, authorization)
            assert refused.status_code == 401, (method, path, authorization, refused.text)
            assert refused.headers["WWW-Authenticate"] == "Bearer"
        for scope in SCOPES:
            if scope == need:
                continue
            refused = _send(client, method, path, body, f"Bearer {secrets[scope]}")
            assert refused.status_code == 403, (method, path, scope, refused.text)
            assert need in refused.json()["error"]
        for secret in (secrets[need], secrets["api-key"]):
            admitted = _send(client, method, path, body, f"Bearer {secret}")
            assert admitted.status_code not in (401, 403), (method, path, admitted.text)
            assert admitted.status_code < 500, (method, path, admitted.text)
            # An answer for one token must never be served from a shared cache to another.
            assert "private" in admitted.headers.get("cache-control", ""), (method, path)
        checked += 1
    return checked


def _make_tokens(store: Store) -> dict[str, str]:
    made = {scope: tokens.create_token(store.engine, f"{scope}-only", [scope])[0]
            for scope in SCOPES}
    return {**made, "api-key": API_KEY}


def test_every_documented_operation_in_process(store: Store) -> None:
    secrets = _make_tokens(store)
    with TestClient(create_app(Settings(api_key=API_KEY), store)) as client:
        checked = check_every_operation(client, secrets)
    assert checked > 40


@pytest.mark.live
def test_every_documented_operation_on_a_live_server(db_url: str) -> None:
    store = Store.open(db_url, migrate=True)
    try:
        secrets = _make_tokens(store)
    finally:
        store.close()
    with running_server("--db", db_url, "--api-key", API_KEY) as url, \
            httpx.Client(base_url=url, timeout=30.0) as client:
        checked = check_every_operation(client, secrets)
    assert checked > 40
