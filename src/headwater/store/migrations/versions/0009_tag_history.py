"""tag_history: tag definitions and API tag assignments as they were, for as-of answers

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history = op.create_table(
        "tag_history",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("tag", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("propagates", sa.Boolean(), nullable=True),
        sa.Column("valid_from", sa.DateTime(), nullable=False),
        sa.Column("valid_to", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tag_history")),
    )
    op.create_index(op.f("ix_tag_history_kind_tag"), "tag_history", ["kind", "tag"])
    # The definitions already made hold from their last change on.
    definitions = sa.table("tag_definitions", sa.column("name", sa.Text()),
                           sa.column("propagates", sa.Boolean()),
                           sa.column("updated_at", sa.DateTime()))
    op.execute(history.insert().from_select(
        ["kind", "tag", "subject", "propagates", "valid_from"],
        sa.select(sa.literal("definition"), definitions.c.name, sa.literal(""),
                  definitions.c.propagates, definitions.c.updated_at)))


def downgrade() -> None:
    op.drop_index(op.f("ix_tag_history_kind_tag"), table_name="tag_history")
    op.drop_table("tag_history")
