"""classification: tag_definitions, propagation_blocks, owners

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26 10:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tag_definitions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("propagates", sa.Boolean(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tag_definitions")),
        sa.UniqueConstraint("name", name=op.f("uq_tag_definitions_name")),
    )
    op.create_table(
        "propagation_blocks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("job", sa.Text(), nullable=False),
        sa.Column("source_field", sa.Text(), nullable=True),
        sa.Column("target_field", sa.Text(), nullable=True),
        sa.Column("tag", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("removed_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_propagation_blocks")),
    )
    op.create_table(
        "owners",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_owners")),
        sa.UniqueConstraint("subject", "name", "type", name=op.f("uq_owners_subject_name_type")),
    )


def downgrade() -> None:
    op.drop_table("owners")
    op.drop_table("propagation_blocks")
    op.drop_table("tag_definitions")
