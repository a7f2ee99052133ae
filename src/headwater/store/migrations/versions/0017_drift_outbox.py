"""drift_outbox: drifts waiting for the drift webhook

The write transaction that writes or changes a drift row also queues its key
here, so a drift is delivered even when the webhook's receiver is down or the
server stops between the commit and the delivery. Drifts already stored are not
queued: a webhook announces what changes from now on.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 17:05:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "drift_outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("drift_key", sa.Text(), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drift_outbox")),
        sa.UniqueConstraint("drift_key", name=op.f("uq_drift_outbox_drift_key")),
    )
    with op.batch_alter_table("drift_outbox", schema=None) as batch_op:
        batch_op.create_index(
            "ix_drift_outbox_next_attempt_at", ["next_attempt_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("drift_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_drift_outbox_next_attempt_at")
    op.drop_table("drift_outbox")
