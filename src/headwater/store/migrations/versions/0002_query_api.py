"""query API: soft deletes, namespace/source metadata, read-path indexes

Soft deletes (Marquez's DELETE of a namespace, dataset or job) keep the row and
set ``deleted_at``; reads hide it while ``updated_at <= deleted_at``. Namespaces
get the owner and description and sources the type and description that only
Marquez's PUT endpoints set. The indexes serve read queries that EXPLAIN showed
scanning (see each one's comment).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("namespaces", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner_name", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("description", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("deleted_at", sa.DateTime(), nullable=True))
        batch_op.create_index("ix_namespaces_deleted_at", ["deleted_at"], unique=False)
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.add_column(sa.Column("type", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("description", sa.Text(), nullable=True))
    # "Was anything ever deleted?" is an index probe, so lineage walks on a store
    # without deletes pay nothing for hiding.
    for table in ("datasets", "jobs"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("deleted_at", sa.DateTime(), nullable=True))
            batch_op.create_index(f"ix_{table}_deleted_at", ["deleted_at"], unique=False)
    # A run's children in page order: with ix_runs_parent_run_uuid alone SQLite's
    # planner scanned runs to avoid sorting.
    op.create_index(
        "ix_runs_parent_run_uuid_created_at", "runs", ["parent_run_uuid", "created_at", "uuid"]
    )
    # The readers of a dataset version: run inputs of the dataset within a time window,
    # which ix_run_inputs_dataset_id answers by reading every reader of the dataset.
    op.create_index(
        "ix_run_inputs_dataset_id_created_at", "run_inputs", ["dataset_id", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_run_inputs_dataset_id_created_at", table_name="run_inputs")
    op.drop_index("ix_runs_parent_run_uuid_created_at", table_name="runs")
    # ALTER TABLE ... DROP COLUMN in place (SQLite >= 3.35), never a copy of the table:
    # copying a table that other tables' rows point at fails their foreign keys.
    for table in ("jobs", "datasets"):
        with op.batch_alter_table(table, schema=None, recreate="never") as batch_op:
            batch_op.drop_index(f"ix_{table}_deleted_at")
            batch_op.drop_column("deleted_at")
    with op.batch_alter_table("sources", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("description")
        batch_op.drop_column("type")
    with op.batch_alter_table("namespaces", schema=None, recreate="never") as batch_op:
        batch_op.drop_index("ix_namespaces_deleted_at")
        batch_op.drop_column("deleted_at")
        batch_op.drop_column("description")
        batch_op.drop_column("owner_name")
