"""datasets.revision, jobs.revision and record_epoch: what a record's JSON is valid for

The server keeps each dataset's and job's Marquez record as JSON and reuses it
while the record's rows are unchanged. The write path counts ``revision`` on
the rows whose record a write may change, and ``record_epoch`` (one row) on
writes outside the event write path that may change any record
(``headwater.store.revisions``). Stored rows start at 0: no server process
keeps records across an upgrade.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 23:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


# Plain ALTER TABLE on both databases: a batch operation would copy the tables
# (other tables' foreign keys point at them).
def upgrade() -> None:
    for table in ("datasets", "jobs"):
        op.add_column(
            table, sa.Column("revision", sa.BigInteger(), nullable=False, server_default="0")
        )
    op.create_table(
        "record_epoch",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_record_epoch")),
    )


def downgrade() -> None:
    op.drop_table("record_epoch")
    for table in ("jobs", "datasets"):
        op.drop_column(table, "revision")
