"""Scoped tokens: which requests each scope opens, on SQLite and PostgreSQL."""

from __future__ import annotations

import hmac
import json
import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.errors import StoreError
from headwater.server import token_cache
from headwater.server.access import TokenCache, required_scope
from headwater.store import Store
from headwater.store import access as tokens
from tests.server.events import run_event

DATASET = "dataset:file:/data/silver/orders"
RUN_ID = "00000000-0000-4000-8000-000000000000"

# (scope it needs, method, path, body): one representative request of each kind.
REQUESTS: list[tuple[str, str, str, Any]] = [
    ("ingest", "POST", "/api/v1/lineage", "event"),
    ("ingest", "POST", "/api/v1/lineage/batch", "batch"),
    ("read", "GET", "/api/v1/namespaces/file/datasets", None),
    ("read", "GET", f"/api/v2/lineage?nodeId={DATASET}", None),
    ("read", "GET", "/api/v1/events/lineage", None),
    ("read", "GET", "/openapi.json", None),
    ("admin", "PUT", "/api/v1/tags/pii", {"description": "personal data"}),
    ("admin", "DELETE", "/api/v1/namespaces/retail/jobs/orders_daily", None),
]


def _send(client: TestClient, method: str, path: str, body: Any, secret: str | None) -> Any:
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    if body == "event":
        body = run_event()
    elif body == "batch":
        body = [run_event()]
    return client.request(method, path, json=body, headers=headers)


@pytest.fixture
def secrets_by_scope(store: Store) -> dict[str, str]:
    """One token per scope, and the events the requests read."""
    made = {scope: tokens.create_token(store.engine, f"{scope}-token", [scope])[0]
            for scope in tokens.SCOPES}
    return made


def test_each_scope_opens_its_requests_and_no_other(
    make_client: Any, secrets_by_scope: dict[str, str]
) -> None:
    client = make_client()
    seeded = _send(client, "POST", "/api/v1/lineage", "event", secrets_by_scope["ingest"])
    assert seeded.status_code == 200, seeded.text
    for need, method, path, body in REQUESTS:
        assert required_scope(method, path.split("?")[0]) == need
        anonymous = _send(client, method, path, body, None)
        assert anonymous.status_code == 401, (method, path, anonymous.text)
        assert anonymous.headers["WWW-Authenticate"] == "Bearer"
        for scope, secret in secrets_by_scope.items():
            answer = _send(client, method, path, body, secret)
            if scope == need:
                assert answer.status_code < 300, (scope, method, path, answer.text)
                assert "private" in answer.headers["Cache-Control"]
            else:
                assert answer.status_code == 403, (scope, method, path, answer.text)
                assert answer.json()["field"] == "Authorization"


def test_a_wrong_or_malformed_token_is_401(make_client: Any, secrets_by_scope: dict[str, str]
                                           ) -> None:
    client = make_client()
    for header in ("Bearer hw_not-a-token", f"Basic {secrets_by_scope['read']}",
                   secrets_by_scope["read"]):
        answer = client.get("/api/v1/namespaces", headers={"Authorization": header})
        assert answer.status_code == 401, header


