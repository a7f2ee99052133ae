"""column_fingerprints: each job's output columns with their fingerprint digests

Duplicate work (``GET /api/v2/duplicates``) finds candidate pairs of jobs by
equal fingerprint keys through an index on ``key_hash`` instead of reading every
column edge per request. The rows are filled here from the edges already stored;
the write path keeps them from then on (``headwater.store.fingerprints``).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26 23:55:00
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

# The tables as this revision knows them (not headwater.store.tables, which moves on).
_cl = sa.table(
    "column_lineage",
    sa.column("source_dataset_id", sa.Integer()),
    sa.column("source_field", sa.Text()),
    sa.column("target_dataset_id", sa.Integer()),
    sa.column("target_field", sa.Text()),
    sa.column("transformation_type", sa.Text()),
    sa.column("transformation_subtype", sa.Text()),
    sa.column("run_uuid", sa.Text()),
)
_runs = sa.table("runs", sa.column("uuid", sa.Text()), sa.column("job_id", sa.Integer()))
_datasets = sa.table(
    "datasets",
    sa.column("id", sa.Integer()),
    sa.column("namespace_id", sa.Integer()),
    sa.column("name", sa.Text()),
)
_namespaces = sa.table("namespaces", sa.column("id", sa.Integer()), sa.column("name", sa.Text()))


def _edges(conn: sa.Connection) -> Iterator[tuple[int, int, str, Any]]:
    from headwater.graph.duplicates import ColumnInput

    query = (
        sa.select(
            _runs.c.job_id,
            _cl.c.target_dataset_id,
            _cl.c.target_field,
            _namespaces.c.name.label("namespace"),
            _datasets.c.name,
            _cl.c.source_field,
            _cl.c.transformation_type,
            _cl.c.transformation_subtype,
        )
        .select_from(_cl.join(_runs, _runs.c.uuid == _cl.c.run_uuid))
        .join(_datasets, _datasets.c.id == _cl.c.source_dataset_id)
        .join(_namespaces, _namespaces.c.id == _datasets.c.namespace_id)
    )
    for row in conn.execute(query):
        source = f"dataset:{row.namespace}:{row.name}"
        yield (
            row.job_id,
            row.target_dataset_id,
            row.target_field,
            ColumnInput(
                source, row.source_field, row.transformation_type, row.transformation_subtype
            ),
        )


def _backfill(table: sa.Table) -> None:
    # The fingerprint is pure Python (graph.duplicates), so this cannot be one INSERT ... SELECT.
    from headwater.graph.duplicates import columns_of, fingerprints, key_digest, print_digest

    conn = op.get_bind()
    # Ids stand in for node ids here: only the sources' names enter the digests.
    columns = columns_of((str(j), str(d), f, item) for j, d, f, item in _edges(conn))
    rows = [
        {
            "dataset_id": int(column.dataset),
            "field": column.field,
            "job_id": int(column.job),
            "key_hash": key_digest(fp),
            "print_hash": print_digest(fp),
        }
        for column, fp in fingerprints(columns).items()
    ]
    for start in range(0, len(rows), 5000):
        conn.execute(table.insert(), rows[start : start + 5000])


def upgrade() -> None:
    table = op.create_table(
        "column_fingerprints",
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("field", sa.Text(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("key_hash", sa.BigInteger(), nullable=False),
        sa.Column("print_hash", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name=op.f("fk_column_fingerprints_dataset_id_datasets")
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_column_fingerprints_job_id_jobs")
        ),
        sa.PrimaryKeyConstraint(
            "dataset_id", "field", "job_id", name=op.f("pk_column_fingerprints")
        ),
    )
    _backfill(table)
    # Built after the backfill: one sort instead of an index update per row.
    with op.batch_alter_table("column_fingerprints", schema=None) as batch_op:
        batch_op.create_index(
            "ix_column_fingerprints_key_hash_job_id", ["key_hash", "job_id"], unique=False
        )
        batch_op.create_index("ix_column_fingerprints_job_id", ["job_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("column_fingerprints", schema=None) as batch_op:
        batch_op.drop_index("ix_column_fingerprints_job_id")
        batch_op.drop_index("ix_column_fingerprints_key_hash_job_id")
    op.drop_table("column_fingerprints")
