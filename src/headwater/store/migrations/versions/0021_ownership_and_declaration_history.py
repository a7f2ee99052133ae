"""ownership_and_declaration_history: owners and static-lineage declarations as they were

``job_ownership_history`` keeps every job ``ownership`` facet a stored event
sent (``facets`` keeps the latest alone), ``job_declaration_history`` and
``job_declared_io_history`` every JobEvent declaration with its datasets
(``job_declarations`` keeps the latest alone), and ``owner_history`` the owners
the API takes off, so answers as of a time use the owners and declarations in
force then. The upgrade fills the first three from the raw log: the events that
mention each job with a stored ownership facet or declaration
(``event_subjects``). A declaration's datasets are the stored ones for the
latest; for an earlier one, the names it sent that are stored datasets.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 03:20:00
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    ownership = op.create_table(
        "job_ownership_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("event_time", sa.DateTime(), nullable=False),
        sa.Column("event_hash", sa.String(64), nullable=False),
        sa.Column("run_uuid", sa.Text(), nullable=True),
        sa.Column("payload", _JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_ownership_history")),
        sa.UniqueConstraint(
            "subject", "event_hash", name=op.f("uq_job_ownership_history_subject_event_hash")
        ),
    )
    op.create_index("ix_job_ownership_history_run_uuid", "job_ownership_history", ["run_uuid"])
    declarations = op.create_table(
        "job_declaration_history",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("declared_hash", sa.String(64), nullable=False),
        sa.Column("declared_time", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_declaration_history_job_id_jobs")
        ),
        sa.PrimaryKeyConstraint("job_id", "declared_hash", name=op.f("pk_job_declaration_history")),
    )
    declared_io = op.create_table(
        "job_declared_io_history",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("declared_hash", sa.String(64), nullable=False),
        sa.Column("direction", sa.String(6), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_job_declared_io_history_dataset_id_datasets"),
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_declared_io_history_job_id_jobs")
        ),
        sa.PrimaryKeyConstraint(
            "job_id",
            "declared_hash",
            "direction",
            "dataset_id",
            name=op.f("pk_job_declared_io_history"),
        ),
    )
    op.create_index(
        "ix_job_declared_io_history_dataset_id_direction",
        "job_declared_io_history",
        ["dataset_id", "direction"],
    )
    op.create_table(
        "owner_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("valid_from", sa.DateTime(), nullable=False),
        sa.Column("valid_to", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_owner_history")),
    )
    op.create_index("ix_owner_history_subject", "owner_history", ["subject"])
    conn = op.get_bind()
    _fill_ownership(conn, ownership)
    _fill_declarations(conn, declarations, declared_io)


def _events_of(
    conn: sa.Connection, subject: str, kind: str | None, like: str | None
) -> Iterator[tuple[dict[str, Any], Any, str, str | None]]:
    """(event, time, hash, run) of the raw events that mention node ``subject``."""
    where = ["s.subject = :subject"]
    params: dict[str, Any] = {"subject": subject}
    if kind is not None:
        where.append("e.kind = :kind")
        params["kind"] = kind
    if like is not None:
        where.append("e.payload LIKE :like")
        params["like"] = like
    query = sa.text(
        "SELECT e.payload, e.event_time, e.event_hash, e.run_uuid FROM event_subjects s "
        "JOIN events e ON e.event_hash = s.event_hash WHERE " + " AND ".join(where)
    ).columns(  # typed, so SQLite's times come back as datetimes
        payload=sa.Text(), event_time=sa.DateTime(), event_hash=sa.Text(), run_uuid=sa.Text()
    )
    for payload, time, digest, run in conn.execute(query, params):
        yield json.loads(payload), time, digest, run


def _fill_ownership(conn: sa.Connection, ownership: sa.Table) -> None:
    subjects = conn.scalars(
        sa.text(
            "SELECT DISTINCT subject FROM facets WHERE kind = 'job' AND run_uuid = '' "
            "AND name = 'ownership'"
        )
    ).all()
    for subject in subjects:
        rows = {}
        for event, time, digest, run in _events_of(conn, subject, None, '%"ownership"%'):
            job = event.get("job")
            facets = job.get("facets") if isinstance(job, dict) else None
            payload = facets.get("ownership") if isinstance(facets, dict) else None
            if payload is not None:
                rows[digest] = {
                    "subject": subject,
                    "event_time": time,
                    "event_hash": digest,
                    "run_uuid": run,
                    "payload": payload,
                }
        if rows:
            conn.execute(ownership.insert(), list(rows.values()))


def _dataset_id(conn: sa.Connection, item: Any) -> int | None:
    if not isinstance(item, dict):
        return None
    found = conn.scalar(
        sa.text(
            "SELECT d.id FROM datasets d JOIN namespaces n ON n.id = d.namespace_id "
            "WHERE n.name = :namespace AND d.name = :name"
        ),
        {"namespace": item.get("namespace"), "name": item.get("name")},
    )
    return None if found is None else int(found)


def _fill_declarations(conn: sa.Connection, declarations: sa.Table, declared_io: sa.Table) -> None:
    jobs = conn.execute(
        sa.text(
            "SELECT j.id, n.name, j.name, d.declared_hash FROM job_declarations d "
            "JOIN jobs j ON j.id = d.job_id JOIN namespaces n ON n.id = j.namespace_id"
        )
    ).all()
    for job_id, namespace, name, latest in jobs:
        stored = conn.execute(
            sa.text("SELECT direction, dataset_id FROM job_declared_io WHERE job_id = :job"),
            {"job": job_id},
        ).all()
        heads, io = {}, set()
        for event, time, digest, _ in _events_of(conn, f"job:{namespace}:{name}", "job", None):
            if "inputs" not in event and "outputs" not in event:
                continue
            heads[digest] = {"job_id": job_id, "declared_hash": digest, "declared_time": time}
            if digest == latest:
                io.update((digest, direction, dataset) for direction, dataset in stored)
                continue
            for direction in ("input", "output"):
                for item in event.get(f"{direction}s") or ():
                    dataset = _dataset_id(conn, item)
                    if dataset is not None:
                        io.add((digest, direction, dataset))
        if heads:
            conn.execute(declarations.insert(), list(heads.values()))
        if io:
            conn.execute(
                declared_io.insert(),
                [
                    {"job_id": job_id, "declared_hash": h, "direction": d, "dataset_id": ds}
                    for h, d, ds in sorted(io)
                ],
            )


def downgrade() -> None:
    op.drop_index("ix_owner_history_subject", table_name="owner_history")
    op.drop_table("owner_history")
    op.drop_index(
        "ix_job_declared_io_history_dataset_id_direction", table_name="job_declared_io_history"
    )
    op.drop_table("job_declared_io_history")
    op.drop_table("job_declaration_history")
    op.drop_index("ix_job_ownership_history_run_uuid", table_name="job_ownership_history")
    op.drop_table("job_ownership_history")