def test_health_and_the_ui_shell_need_no_token(make_client: Any,
                                               secrets_by_scope: dict[str, str]) -> None:
    client = make_client()
    assert client.get("/api/v1/health").status_code == 200
    assert required_scope("GET", "/") is None
    assert required_scope("GET", "/static/assets/index-abc123.js") is None
    assert required_scope("GET", "/datasets/file/x") is None
    assert required_scope("GET", "/docs") is None
    assert required_scope("GET", "/redoc") is None
    for path in ("/lineage", "/docs", "/redoc", "/static/docs/swagger-init.js"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert secrets_by_scope["read"] not in page.text
    # The API, its document and the event log are not part of the shell.
    for path in ("/api/v1/namespaces", "/openapi.json", "/api"):
        assert client.get(path).status_code == 401, path


def test_a_keyless_server_is_open(make_client: Any) -> None:
    client = make_client()
    for _need, method, path, body in REQUESTS:
        answer = _send(client, method, path, body, None)
        assert answer.status_code not in (401, 403), (method, path, answer.text)
        assert "private" not in answer.headers.get("Cache-Control", ""), path
    # Nobody may make the first token of an open server over HTTP.
    created = client.post("/api/v2/tokens", json={"name": "first", "scopes": ["admin"]})
    assert created.status_code == 403


def test_api_key_holds_every_scope_and_closes_reads(make_client: Any) -> None:
    client = make_client(api_key="sekrit")
    assert client.get("/api/v1/namespaces").status_code == 401
    for _need, method, path, body in REQUESTS:
        answer = _send(client, method, path, body, "sekrit")
        assert answer.status_code < 300 or answer.status_code == 404, (path, answer.text)
    assert _send(client, "POST", "/api/v1/lineage", "event", "sekrit2").status_code == 401


def test_public_reads_open_reads_but_not_writes(make_client: Any,
                                                secrets_by_scope: dict[str, str]) -> None:
    client = make_client(public_reads=True)
    assert client.get("/api/v1/namespaces").status_code == 200
    assert client.get("/openapi.json").status_code == 200
    assert _send(client, "POST", "/api/v1/lineage", "event", None).status_code == 401
    assert client.put("/api/v1/tags/pii", json={}).status_code == 401
    assert client.get("/api/v2/audit").status_code == 401
    # A wrong token is still refused, not taken as anonymous.
    bad = client.get("/api/v1/namespaces", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401


def test_revoking_takes_effect_on_the_next_request(make_client: Any, store: Store,
                                                   secrets_by_scope: dict[str, str]) -> None:
    client = make_client()
    admin = {"Authorization": f"Bearer {secrets_by_scope['admin']}"}
    reader = {"Authorization": f"Bearer {secrets_by_scope['read']}"}
    assert client.get("/api/v1/namespaces", headers=reader).status_code == 200
    revoked = client.delete("/api/v2/tokens/read-token", headers=admin)
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["tokens"][0]["revokedAt"] is not None
    assert client.get("/api/v1/namespaces", headers=reader).status_code == 401
    assert client.delete("/api/v2/tokens/read-token", headers=admin).status_code == 404


def test_tokens_made_over_the_api_work_and_are_listed_without_secrets(
    make_client: Any, secrets_by_scope: dict[str, str]
) -> None:
    client = make_client()
    admin = {"Authorization": f"Bearer {secrets_by_scope['admin']}"}
    created = client.post("/api/v2/tokens", headers=admin,
                          json={"name": "producer", "scopes": ["ingest"]})
    assert created.status_code == 201, created.text
    secret = created.json()["secret"]
    assert secret.startswith("hw_") and len(secret) == 3 + 43
    assert _send(client, "POST", "/api/v1/lineage", "event", secret).status_code == 200
    listed = client.get("/api/v2/tokens", headers=admin)
    assert [t["name"] for t in listed.json()["tokens"]] == [
        "admin-token", "ingest-token", "read-token", "producer"]
    assert secret not in listed.text
    duplicate = client.post("/api/v2/tokens", headers=admin,
                            json={"name": "producer", "scopes": ["read"]})
    assert duplicate.status_code == 409
    unknown = client.post("/api/v2/tokens", headers=admin,
                          json={"name": "x", "scopes": ["superuser"]})
    assert unknown.status_code == 400


def test_the_secret_is_stored_only_as_its_digest(store: Store) -> None:
    secret, made = tokens.create_token(store.engine, "ci", ["ingest"])
    with store.engine.connect() as conn:
        dumped = json.dumps([list(r) for r in conn.execute(tokens.api_tokens.select())],
                            default=str)
    assert secret not in dumped
    assert made.digest in dumped and made.digest == tokens.digest(secret)


def test_a_namespace_limited_token_sees_only_its_namespaces(
    make_client: Any, store: Store, secrets_by_scope: dict[str, str]
) -> None:
    secret, _ = tokens.create_token(store.engine, "files-only", ["read", "admin"], ["file"])
    client = make_client()
    seeded = _send(client, "POST", "/api/v1/lineage", "event", secrets_by_scope["ingest"])
    assert seeded.status_code == 200
    headers = {"Authorization": f"Bearer {secret}"}
    listed = client.get("/api/v1/namespaces", headers=headers)
    assert listed.status_code == 200
    assert [n["name"] for n in listed.json()["namespaces"]] == ["file"]
    everyone = client.get("/api/v1/namespaces",
                          headers={"Authorization": f"Bearer {secrets_by_scope['read']}"})
    assert sorted(n["name"] for n in everyone.json()["namespaces"]) == ["file", "retail"]
    assert client.get("/api/v1/namespaces/file/datasets", headers=headers).status_code == 200
    assert client.get("/api/v1/namespaces/file", headers=headers).status_code == 200
    for path in ("/api/v1/namespaces/retail/jobs", "/api/v1/namespaces/retail",
                 "/api/v1/namespaces/ret%61il/jobs"):
        assert client.get(path, headers=headers).status_code == 403, path
    assert client.delete("/api/v1/namespaces/retail/jobs/orders_daily",
                         headers=headers).status_code == 403
    # Cross-namespace reads answer for its namespaces (tests/server/test_namespace_scope.py);
    # admin reads and the reads that do not filter their answers refuse it.
    for path in (f"/api/v2/lineage?nodeId={DATASET}", "/api/v1/events/lineage",
                 "/api/v1/search?q=orders"):
        assert client.get(path, headers=headers).status_code == 200, path
    for path in ("/api/v2/tokens", "/api/v2/audit", "/api/v2/quarantine", "/metrics"):
        assert client.get(path, headers=headers).status_code == 403, path
    assert client.post(f"/api/v1/jobs/runs/{RUN_ID}/complete", json={},
                       headers=headers).status_code == 403
    # The API's description holds no data, so the docs pages work with such a token.
    assert client.get("/openapi.json", headers=headers).status_code == 200


def test_digests_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch,
                                               store: Store) -> None:
    secret, made = tokens.create_token(store.engine, "ci", ["ingest"])
    calls: list[tuple[Any, Any]] = []
    compare = hmac.compare_digest

    def recording(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(token_cache.hmac, "compare_digest", recording)
    cache = TokenCache(store.engine, api_key="sekrit")
    assert cache.lookup(secret) is not None
    assert (made.digest, made.digest) in calls  # the stored token's digest
    calls.clear()
    assert cache.lookup("sekrit") is not None
    assert (tokens.digest("sekrit"), tokens.digest("sekrit")) in calls  # the API key's


def test_token_checks_need_no_query_within_the_ttl(store: Store) -> None:
    secret, _ = tokens.create_token(store.engine, "ci", ["ingest"])
    now = [0.0]
    cache = TokenCache(store.engine, api_key=None, ttl=5.0, clock=lambda: now[0])
    assert cache.lookup(secret) is not None
    tokens.revoke_token(store.engine, "ci")  # as the CLI or another process would
    now[0] = 4.9
    assert cache.lookup(secret) is not None  # cached: no query was made
    now[0] = 5.1
    assert cache.lookup(secret) is None
    assert cache.protected() is False  # the last token gone: the server is open again


def test_a_new_token_works_at_once_and_misses_reload_at_most_every_second(store: Store) -> None:
    now = [0.0]
    cache = TokenCache(store.engine, api_key="sekrit", ttl=5.0, clock=lambda: now[0])
    assert cache.lookup("hw_unknown") is None
    secret, _ = tokens.create_token(store.engine, "fresh", ["read"])
    now[0] = 0.5
    assert cache.lookup(secret) is None  # a miss reloaded 0.5 s ago: no query now
    now[0] = 1.0
    assert cache.lookup(secret) is not None


def test_the_document_lists_401_and_403_on_every_operation_but_health(
    make_client: Any,
) -> None:
    document = make_client().get("/openapi.json").json()
    checked = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if path == "/api/v1/health":
                assert "401" not in operation["responses"]
                continue
            assert {"401", "403"} <= set(operation["responses"]), (method, path)
            checked += 1
    assert checked > 40


def test_a_reload_runs_in_a_worker_thread_not_the_event_loop(
    make_client: Any, store: Store, secrets_by_scope: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = make_client()
    threads: list[str] = []
    list_tokens = tokens.list_tokens

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return list_tokens(*args, **kwargs)

    monkeypatch.setattr(token_cache.tokens, "list_tokens", recording)
    client.app.state.access.tokens.invalidate()
    reader = {"Authorization": f"Bearer {secrets_by_scope['read']}"}
    assert client.get("/api/v1/namespaces", headers=reader).status_code == 200
    assert threads and all(name.startswith("AnyIO worker thread") for name in threads), threads


def test_tokens_never_read_close_the_server_rather_than_open_it(store: Store) -> None:
    cache = TokenCache(store.engine, api_key=None)
    with pytest.raises(StoreError):
        cache.protected()
    cache.refresh()
    assert cache.protected() is False
