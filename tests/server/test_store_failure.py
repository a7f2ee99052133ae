"""When the database fails, writes answer 503 (retriable) and nothing is half-written."""

from __future__ import annotations

import json
import os

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.server.events import run_event

pytestmark = pytest.mark.postgres


def drop_database(url: str) -> None:
    """Really take the database away: end its sessions, then drop it."""
    parsed = make_url(url)
    admin = f"host={parsed.host} port={parsed.port} user={parsed.username} dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            (parsed.database,),
        )
        conn.execute(f'DROP DATABASE "{parsed.database}" WITH (FORCE)')


def test_database_gone_is_a_retriable_503(pg_url: str) -> None:
    if os.environ.get("HEADWATER_TEST_PG_URL"):
        pytest.skip("drops its database; never run against a shared external server")
    store = Store.open(pg_url, migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            headers = {"Content-Type": "application/json"}
            assert client.post("/api/v1/lineage", content=json.dumps(run_event()),
                               headers=headers).status_code == 200
            drop_database(pg_url)

            single = client.post("/api/v1/lineage", content=json.dumps(run_event()),
                                 headers=headers)
            assert single.status_code == 503, single.text
            assert single.json()["retriable"] is True
            assert "database" in single.json()["error"]

            batch = client.post("/api/v1/lineage/batch",
                                content=json.dumps([run_event(), run_event()]), headers=headers)
            assert batch.status_code == 503, batch.text

            # Bad input is still judged before the store is touched.
            bad = client.post("/api/v1/lineage", content=b"{", headers=headers)
            assert bad.status_code == 400
            assert client.get("/api/v1/health").status_code == 200
    finally:
        store.close()
