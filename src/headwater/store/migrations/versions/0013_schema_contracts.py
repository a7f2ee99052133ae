"""schema_contracts: consumers' declared schemas against the schema their dataset is written with

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 14:45:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
# The tables as this revision knows them (not headwater.store.tables, which moves on).
_facets = sa.table(
    "facets",
    sa.column("kind", sa.String()),
    sa.column("subject", sa.Text()),
    sa.column("run_uuid", sa.Text()),
    sa.column("name", sa.Text()),
    sa.column("payload", _JSON),
    sa.column("event_time", sa.DateTime()),
)
_runs = sa.table("runs", sa.column("uuid", sa.Text()), sa.column("job_id", sa.Integer()))
_datasets = sa.table(
    "datasets",
    sa.column("id", sa.Integer()),
    sa.column("namespace_id", sa.Integer()),
    sa.column("name", sa.Text()),
)
_namespaces = sa.table("namespaces", sa.column("id", sa.Integer()), sa.column("name", sa.Text()))
_versions = sa.table(
    "dataset_versions",
    sa.column("dataset_id", sa.Integer()),
    sa.column("uuid", sa.String(36)),
    sa.column("updated_at", sa.DateTime()),
    sa.column("fields", _JSON),
)


def _backfill(contracts: sa.Table) -> None:
    """The contract rows of the declarations already stored."""
    # The comparison is pure Python (graph.contract), so this cannot be one INSERT ... SELECT.
    from headwater.store.contract import contract_row

    conn = op.get_bind()
    f, r = _facets.c, _runs.c
    declarations: dict[tuple[str, int], dict[str, Any]] = {}
    for row in conn.execute(
        sa.select(f.subject, f.payload, f.event_time, r.uuid, r.job_id)
        .join(_runs, r.uuid == f.run_uuid)
        .where(f.kind == "input", f.name == "declaredSchema")
    ):
        fields = row.payload.get("fields") if isinstance(row.payload, dict) else None
        candidate = {
            "run_uuid": row.uuid,
            "declared_at": row.event_time,
            "declared": fields if isinstance(fields, list) else [],
        }
        best = declarations.get((row.subject, row.job_id))
        if best is None or (row.event_time, row.uuid) > (best["declared_at"], best["run_uuid"]):
            declarations[row.subject, row.job_id] = candidate
    if not declarations:
        return
    ids = {
        f"dataset:{ns}:{name}": dataset_id
        for dataset_id, ns, name in conn.execute(
            sa.select(_datasets.c.id, _namespaces.c.name, _datasets.c.name).join(
                _namespaces, _namespaces.c.id == _datasets.c.namespace_id
            )
        )
    }
    v = _versions.c
    latest: dict[int, Any] = {}
    for version in conn.execute(
        sa.select(v.dataset_id, v.uuid, v.updated_at, v.fields)
        .where(v.fields.is_not(None))
        .order_by(v.dataset_id, v.updated_at, v.uuid)
    ):
        latest[version.dataset_id] = version
    rows = [
        contract_row(ids[subject], job_id, declared, latest.get(ids[subject]))
        for (subject, job_id), declared in sorted(declarations.items())
        if subject in ids
    ]
    if rows:
        conn.execute(contracts.insert(), rows)


def upgrade() -> None:
    contracts = op.create_table(
        "schema_contracts",
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("run_uuid", sa.Text(), nullable=False),
        sa.Column("declared_at", sa.DateTime(), nullable=False),
        sa.Column("declared", _JSON, nullable=False),
        sa.Column("version_uuid", sa.String(36), nullable=True),
        sa.Column("written_at", sa.DateTime(), nullable=True),
        sa.Column("changed_at", sa.DateTime(), nullable=False),
        sa.Column("differs", sa.Boolean(), nullable=False),
        sa.Column("breaking", sa.Boolean(), nullable=False),
        sa.Column("changes", _JSON, nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name="fk_schema_contracts_dataset_id_datasets"
        ),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name="fk_schema_contracts_job_id_jobs"),
        sa.PrimaryKeyConstraint("dataset_id", "job_id", name="pk_schema_contracts"),
    )
    _backfill(contracts)
    op.create_index(
        "ix_schema_contracts_differs_changed_at", "schema_contracts", ["differs", "changed_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_schema_contracts_differs_changed_at", table_name="schema_contracts")
    op.drop_table("schema_contracts")
