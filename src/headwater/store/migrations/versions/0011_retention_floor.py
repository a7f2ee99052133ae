"""retention_floor: the event time before which retention deleted runs and raw events

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 14:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "retention_floor",
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("floor", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_retention_floor")),
    )


def downgrade() -> None:
    op.drop_table("retention_floor")
