"""The audit log: what it records, how it is written, and its rate limit on refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.server.audit import AuditLog
from headwater.store import Store
from headwater.store import access as tokens
from headwater.store.access import AuditRow
from headwater.store.transactions import now_utc
from tests.server.events import run_event


def _count(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(tokens.audit_log))
                   .scalar_one())


def test_every_kind_of_write_and_refusal_is_audited(make_client: Any, store: Store) -> None:
    admin_secret, _ = tokens.create_token(store.engine, "ops", ["admin"])
    ingest_secret, _ = tokens.create_token(store.engine, "spark", ["ingest"])
    admin = {"Authorization": f"Bearer {admin_secret}"}
    ingest = {"Authorization": f"Bearer {ingest_secret}"}
    client: TestClient = make_client()
    assert client.post("/api/v1/lineage", json=run_event(), headers=ingest).status_code == 200
    batch = client.post("/api/v1/lineage/batch", json=[run_event(), run_event()], headers=ingest)
    assert batch.status_code == 200
    assert client.put("/api/v1/tags/pii", json={}, headers=admin).status_code == 200
    deleted = client.delete("/api/v1/namespaces/retail/jobs/orders_daily", headers=admin)
    assert deleted.status_code == 200
    gone = client.delete("/api/v1/namespaces/retail/jobs/nothing", headers=admin)
    assert gone.status_code == 404
    made = client.post("/api/v2/tokens", json={"name": "new", "scopes": ["read"]}, headers=admin)
    assert made.status_code == 201
    assert client.delete("/api/v2/tokens/new", headers=admin).status_code == 200
    assert client.post("/api/v1/lineage", json=run_event()).status_code == 401
    assert client.put("/api/v1/tags/x", json={}, headers=ingest).status_code == 403
    assert client.get("/api/v1/namespaces").status_code == 401  # a refused read, too

    entries = client.get("/api/v2/audit", headers=admin).json()["entries"]
    seen = [(e["tokenName"], e["operation"], e["target"], e["outcome"], e["status"])
            for e in entries]
    assert seen == [
        ("spark", "ingest", "/api/v1/lineage", "ok", 200),
        ("spark", "ingest.batch", "/api/v1/lineage/batch", "ok", 200),  # once, for 2 events
        ("ops", "tag", "/api/v1/tags/pii", "ok", 200),
        ("ops", "delete", "/api/v1/namespaces/retail/jobs/orders_daily", "ok", 200),
        ("ops", "delete", "/api/v1/namespaces/retail/jobs/nothing", "failed", 404),
        ("ops", "token.create", "new", "ok", 201),
        ("ops", "token.revoke", "new", "ok", 200),
        (None, "ingest", "/api/v1/lineage", "unauthenticated", 401),
        ("spark", "tag", "/api/v1/tags/x", "forbidden", 403),
        (None, "read", "/api/v1/namespaces", "unauthenticated", 401),
    ]
    assert all(e["client"] == "testclient" and e["count"] == 1 for e in entries)
    assert all(e["at"].endswith("Z") for e in entries)
    # Reading the audit log needs admin; the refusal is audited in turn.
    assert client.get("/api/v2/audit", headers=ingest).status_code == 403
    later = client.get("/api/v2/audit", headers=admin,
                       params={"since": entries[-1]["at"], "limit": 5}).json()["entries"]
    assert [(e["operation"], e["status"]) for e in later] == [("read", 401),
                                                              ("audit.read", 403)]
    paged = client.get("/api/v2/audit", headers=admin,
                       params={"offset": 8, "limit": 2}).json()["entries"]
    assert [e["status"] for e in paged] == [403, 401]


def test_a_request_queues_its_row_and_one_transaction_writes_the_batch(store: Store) -> None:
    audit = AuditLog(store.engine)  # its thread not started: only flush() writes
    for n in range(3):
        audit.record(AuditRow(now_utc(), "spark", "10.0.0.1", "ingest", f"/{n}", "ok", 200))
    assert _count(store) == 0
    audit.flush()
    assert _count(store) == 3
    audit.flush()
    assert _count(store) == 3


def test_shutdown_writes_what_is_queued(store: Store, tmp_path: Path) -> None:
    mirror = tmp_path / "audit.jsonl"
    app = create_app(Settings(), store)
    # A writer whose thread waits an hour: only the shutdown can write the row.
    app.state.access.audit = AuditLog(store.engine, mirror=mirror, flush_seconds=3600.0)
    with TestClient(app) as client:
        assert client.post("/api/v1/lineage", json=run_event()).status_code == 200
        assert _count(store) == 0
    rows = tokens.read_audit(store.engine)
    assert [(r.operation, r.status, r.token_name) for r in rows][-1] == ("ingest", 200, None)
    mirrored = [json.loads(line) for line in mirror.read_text().splitlines()]
    assert mirrored[-1]["operation"] == "ingest" and mirrored[-1]["status"] == 200


def test_refusals_are_rate_limited_per_client(store: Store) -> None:
    now = [0.0]
    audit = AuditLog(store.engine, refusals_per_minute=3, clock=lambda: now[0])
    for _ in range(10):
        audit.refused("10.0.0.9", None, "ingest", "/api/v1/lineage", "unauthenticated", 401)
    audit.refused("10.0.0.7", None, "read", "/api/v1/jobs", "unauthenticated", 401)
    audit.flush()
    rows = tokens.read_audit(store.engine)
    assert [r.client for r in rows] == ["10.0.0.9"] * 3 + ["10.0.0.7"]
    now[0] = 61.0  # the minute is over: the next flush writes one row counting the rest
    audit.flush()
    rows = tokens.read_audit(store.engine)
    assert len(rows) == 5
    summary = rows[-1]
    assert (summary.client, summary.outcome, summary.count) == (
        "10.0.0.9", "refused (rate-limited)", 7)
    # A new minute admits rows again.
    audit.refused("10.0.0.9", None, "ingest", "/api/v1/lineage", "unauthenticated", 401)
    audit.flush()
    assert len(tokens.read_audit(store.engine)) == 6


def test_refusals_held_back_are_counted_at_shutdown(store: Store) -> None:
    audit = AuditLog(store.engine, refusals_per_minute=1)
    for _ in range(4):
        audit.refused("10.0.0.9", None, "auth", None, "unauthenticated", 401)
    audit.close()
    rows = tokens.read_audit(store.engine)
    assert [(r.count, r.outcome) for r in rows] == [
        (1, "unauthenticated"), (3, "refused (rate-limited)")]


def test_the_audit_log_is_append_only(store: Store) -> None:
    tokens.append_audit(store.engine, [AuditRow(now_utc(), None, None, "ingest", "/", "ok", 200)])
    for statement in (sa.update(tokens.audit_log).values(outcome="forged"),
                      sa.delete(tokens.audit_log)):
        with pytest.raises(sa.exc.DatabaseError, match="append-only"):
            with store.engine.begin() as conn:
                conn.execute(statement)
    assert [r.outcome for r in tokens.read_audit(store.engine)] == ["ok"]


def test_the_audit_file_setting_mirrors_rows_as_json_lines(make_client: Any,
                                                            tmp_path: Path) -> None:
    mirror = tmp_path / "audit.jsonl"
    with TestClient(create_app(Settings(audit_file=mirror), make_client().app.state.store)) as c:
        assert c.put("/api/v1/tags/pii", json={}).status_code == 200
    lines = [json.loads(line) for line in mirror.read_text().splitlines()]
    assert [(r["operation"], r["target"], r["status"]) for r in lines] == [
        ("tag", "/api/v1/tags/pii", 200)]
