"""job_declared_io: inputs and outputs declared by OpenLineage JobEvents (static lineage)

A job that never runs under a producer (a BI dashboard, a report) is declared by
a JobEvent naming its inputs and outputs: ``job_declarations`` holds the event
of each job's latest declaration, ``job_declared_io`` its datasets, and
``job_current_io`` takes them in beside those of the job's latest run. The
upgrade fills them from the JobEvents already in the raw log.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 14:45:00
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_declarations",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("declared_time", sa.DateTime(), nullable=False),
        sa.Column("declared_hash", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_declarations_job_id_jobs")
        ),
        sa.PrimaryKeyConstraint("job_id", name=op.f("pk_job_declarations")),
    )
    op.create_table(
        "job_declared_io",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("direction", sa.String(6), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name=op.f("fk_job_declared_io_dataset_id_datasets")
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_declared_io_job_id_jobs")
        ),
        sa.PrimaryKeyConstraint(
            "job_id", "direction", "dataset_id", name=op.f("pk_job_declared_io")
        ),
    )
    _fill()


def _latest_declarations(conn: sa.Connection) -> dict[tuple[str, str], dict[str, Any]]:
    """Each job's latest JobEvent naming inputs or outputs, from the raw log."""
    events = sa.table(
        "events",
        sa.column("kind"),
        sa.column("payload"),
        sa.column("event_time"),
        sa.column("event_hash"),
    )
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    query = (
        sa.select(events.c.payload, events.c.event_time, events.c.event_hash)
        .where(events.c.kind == "job")
        .order_by(events.c.event_time, events.c.event_hash)
    )
    for payload, event_time, event_hash in conn.execute(query):
        event = json.loads(payload)
        if "inputs" not in event and "outputs" not in event:
            continue
        job = event["job"]
        latest[(job["namespace"], job["name"])] = {
            "event": event,
            "time": event_time,
            "hash": event_hash,
        }
    return latest


def _id(conn: sa.Connection, table: str, namespace: str, name: str) -> int | None:
    found = conn.execute(
        sa.text(
            f"SELECT t.id FROM {table} t JOIN namespaces n ON n.id = t.namespace_id "
            "WHERE n.name = :namespace AND t.name = :name"
        ),
        {"namespace": namespace, "name": name},
    ).first()
    return None if found is None else int(found[0])


def _fill() -> None:
    conn = op.get_bind()
    for (namespace, name), declared in _latest_declarations(conn).items():
        job_id = _id(conn, "jobs", namespace, name)
        if job_id is None:
            continue
        conn.execute(
            sa.text(
                "INSERT INTO job_declarations (job_id, declared_time, declared_hash) "
                "VALUES (:job, :time, :hash)"
            ),
            {"job": job_id, "time": declared["time"], "hash": declared["hash"]},
        )
        rows = set()
        for direction in ("input", "output"):
            for item in declared["event"].get(f"{direction}s") or ():
                dataset_id = _id(conn, "datasets", item["namespace"], item["name"])
                if dataset_id is not None:
                    rows.add((direction, dataset_id))
        for direction, dataset_id in sorted(rows):
            values = {"job": job_id, "direction": direction, "dataset": dataset_id}
            conn.execute(
                sa.text(
                    "INSERT INTO job_declared_io (job_id, direction, dataset_id) "
                    "VALUES (:job, :direction, :dataset)"
                ),
                values,
            )
            conn.execute(
                sa.text(
                    "INSERT INTO job_current_io (job_id, direction, dataset_id) "
                    "SELECT CAST(:job AS INTEGER), CAST(:direction AS VARCHAR(6)), "
                    "CAST(:dataset AS INTEGER) WHERE NOT EXISTS (SELECT 1 FROM "
                    "job_current_io WHERE job_id = :job AND direction = :direction "
                    "AND dataset_id = :dataset)"
                ),
                values,
            )


def downgrade() -> None:
    op.drop_table("job_declared_io")
    op.drop_table("job_declarations")
