"""dataset_drifts: schema changes between consecutive versions of a dataset

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 00:35:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
# The table as this revision knows it (not headwater.store.tables, which moves on).
_versions = sa.table(
    "dataset_versions",
    sa.column("dataset_id", sa.Integer()),
    sa.column("uuid", sa.String(36)),
    sa.column("updated_at", sa.DateTime()),
    sa.column("fields", _JSON),
)


def _backfill(drifts: sa.Table) -> None:
    """The drift rows of the versions already stored, each dataset's chain in order."""
    # The diff is pure Python (graph.drift), so this cannot be one INSERT ... SELECT.
    from headwater.graph.drift import diff_schemas

    v = _versions.c
    ordered = sa.select(v.dataset_id, v.uuid, v.updated_at, v.fields).where(
        v.fields.is_not(None)).order_by(v.dataset_id, v.updated_at, v.uuid)
    conn = op.get_bind()
    rows: list[dict[str, Any]] = []
    previous = None
    for version in conn.execute(ordered).all():
        if previous is not None and previous.dataset_id == version.dataset_id:
            drift = diff_schemas(previous.fields, version.fields)
            if drift:
                rows.append({"dataset_id": version.dataset_id, "version_uuid": version.uuid,
                             "previous_version_uuid": previous.uuid,
                             "changed_at": version.updated_at, "breaking": drift.breaking,
                             "changes": [change.as_dict() for change in drift.changes]})
        previous = version
        if len(rows) >= 1000:
            conn.execute(drifts.insert(), rows)
            rows = []
    if rows:
        conn.execute(drifts.insert(), rows)


def upgrade() -> None:
    drifts = op.create_table(
        "dataset_drifts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("version_uuid", sa.String(36), nullable=False),
        sa.Column("previous_version_uuid", sa.String(36), nullable=False),
        sa.Column("changed_at", sa.DateTime(), nullable=False),
        sa.Column("breaking", sa.Boolean(), nullable=False),
        sa.Column("changes", _JSON, nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"],
                                name="fk_dataset_drifts_dataset_id_datasets"),
        sa.PrimaryKeyConstraint("id", name="pk_dataset_drifts"),
        sa.UniqueConstraint("version_uuid", name="uq_dataset_drifts_version_uuid"),
    )
    _backfill(drifts)
    # Built after the backfill: one sort instead of an index update per row.
    op.create_index("ix_dataset_drifts_changed_at", "dataset_drifts", ["changed_at"])
    op.create_index("ix_dataset_drifts_dataset_id_changed_at", "dataset_drifts",
                    ["dataset_id", "changed_at"])


def downgrade() -> None:
    op.drop_index("ix_dataset_drifts_dataset_id_changed_at", table_name="dataset_drifts")
    op.drop_index("ix_dataset_drifts_changed_at", table_name="dataset_drifts")
    op.drop_table("dataset_drifts")
