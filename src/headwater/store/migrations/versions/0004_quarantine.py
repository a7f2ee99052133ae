"""quarantine: the events the write path refused, with the reason

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 00:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quarantine",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("payload_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("field", sa.Text(), nullable=True),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("times_seen", sa.Integer(), nullable=False),
        sa.Column("first_received_at", sa.DateTime(), nullable=False),
        sa.Column("last_received_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_quarantine_last_received_at", "quarantine", ["last_received_at"])


def downgrade() -> None:
    op.drop_index("ix_quarantine_last_received_at", table_name="quarantine")
    op.drop_table("quarantine")
