"""runs_page_order: ix_runs_job_id_created_at also holds uuid, the order's tie-break

A job's runs are listed and its latest run is found in (created_at, uuid) order,
newest first. With the index on (job_id, created_at) alone SQLite sorted every
run of the job for each page (a temporary B-tree: about a second at 110,000
runs of one job); with uuid in it both databases read the page off the index,
and a cursor page seeks to its place.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 14:25:00
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_NAME = "ix_runs_job_id_created_at"


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(_NAME)
        batch_op.create_index(_NAME, ["job_id", "created_at", "uuid"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(_NAME)
        batch_op.create_index(_NAME, ["job_id", "created_at"], unique=False)
