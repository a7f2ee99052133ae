"""job_current_io: each job's current inputs and outputs, for table lineage

Table lineage found a dataset's producing and reading jobs through every run
that wrote or read it; this table holds the current version's inputs and
outputs per job instead (see ``headwater.store.current_io``). The upgrade
fills it from each job's latest run, the run that defines the job's current
version.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 13:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# The tables as this revision knows them (not headwater.store.tables, which moves on).
_jobs = sa.table("jobs", sa.column("id", sa.Integer()))
_runs = sa.table(
    "runs",
    sa.column("uuid", sa.Text()),
    sa.column("job_id", sa.Integer()),
    sa.column("created_at", sa.DateTime()),
)


def _link(name: str) -> sa.TableClause:
    return sa.table(name, sa.column("run_uuid", sa.Text()), sa.column("dataset_id", sa.Integer()))


def _backfill(current_io: sa.Table) -> None:
    latest_run = (
        sa.select(_runs.c.uuid)
        .where(_runs.c.job_id == _jobs.c.id)
        .order_by(_runs.c.created_at.desc(), _runs.c.uuid.desc())
        .limit(1)
        .correlate(_jobs)
        .scalar_subquery()
    )
    for direction, link in (("input", _link("run_inputs")), ("output", _link("run_outputs"))):
        rows = (
            sa.select(_jobs.c.id, sa.literal(direction, sa.String(6)), link.c.dataset_id)
            .select_from(_jobs)
            .join(link, link.c.run_uuid == latest_run)
        )
        op.execute(current_io.insert().from_select(["job_id", "direction", "dataset_id"], rows))


def upgrade() -> None:
    current_io = op.create_table(
        "job_current_io",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("direction", sa.String(length=6), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name=op.f("fk_job_current_io_dataset_id_datasets")
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_current_io_job_id_jobs")
        ),
        sa.PrimaryKeyConstraint(
            "job_id", "direction", "dataset_id", name=op.f("pk_job_current_io")
        ),
    )
    _backfill(current_io)
    # Built after the backfill: one sort instead of an index update per row.
    op.create_index(
        "ix_job_current_io_dataset_id_direction_job_id",
        "job_current_io",
        ["dataset_id", "direction", "job_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_job_current_io_dataset_id_direction_job_id", table_name="job_current_io")
    op.drop_table("job_current_io")
