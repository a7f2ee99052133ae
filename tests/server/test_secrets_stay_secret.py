"""Secrets stay secret: a ``headwater -vv serve`` with debug and access logs, driven through
every kind of request (good and bad tokens, token management, a database that goes
away), never writes a token or the database password to its output, its errors, the
audit log (table and file) or ``/api/v1/health``.

On PostgreSQL the server connects as a role with a password (the throwaway cluster
trusts loopback, so the password is carried in the URL but not checked); on SQLite
there is no password and the tokens are the secrets.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.server.events import run_event
from tests.server.live import running_server_process

pytestmark = pytest.mark.live

API_KEY = "hw_apikey-" + uuid.uuid4().hex
WRONG = "hw_wrong-" + uuid.uuid4().hex
PASSWORD = "pw-" + uuid.uuid4().hex


def _with_password(db_url: str) -> str:
    """``db_url`` as a new role holding PASSWORD (PostgreSQL); unchanged for SQLite."""
    url = make_url(db_url)
    if url.get_backend_name() != "postgresql":
        return db_url
    role = f"hw_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname=url.database,
                         autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        conn.execute(f'GRANT ALL ON DATABASE "{url.database}" TO {role}')
        conn.execute(f"GRANT ALL ON SCHEMA public TO {role}")
        conn.execute(f"ALTER DATABASE \"{url.database}\" OWNER TO {role}")
    return url.set(username=role, password=PASSWORD).render_as_string(hide_password=False)


def test_no_secret_reaches_logs_errors_audit_or_health(db_url: str, tmp_path: Path) -> None:
    url = _with_password(db_url)
    audit_file = tmp_path / "audit.jsonl"
    log_path = tmp_path / "server.log"
    made: list[str] = []
    with log_path.open("w+b") as output, running_server_process(
        "--db", url, "--api-key", API_KEY, "--log-level", "debug", "--access-log",
        "--audit-file", str(audit_file), "--audit-reads", output=output, cli_args=("-vv",),
    ) as (base, _process), httpx.Client(base_url=base) as client:
        def send(method: str, path: str, secret: str | None, body: object = None
                 ) -> httpx.Response:
            headers = {"Authorization": f"Bearer {secret}"} if secret else {}
            return client.request(method, path, json=body, headers=headers)

        # The server migrated the empty database itself, logging each step at debug level.
        admin = send("POST", "/api/v2/tokens", API_KEY,
                     {"name": "ops", "scopes": ["admin"]}).json()["secret"]
        ingest = send("POST", "/api/v2/tokens", API_KEY,
                      {"name": "spark", "scopes": ["ingest"]}).json()["secret"]
        assert send("POST", "/api/v1/lineage", ingest, run_event()).status_code == 200
        assert send("POST", "/api/v1/lineage/batch", API_KEY, [run_event()]).status_code == 200
        assert send("POST", "/api/v1/lineage", WRONG, run_event()).status_code == 401
        assert send("GET", "/api/v1/namespaces", ingest).status_code == 403
        assert send("GET", "/api/v1/namespaces", admin).status_code == 403
        assert send("POST", "/api/v1/lineage", ingest, {"not": "an event"}).status_code == 400
        created = send("POST", "/api/v2/tokens", admin, {"name": "new", "scopes": ["read"]})
        assert created.status_code == 201
        made.append(created.json()["secret"])
        assert send("GET", "/api/v1/namespaces", made[0]).status_code == 200
        assert send("DELETE", "/api/v2/tokens/new", admin).status_code == 200
        assert send("GET", "/api/v1/namespaces", made[0]).status_code == 401
        assert send("GET", f"/api/v1/search?q={WRONG}", API_KEY).status_code == 200
        health = send("GET", "/api/v1/health", None)
        audit = send("GET", "/api/v2/audit?limit=1000", API_KEY)
        assert audit.status_code == 200 and len(audit.json()["entries"]) >= 10
    secrets = {"api key": API_KEY, "admin token": admin, "ingest token": ingest,
               "created token": made[0], "wrong token": WRONG, "password": PASSWORD}
    log = log_path.read_text(errors="replace")
    # The access log and -vv's debug log were on: there was output to check.
    assert "GET /api/v1/namespaces" in log and " DEBUG alembic" in log
    places = {"server output": log, "health": health.text, "audit API": audit.text,
              "audit file": audit_file.read_text()}
    # The search query names WRONG on purpose: a query string is the client's to keep out
    # of logs; the access log shows it as sent. Everything else must hold none.
    places["server output"] = log.replace(f"q={WRONG}", "q=<query>")
    for place, text in places.items():
        for name, secret in secrets.items():
            assert secret not in text, f"the {name} is in the {place}"
            assert secret[:16] not in text, f"a prefix of the {name} is in the {place}"


@pytest.mark.postgres
def test_a_database_error_does_not_print_the_password(pg_url: str) -> None:
    url = make_url(_with_password(pg_url))
    unreachable = url.set(port=1).render_as_string(hide_password=False)
    run = subprocess.run(
        [sys.executable, "-m", "headwater", "-vv", "serve", "--db", unreachable,
         "--host", "127.0.0.1", "--port", "0"],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode != 0
    output = run.stdout + run.stderr
    assert "***" in output  # the URL is shown, redacted
    assert PASSWORD not in output, output[-2000:]
    for command in (["export", "--db", unreachable], ["audit", "--db", unreachable],
                    ["token", "list", "--db", unreachable]):
        run = subprocess.run([sys.executable, "-m", "headwater", "-vv", *command],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode != 0, command
        assert PASSWORD not in run.stdout + run.stderr, (command, run.stderr[-2000:])
