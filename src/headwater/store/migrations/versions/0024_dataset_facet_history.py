"""dataset_facet_history: the dataset facets a run's inputs sent, as they were

A dataset facet sent on an input (or a JobEvent's output) makes no dataset
version, and ``facets`` keeps only the dataset's latest of each name.
``dataset_facet_history`` keeps every one of the names answers as of a time read
(owners, quality), one row per (dataset, name, event), so the compliance
report's owners and the graph's failed assertions as of a time use the one in
force then. The upgrade fills it from the raw log: the run and job events that
mention a dataset with a stored facet of those names (``event_subjects``), each
input's (and a JobEvent output's) name taken through ``dataset_aliases`` when
the namespace rules stored it under another.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-27 06:50:00
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
#: The facet names kept (``dataset_facet_history.HISTORY_FACETS`` at this revision).
_NAMES = ("ownership", "dataQualityAssertions", "dataQualityMetrics", "outputStatistics")
_CHUNK = 500


def upgrade() -> None:
    history = op.create_table(
        "dataset_facet_history",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("event_time", sa.DateTime(), nullable=False),
        sa.Column("event_hash", sa.String(64), nullable=False),
        sa.Column("run_uuid", sa.Text(), nullable=True),
        sa.Column("payload", _JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset_facet_history")),
        sa.UniqueConstraint(
            "subject",
            "name",
            "event_hash",
            name=op.f("uq_dataset_facet_history_subject_name_event_hash"),
        ),
    )
    op.create_index("ix_dataset_facet_history_run_uuid", "dataset_facet_history", ["run_uuid"])
    _fill(op.get_bind(), history)


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _stored_as(conn: sa.Connection) -> dict[tuple[str, str], str]:
    """(namespace, name) as sent -> the dataset node id it is stored under, for the
    names the namespace rules changed."""
    query = sa.text(
        "SELECT a.namespace, a.name, n.name, d.name FROM dataset_aliases a "
        "JOIN datasets d ON d.id = a.dataset_id JOIN namespaces n ON n.id = d.namespace_id"
    )
    return {(ns, name): f"dataset:{to_ns}:{to}" for ns, name, to_ns, to in conn.execute(query)}


def _event_hashes(conn: sa.Connection, subjects: list[str]) -> list[str]:
    query = sa.text(
        "SELECT DISTINCT s.event_hash FROM event_subjects s "
        "JOIN events e ON e.event_hash = s.event_hash "
        "WHERE e.kind <> 'dataset' AND s.subject IN :subjects"
    ).bindparams(sa.bindparam("subjects", expanding=True))
    found: set[str] = set()
    for part in _chunks(subjects):
        found.update(conn.scalars(query, {"subjects": list(part)}))
    return sorted(found)


def _fill(conn: sa.Connection, history: sa.Table) -> None:
    subjects = set(
        conn.scalars(
            sa.text(
                "SELECT DISTINCT subject FROM facets WHERE kind = 'dataset' AND run_uuid = '' "
                "AND name IN :names"
            ).bindparams(sa.bindparam("names", expanding=True)),
            {"names": list(_NAMES)},
        )
    )
    if not subjects:
        return
    stored_as = _stored_as(conn)
    events = (
        sa.text(
            "SELECT payload, event_time, event_hash, run_uuid FROM events "
            "WHERE event_hash IN :hashes"
        )
        .bindparams(sa.bindparam("hashes", expanding=True))
        .columns(  # typed, so SQLite's times come back as datetimes
            payload=sa.Text(), event_time=sa.DateTime(), event_hash=sa.Text(), run_uuid=sa.Text()
        )
    )
    for part in _chunks(_event_hashes(conn, sorted(subjects))):
        rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        for payload, time, digest, run in conn.execute(events, {"hashes": list(part)}):
            for subject, facets in _versionless_facets(json.loads(payload), stored_as):
                if subject not in subjects:
                    continue
                for name in _NAMES:
                    if facets.get(name) is not None:
                        rows.setdefault(
                            (subject, name, digest),
                            {
                                "subject": subject,
                                "name": name,
                                "event_time": time,
                                "event_hash": digest,
                                "run_uuid": run,
                                "payload": facets[name],
                            },
                        )
        if rows:
            conn.execute(history.insert(), list(rows.values()))


def _versionless_facets(
    event: dict[str, Any], stored_as: dict[tuple[str, str], str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(dataset node id, dataset facets) of each input of ``event`` and, on a JobEvent,
    each output: the datasets it sends facets about without making a version."""
    places = ("inputs",) if isinstance(event.get("run"), dict) else ("inputs", "outputs")
    for place in places:
        items = event.get(place)
        for item in items if isinstance(items, list) else ():
            facets = item.get("facets") if isinstance(item, dict) else None
            if not isinstance(facets, dict):
                continue
            key = (item.get("namespace"), item.get("name"))
            yield stored_as.get(key) or f"dataset:{key[0]}:{key[1]}", facets


def downgrade() -> None:
    op.drop_index("ix_dataset_facet_history_run_uuid", table_name="dataset_facet_history")
    op.drop_table("dataset_facet_history")
