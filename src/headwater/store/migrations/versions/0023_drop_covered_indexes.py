"""drop_covered_indexes: single-column indexes a wider index already leads with

``ix_run_inputs_dataset_id`` is the first column of
``ix_run_inputs_dataset_id_created_at`` and ``ix_runs_parent_run_uuid`` the
first column of ``ix_runs_parent_run_uuid_created_at``: every search the
narrow index answers (equality on the column, a dataset's delete checking
``run_inputs``' foreign key) the wider one answers too, while each inserted run
or run input writes a page of both. Dropping them leaves one index to keep
current per row.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27 06:30:00
"""

from __future__ import annotations

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

#: (index, table, its column): each the leading column of a wider index on the table.
_COVERED = (
    ("ix_run_inputs_dataset_id", "run_inputs", "dataset_id"),
    ("ix_runs_parent_run_uuid", "runs", "parent_run_uuid"),
)


def upgrade() -> None:
    for index, table, _ in _COVERED:
        op.drop_index(index, table_name=table)


def downgrade() -> None:
    for index, table, column in _COVERED:
        op.create_index(index, table, [column], unique=False)
