"""The Alembic chain builds exactly ``tables.py``, and unwinds, on both databases."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from headwater.errors import StoreError
from headwater.store import Store, dialects, migrate
from headwater.store.tables import metadata


def test_upgrade_matches_tables_and_downgrade_empties(db_url: str) -> None:
    engine = dialects.create_engine(db_url)
    try:
        migrate.upgrade(engine)
        assert migrate.current_revision(engine) == migrate.head_revision()
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), metadata)
        assert diff == []
        migrate.downgrade(engine, "base")
        with engine.connect() as conn:
            left = set(sa.inspect(conn).get_table_names()) - {"alembic_version"}
        assert left == set()
        migrate.upgrade(engine)
        with engine.connect() as conn:
            assert set(sa.inspect(conn).get_table_names()) >= set(metadata.tables)
    finally:
        engine.dispose()


def test_open_without_migrate_refuses_an_old_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    try:
        Store.open(url, migrate=False)
    except StoreError as exc:
        assert "revision" in str(exc)
    else:
        raise AssertionError("an unmigrated database was accepted")
    Store.open(url).close()
    Store.open(url, migrate=False).close()


def test_open_rejects_unknown_scheme() -> None:
    try:
        Store.open("mysql://localhost/x")
    except StoreError as exc:
        assert "mysql" in str(exc)
    else:
        raise AssertionError("unsupported URL accepted")
