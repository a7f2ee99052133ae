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
        # compare_metadata leaves out partial indexes' predicates.
        assert _index_predicates(engine, _reflected_predicates(engine)) == {}
        migrate.downgrade(engine, "base")
        with engine.connect() as conn:
            left = set(sa.inspect(conn).get_table_names()) - {"alembic_version"}
        assert left == set()
        migrate.upgrade(engine)
        with engine.connect() as conn:
            assert set(sa.inspect(conn).get_table_names()) >= set(metadata.tables)
    finally:
        engine.dispose()


def _predicate(value: object) -> str:
    return "".join(str(value).lower().split()).strip("()") if value is not None else ""


def _reflected_predicates(engine: sa.Engine) -> dict[str, str]:
    option = f"{engine.dialect.name}_where"
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        return {
            index["name"]: _predicate(index.get("dialect_options", {}).get(option))
            for table in metadata.tables
            for index in inspector.get_indexes(table)
            if index["name"]
        }


def _index_predicates(engine: sa.Engine, reflected: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Indexes of ``tables.py`` whose predicate (partial index) differs in the database."""
    differing = {}
    for table in metadata.tables.values():
        for index in table.indexes:
            wanted = _predicate(index.dialect_options[engine.dialect.name].get("where"))
            got = reflected.get(str(index.name), "")
            if wanted != got:
                differing[str(index.name)] = (wanted, got)
    return differing


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
