"""The audit log's retention (pruning what is older, and only that) and audited reads,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from headwater.config import Settings
from headwater.errors import ConfigError
from headwater.server.audit import AuditLog
from headwater.store import Store
from headwater.store import access as tokens
from headwater.store.access import AuditRow
from headwater.store.transactions import now_utc
from tests.server.events import run_event
from tests.server.live import running_server

DAY = 86400.0


def _seed(store: Store, *ages_in_days: float) -> None:
    now = now_utc()
    tokens.append_audit(store.engine, [
        AuditRow(now - timedelta(days=age), "ops", "10.0.0.1", "delete", f"/age/{age}", "ok", 200)
        for age in ages_in_days
    ])


def _targets(store: Store) -> list[str | None]:
    return [row.target for row in tokens.read_audit(store.engine, limit=1000)]


def test_pruning_deletes_only_rows_older_than_the_retention_and_audits_itself(
    store: Store,
) -> None:
    _seed(store, 400, 100, 2, 0.01)
    audit = AuditLog(store.engine, retention=90 * DAY)
    assert audit.prune() == 2
    assert audit.prune() == 0
    audit.flush()
    entries = tokens.read_audit(store.engine, limit=100)
    assert [e.target for e in entries[:2]] == ["/age/2", "/age/0.01"]
    pruned = entries[2]
    assert (pruned.operation, pruned.outcome, pruned.token_name) == ("audit.prune", "ok", None)
    assert pruned.target is not None and pruned.target.startswith("2 rows before ")
    assert len(entries) == 3
    assert AuditLog(store.engine, retention=DAY).prune() == 1  # the 2-day-old row
    assert AuditLog(store.engine).prune() == 0  # no retention: nothing is ever deleted


def test_the_database_refuses_any_update_and_a_delete_of_a_recent_row(store: Store) -> None:
    _seed(store, 30, 0.5)
    table = tokens.audit_log
    for statement in (
        sa.update(table).values(outcome="ok-ish"),
        sa.update(table).where(table.c.target == "/age/30").values(outcome="ok-ish"),
        sa.delete(table).where(table.c.target == "/age/0.5"),
        sa.delete(table),
    ):
        with pytest.raises(SQLAlchemyError), store.engine.begin() as conn:
            conn.execute(statement)
    assert _targets(store) == ["/age/30", "/age/0.5"]
    # A row older than a day is what a retention may remove, by the job or by hand.
    with store.engine.begin() as conn:
        assert conn.execute(sa.delete(table).where(table.c.target == "/age/30")).rowcount == 1
    assert _targets(store) == ["/age/0.5"]


def test_a_retention_shorter_than_the_databases_floor_is_refused() -> None:
    assert Settings.from_env({"HEADWATER_AUDIT_RETENTION": "90d"}).audit_retention == 90 * DAY
    assert Settings.from_env({"HEADWATER_AUDIT_RETENTION": "2w"}).audit_retention == 14 * DAY
    assert Settings.from_env({"HEADWATER_AUDIT_RETENTION": "36h"}).audit_retention == 1.5 * DAY
    with pytest.raises(ConfigError, match="at least 1d"):
        Settings.from_env({"HEADWATER_AUDIT_RETENTION": "12h"})
    for bad in ("ninety days", "-3d", "0", "d"):
        with pytest.raises(ConfigError, match="HEADWATER_AUDIT_RETENTION"):
            Settings.from_env({"HEADWATER_AUDIT_RETENTION": bad})


def test_the_server_prunes_on_a_timer(make_client: Any, store: Store) -> None:
    _seed(store, 100, 0.1)
    make_client(audit_retention=30 * DAY)  # the audit thread prunes when it starts
    deadline = time.monotonic() + 10
    while "/age/100" in _targets(store) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "/age/100" not in _targets(store)
    assert "/age/0.1" in _targets(store)


def test_reads_are_audited_only_when_asked(make_client: Any, store: Store) -> None:
    secret, _ = tokens.create_token(store.engine, "analyst", ["read"])
    admin_secret, _ = tokens.create_token(store.engine, "ops", ["admin"])
    reader = {"Authorization": f"Bearer {secret}"}
    admin = {"Authorization": f"Bearer {admin_secret}"}

    quiet = make_client()
    assert quiet.get("/api/v1/namespaces", headers=reader).status_code == 200
    assert quiet.get("/api/v2/audit", headers=admin).json()["entries"] == []

    loud = make_client(audit_reads=True)
    assert loud.get("/api/v1/namespaces", headers=reader).status_code == 200
    assert loud.get("/api/v1/namespaces/nowhere", headers=reader).status_code == 404
    assert loud.get("/api/v1/health").status_code == 200  # needs no scope: never audited
    assert loud.get("/lineage").status_code in (200, 404)  # the UI shell, likewise
    entries = loud.get("/api/v2/audit", headers=admin).json()["entries"]
    seen = [(e["tokenName"], e["operation"], e["target"], e["outcome"], e["status"])
            for e in entries]
    assert seen == [
        ("analyst", "read", "/api/v1/namespaces", "ok", 200),
        ("analyst", "read", "/api/v1/namespaces/nowhere", "failed", 404),
    ]
    # The read of the audit log itself is audited too, from the next page on.
    again = loud.get("/api/v2/audit", headers=admin).json()["entries"]
    assert again[-1]["operation"] == "audit.read" and again[-1]["tokenName"] == "ops"


@pytest.mark.live
def test_each_kind_of_event_is_audited_by_a_live_server(db_url: str, tmp_path: Path) -> None:
    store = Store.open(db_url, migrate=True)
    try:
        admin, _ = tokens.create_token(store.engine, "ops", ["admin"])
        ingest, _ = tokens.create_token(store.engine, "spark", ["ingest"])
        reader, _ = tokens.create_token(store.engine, "analyst", ["read"])
        _seed(store, 45)
    finally:
        store.close()
    audit_file = tmp_path / "audit.jsonl"

    def bearer(secret: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {secret}"}

    with running_server("--db", db_url, "--audit-reads", "--audit-retention", "30d",
                        "--audit-file", str(audit_file)) as url, \
            httpx.Client(base_url=url) as client:
        assert client.post("/api/v1/lineage", json=run_event(),
                           headers=bearer(ingest)).status_code == 200
        assert client.post("/api/v1/lineage/batch", json=[run_event()],
                           headers=bearer(ingest)).status_code == 200
        assert client.put("/api/v1/namespaces/team", json={"ownerName": "me"},
                          headers=bearer(admin)).status_code == 200
        assert client.put("/api/v1/tags/pii", json={}, headers=bearer(admin)).status_code == 200
        assert client.delete("/api/v1/namespaces/retail/jobs/orders_daily",
                             headers=bearer(admin)).status_code == 200
        assert client.post("/api/v2/tokens", json={"name": "new", "scopes": ["read"]},
                           headers=bearer(admin)).status_code == 201
        assert client.delete("/api/v2/tokens/new", headers=bearer(admin)).status_code == 200
        assert client.get("/api/v2/tokens", headers=bearer(admin)).status_code == 200
        assert client.get("/api/v1/namespaces", headers=bearer(reader)).status_code == 200
        assert client.get("/api/v1/namespaces", headers=bearer(ingest)).status_code == 403
        for _ in range(12):  # past the 10 refusal rows a client gets per minute
            assert client.get("/api/v1/namespaces").status_code == 401
        assert client.get("/api/v2/audit", headers=bearer(admin)).status_code == 200
    # Read after the server stopped: shutdown writes what was queued, the count included.
    store = Store.open(db_url)
    try:
        entries = tokens.read_audit(store.engine, limit=1000)
    finally:
        store.close()
    kinds = {(e.operation, e.outcome) for e in entries}
    assert kinds >= {
        ("ingest", "ok"), ("ingest.batch", "ok"), ("write", "ok"), ("tag", "ok"),
        ("delete", "ok"), ("token.create", "ok"), ("token.revoke", "ok"), ("token.read", "ok"),
        ("read", "ok"), ("read", "unauthenticated"), ("read", "forbidden"),
        ("auth", "refused (rate-limited)"), ("audit.read", "ok"), ("audit.prune", "ok"),
    }, sorted(kinds)
    summary = next(e for e in entries if e.outcome == "refused (rate-limited)")
    assert summary.count == 3  # 13 refusals: 10 rows, then one row counting the rest
    assert "/age/45" not in {e.target for e in entries}
    mirrored = [json.loads(line) for line in audit_file.read_text().splitlines()]
    # Every row this server wrote (the seeded one was pruned), in the file too.
    assert [(m["operation"], m["target"]) for m in mirrored] == [
        (e.operation, e.target) for e in entries]
