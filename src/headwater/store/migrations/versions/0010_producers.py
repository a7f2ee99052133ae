"""producer_hours, producer_agents: per-producer arrivals, refusals and emission figures

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 13:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "producer_hours",
        sa.Column("producer", sa.Text(), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("hour", sa.DateTime(), nullable=False),
        sa.Column("events", sa.BigInteger(), nullable=False),
        sa.Column("rejected", sa.BigInteger(), nullable=False),
        sa.Column("last_seen", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("producer", "namespace", "hour", name=op.f("pk_producer_hours")),
    )
    op.create_index("ix_producer_hours_hour", "producer_hours", ["hour"])
    op.create_table(
        "producer_agents",
        sa.Column("producer", sa.Text(), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("run_uuid", sa.Text(), nullable=False),
        sa.Column("event_time", sa.DateTime(), nullable=False),
        sa.Column("event_hash", sa.String(64), nullable=False),
        sa.Column("figures", _JSON, nullable=False),
        sa.PrimaryKeyConstraint("producer", "namespace", name=op.f("pk_producer_agents")),
    )


def downgrade() -> None:
    op.drop_table("producer_agents")
    op.drop_index("ix_producer_hours_hour", table_name="producer_hours")
    op.drop_table("producer_hours")
