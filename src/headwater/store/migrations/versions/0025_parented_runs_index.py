"""parented_runs_index: index only the runs that have a parent

``ix_runs_parent_run_uuid_created_at`` becomes partial, ``WHERE parent_run_uuid IS
NOT NULL``. Every search of it names a parent (``=``/``IN`` a run id, ``IS NOT
NULL``), which both databases prove implies the predicate. Most runs have no
parent, so inserting one writes no entry; and on a full index SQLite's
``ANALYZE`` records every parentless run as one value of the column (``20000
20000`` for 20,000 runs), which makes its planner scan ``runs`` for the write
path's "runs whose parent is in this batch" instead of searching the index.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-27 06:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

_NAME = "ix_runs_parent_run_uuid_created_at"
_COLUMNS = ["parent_run_uuid", "created_at", "uuid"]


def upgrade() -> None:
    op.drop_index(_NAME, table_name="runs")
    parented = sa.text("parent_run_uuid IS NOT NULL")
    op.create_index(
        _NAME, "runs", _COLUMNS, unique=False, postgresql_where=parented, sqlite_where=parented
    )


def downgrade() -> None:
    op.drop_index(_NAME, table_name="runs")
    op.create_index(_NAME, "runs", _COLUMNS, unique=False)
