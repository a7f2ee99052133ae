"""Stores for tests that hold several at once: fresh databases, in-process apps, comparisons.

A property test builds two stores per example (the one under test and a
reference fed only the good events), so each needs an empty database of the
kind the test runs on: a new SQLite file, or a PostgreSQL database on the
server of ``db_url``.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from headwater.store import tables as t
from tests.store.dump import dump

__all__ = ["Databases", "comparable_dump", "open_client", "post", "stored_payloads"]


class Databases:
    """Empty databases on the server (or in the folder) of ``db_url``; :meth:`close` drops them.

    Migrating costs more than the small example that uses the store, so it
    is done once: on PostgreSQL a database is migrated once and emptied for
    each reuse, on SQLite each store gets a copy of one migrated file.
    """

    def __init__(self, db_url: str, folder: Path) -> None:
        self._url = make_url(db_url)
        self._folder = folder
        self._idle: list[str] = []
        self._created: list[str] = []

    def __enter__(self) -> Databases:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def is_postgres(self) -> bool:
        return self._url.get_backend_name() == "postgresql"

    @contextmanager
    def store(self) -> Iterator[Store]:
        """A migrated store holding nothing, closed after the block."""
        url = self._take()
        try:
            store = Store.open(url, migrate=True)
            try:
                yield store
            finally:
                store.close()
        finally:
            if self.is_postgres:
                self._idle.append(url)

    def close(self) -> None:
        """Drop every database this made."""
        if not self._created:
            return
        with self._connect(self._url.database) as conn:
            for url in self._created:
                conn.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')
        self._created.clear()
        self._idle.clear()

    def _take(self) -> str:
        name = f"iso_{uuid.uuid4().hex[:16]}"
        if not self.is_postgres:
            template = self._folder / "migrated.db"
            if not template.exists():
                Store.open(f"sqlite:///{template}", migrate=True).close()
            shutil.copyfile(template, self._folder / f"{name}.db")
            return f"sqlite:///{self._folder / name}.db"
        if not self._idle:
            # Any database of the server can create the others.
            with self._connect(self._url.database) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            url = self._url.set(database=name).render_as_string(hide_password=False)
            self._created.append(url)
            return url
        url = self._idle.pop()
        with self._connect(make_url(url).database) as conn:
            tables = [row[0] for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "AND tablename <> 'alembic_version'")]
            if tables:
                names = ", ".join(f'"{table}"' for table in tables)
                conn.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
        return url

    def _connect(self, database: str | None) -> psycopg.Connection[Any]:
        url = self._url
        return psycopg.connect(host=url.host, port=url.port, user=url.username,
                               password=url.password, dbname=database, autocommit=True)


def comparable_dump(store: Store) -> dict[str, list[str]]:
    """:func:`tests.store.dump.dump` without the rejected events' tables.

    Refused events are kept apart for inspection; what they say about arrival
    (how often, when) is no part of the lineage derived from the good ones.
    """
    return {table: rows for table, rows in dump(store).items() if "quarantine" not in table}


def stored_payloads(store: Store) -> list[dict[str, Any]]:
    """Every event of the raw log, as stored."""
    with store.engine.connect() as conn:
        return [json.loads(p) for p in conn.scalars(sa.select(t.events.c.payload))]


@contextmanager
def open_client(store: Store) -> Iterator[TestClient]:
    """An in-process app on ``store``; a server error is an answer to check, not a raise."""
    with TestClient(create_app(Settings(), store), raise_server_exceptions=False) as client:
        yield client


def post(client: httpx.Client, path: str, body: Any) -> httpx.Response:
    """POST ``body`` as JSON: NUL escaped as ``\\u0000``, any integer written, as producers do."""
    return client.post(path, content=json.dumps(body).encode(),
                       headers={"Content-Type": "application/json"})
