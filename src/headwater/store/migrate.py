"""Run the Alembic chain shipped in ``migrations/`` against a Store's engine.

No ``alembic.ini`` is needed: the configuration is built here and the open
connection is handed to ``migrations/env.py`` through ``Config.attributes``.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from headwater.errors import StoreError
from headwater.store.checkpoint import truncate_large_wal
from headwater.store.statistics import refresh_statistics
from headwater.store.transactions import write_lock_path

__all__ = ["check_current", "current_revision", "downgrade", "head_revision", "upgrade"]

MIGRATIONS = Path(__file__).parent / "migrations"


def _config(connection: sa.Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    with engine.begin() as conn:
        before = MigrationContext.configure(conn).get_current_revision()
        command.upgrade(_config(conn), revision)
        migrated = MigrationContext.configure(conn).get_current_revision() != before
    if migrated:
        # The migrations ran in one transaction; one that indexed or filled a
        # big table left a WAL that size, which the first write would cut down.
        truncate_large_wal(engine)
        if write_lock_path(engine) is not None and engine.url.database:
            # A fresh or upgraded SQLite file starts with planner statistics.
            refresh_statistics(engine.url.database)


def downgrade(engine: sa.Engine, revision: str) -> None:
    with engine.begin() as conn:
        command.downgrade(_config(conn), revision)


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_config()).get_current_head()


def current_revision(engine: sa.Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def check_current(engine: sa.Engine) -> None:
    """Raise StoreError unless the database is at the newest revision."""
    current, head = current_revision(engine), head_revision()
    if current != head:
        raise StoreError(
            f"database is at revision {current!r}, headwater needs {head!r}; "
            "open it with migrate=True (or run the upgrade) first"
        )
