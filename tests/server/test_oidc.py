"""Bearer JWTs of an OpenID Connect issuer: a real issuer on 127.0.0.1 (oidc_issuer.py)
publishes RSA keys; tokens it signs are admitted with the scopes their claim grants, and
expired, not-yet-valid, foreign, forged, unsigned and HMAC-confused ones are 401s naming
why. Key rotation, the rate limit on unknown key ids, the fetch in a worker thread, and
every operation of /openapi.json with JWTs (in-process, SQLite and PostgreSQL)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.errors import ConfigError
from headwater.server.app import create_app
from headwater.server.oidc import JwtVerifier
from headwater.store import Store
from headwater.store import access as tokens
from tests.server.events import run_event
from tests.server.live import running_server
from tests.server.oidc_issuer import AUDIENCE, Issuer, running_issuer
from tests.server.test_access_every_operation import API_KEY, check_every_operation


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


def _app(store: Store, issuer: Issuer, **settings: Any) -> TestClient:
    return TestClient(
        create_app(Settings(oidc_issuer=issuer.url, oidc_audience=AUDIENCE, **settings), store)
    )


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_scopes_come_from_the_claim(store: Store, issuer: Issuer) -> None:
    with _app(store, issuer) as client:
        reader = issuer.token("alice", scope="openid read")
        assert client.get("/api/v1/namespaces", headers=_bearer(reader)).status_code == 200
        refused = client.post("/api/v1/lineage", json=run_event(), headers=_bearer(reader))
        assert refused.status_code == 403
        assert "'alice' lacks the ingest scope" in refused.json()["error"]
        for scope in ("headwater:ingest", ["ingest", "read"]):
            writer = issuer.token("ci-bot", scope=scope)
            posted = client.post("/api/v1/lineage", json=run_event(), headers=_bearer(writer))
            assert posted.status_code == 200, posted.text
        nothing = issuer.token("bob", scope="openid profile")
        assert client.get("/api/v1/namespaces", headers=_bearer(nothing)).status_code == 403
        # The subject names the writer in the audit log; stored tokens keep working.
        client.app.state.access.audit.flush()
        rows = tokens.read_audit(store.engine)
        assert ("ci-bot", "ingest", "ok") in {(r.token_name, r.operation, r.outcome) for r in rows}
        assert ("bob", "forbidden") in {(r.token_name, r.outcome) for r in rows}
        secret, _ = tokens.create_token(store.engine, "stored", ["read"])
        client.app.state.access.tokens.reload()
        assert client.get("/api/v1/namespaces", headers=_bearer(secret)).status_code == 200
        assert client.get("/api/v1/namespaces").status_code == 401


def test_a_namespaces_claim_limits_what_the_token_sees(store: Store, issuer: Issuer) -> None:
    with _app(store, issuer, oidc_namespaces_claim="hw_namespaces") as client:
        writer = issuer.token(scope="ingest", hw_namespaces="*")
        assert (
            client.post("/api/v1/lineage", json=run_event(), headers=_bearer(writer)).status_code
            == 200
        )
        limited = issuer.token(scope="read", hw_namespaces=["file"])
        listed = client.get("/api/v1/namespaces", headers=_bearer(limited)).json()
        assert [n["name"] for n in listed["namespaces"]] == ["file"]
        assert (
            client.get("/api/v1/namespaces/retail/jobs", headers=_bearer(limited)).status_code
            == 403
        )
        everything = issuer.token(scope="read", hw_namespaces="retail file")
        listed = client.get("/api/v1/namespaces", headers=_bearer(everything)).json()
        assert sorted(n["name"] for n in listed["namespaces"]) == ["file", "retail"]
        none = issuer.token(scope="read")
        assert client.get("/api/v1/namespaces", headers=_bearer(none)).json()["namespaces"] == []


def test_bad_tokens_are_401s_naming_why(store: Store, issuer: Issuer) -> None:
    now = int(time.time())
    kid, private = issuer.keys[0]
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = _b64(json.dumps({"alg": "HS256", "kid": kid, "typ": "JWT"}).encode())
    claims = _b64(
        json.dumps(
            {
                "iss": issuer.url,
                "aud": AUDIENCE,
                "sub": "mallory",
                "exp": now + 300,
                "scope": "admin",
            }
        ).encode()
    )
    confused = f"{header}.{claims}." + _b64(
        hmac.new(public_pem, f"{header}.{claims}".encode(), hashlib.sha256).digest()
    )
    unsigned = jwt.encode(
        {"iss": issuer.url, "aud": AUDIENCE, "sub": "mallory", "exp": now + 300, "scope": "admin"},
        None,
        algorithm="none",
        headers={"kid": kid},
    )
    cases = {
        "expired": issuer.token(exp=now - 120),
        "not yet valid": issuer.token(nbf=now + 600),
        f"its issuer is not {issuer.url}": issuer.token(iss="http://127.0.0.1:9/other"),
        f"its audience is not {AUDIENCE}": issuer.token(aud="another-service"),
        "bad signature": issuer.token(private=stranger),
        "algorithm 'HS256' is not accepted": confused,
        "algorithm 'none' is not accepted": unsigned,
        "no exp claim": issuer.token(exp=None),
        "no sub claim": issuer.token(sub=None),
        "a key the issuer does not publish": issuer.token(kid="made-up", private=stranger),
    }
    with _app(store, issuer) as client:
        for reason, token in cases.items():
            refused = client.get("/api/v1/namespaces", headers=_bearer(token))
            assert refused.status_code == 401, (reason, refused.text)
            assert reason in refused.json()["error"], (reason, refused.text)
            assert refused.headers["WWW-Authenticate"] == "Bearer"
        client.app.state.access.audit.flush()
    refusals = [r for r in tokens.read_audit(store.engine) if r.outcome == "unauthenticated"]
    assert refusals and all(r.status == 401 for r in refusals)


def test_keys_rotate_and_unknown_key_ids_are_rate_limited(
    store: Store, issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    with _app(store, issuer) as client:
        verifier = JwtVerifier(issuer.url, AUDIENCE, min_refresh=30.0, clock=lambda: now[0])
        client.app.state.access.jwt = verifier
        threads: list[str] = []
        refresh = verifier.refresh

        def recording() -> None:
            threads.append(threading.current_thread().name)
            refresh()

        monkeypatch.setattr(verifier, "refresh", recording)
        old = issuer.token(scope="read")
        assert client.get("/api/v1/namespaces", headers=_bearer(old)).status_code == 200
        assert verifier.fetches == 1
        # The keys are fetched in a worker thread, never in the event loop.
        assert threads and all(name.startswith("AnyIO worker thread") for name in threads)
        issuer.rotate()
        new = issuer.token(scope="read")
        # Within the rate limit an unknown key id fetches nothing.
        assert client.get("/api/v1/namespaces", headers=_bearer(new)).status_code == 401
        assert verifier.fetches == 1
        now[0] += 31
        assert client.get("/api/v1/namespaces", headers=_bearer(new)).status_code == 200
        assert verifier.fetches == 2
        # The withdrawn key no longer verifies anything, and asking fetches nothing more.
        for _ in range(5):
            assert client.get("/api/v1/namespaces", headers=_bearer(old)).status_code == 401
        assert verifier.fetches == 2
        # Keys older than their lifetime are fetched again before use.
        now[0] += 3600
        assert client.get("/api/v1/namespaces", headers=_bearer(new)).status_code == 200
        assert verifier.fetches == 3


def test_every_documented_operation_with_jwts(store: Store, issuer: Issuer) -> None:
    secrets = {
        scope: issuer.token(f"{scope}-jwt", scope=scope) for scope in ("admin", "ingest", "read")
    }
    secrets["api-key"] = API_KEY
    with _app(store, issuer, api_key=API_KEY) as client:
        assert check_every_operation(client, secrets) > 40


@pytest.mark.live
def test_every_documented_operation_with_jwts_on_a_live_server(db_url: str, issuer: Issuer) -> None:
    Store.open(db_url, migrate=True).close()
    secrets = {
        scope: issuer.token(f"{scope}-jwt", scope=scope) for scope in ("admin", "ingest", "read")
    }
    secrets["api-key"] = API_KEY
    arguments = (
        "--db",
        db_url,
        "--api-key",
        API_KEY,
        "--oidc-issuer",
        issuer.url,
        "--oidc-audience",
        AUDIENCE,
    )
    with running_server(*arguments) as url, httpx.Client(base_url=url, timeout=30.0) as client:
        assert check_every_operation(client, secrets) > 40


def test_the_issuer_must_be_https_and_come_with_an_audience() -> None:
    with pytest.raises(ConfigError, match="https"):
        Settings(oidc_issuer="http://idp.example.com", oidc_audience="x")
    with pytest.raises(ConfigError, match="oidc_audience"):
        Settings(oidc_issuer="https://idp.example.com")
    assert Settings(oidc_issuer="https://idp.example.com", oidc_audience="x").oidc_issuer


def test_requests_waiting_on_one_fetch_fetch_nothing_more(issuer: Issuer) -> None:
    verifier = JwtVerifier(issuer.url, AUDIENCE)
    reads = issuer.jwks_reads
    waiting = [threading.Thread(target=verifier.refresh) for _ in range(8)]
    for thread in waiting:
        thread.start()
    for thread in waiting:
        thread.join()
    assert verifier.fetches == 1
    assert issuer.jwks_reads == reads + 1
