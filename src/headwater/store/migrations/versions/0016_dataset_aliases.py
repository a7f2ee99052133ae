"""dataset_aliases: the names events gave a dataset before the namespace rules

The namespace rules (store/namespace_rules.py) map every dataset name an event
carries to one spelling. ``dataset_aliases`` keeps each name as sent that a
rule changed, pointing at the dataset it became, so a client asking by the raw
name still finds it; ``namespace_rules_applied`` records the rule set the
derived tables follow, so a server started with other rules says so.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 17:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dataset_aliases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name=op.f("fk_dataset_aliases_dataset_id_datasets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset_aliases")),
        sa.UniqueConstraint("namespace", "name", name=op.f("uq_dataset_aliases_namespace_name")),
    )
    with op.batch_alter_table("dataset_aliases", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_dataset_aliases_dataset_id"), ["dataset_id"], unique=False
        )
    op.create_table(
        "namespace_rules_applied",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("applied_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_namespace_rules_applied")),
    )


def downgrade() -> None:
    op.drop_table("namespace_rules_applied")
    with op.batch_alter_table("dataset_aliases", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_dataset_aliases_dataset_id"))
    op.drop_table("dataset_aliases")
