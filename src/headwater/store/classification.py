"""What users say about classification that no event says: tag definitions,
propagation blocks and owners, with their writes.

    tag_definitions     one row per tag whose propagation a user decided
                        (``propagates``); tags without one follow the default
                        list in :mod:`headwater.graph.tags`
    propagation_blocks  a user's stop for a tag (or every tag, ``tag`` NULL) on
                        one column edge of a job (``source_field`` and
                        ``target_field`` set) or on every edge of the job
                        (both NULL). Never deleted: removing one sets
                        ``removed_at``, so "what was blocked on 1 March" stays
                        answerable
    owners              owners set through the API, beside those of ``ownership``
                        facets (``facets``); ``subject`` a dataset or job node id
    owner_history       each owner the API took off, over [``valid_from``,
                        ``valid_to``): from its ``created_at`` to its removal,
                        so as-of answers see the API's owners of their time
    tag_history         what was in force over [``valid_from``, ``valid_to``):
                        each definition (``kind`` 'definition', open while it
                        holds), and each tag assignment the API took off
                        (``kind`` 'assignment', from the assignment's
                        ``created_at`` to its removal), so as-of answers see
                        the definitions and tags of their time

The rows come from requests, not events, so a rebuild copies them
(:data:`headwater.store.raw_log.CARRIED`). Times are the wall clock's, naive UTC.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError, WriteRefused
from headwater.store import dialects
from headwater.store.tables import metadata
from headwater.store.transactions import now_utc, write_transaction

__all__ = [
    "add_block",
    "delete_definition",
    "delete_owner",
    "owner_history",
    "owners",
    "propagation_blocks",
    "put_definition",
    "put_owner",
    "record_removed_assignment",
    "remove_block",
    "tag_definitions",
    "tag_history",
]

tag_definitions = sa.Table(
    "tag_definitions",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("name", sa.Text(), nullable=False, unique=True),
    sa.Column("propagates", sa.Boolean(), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("created_at", sa.DateTime(), nullable=False),
    sa.Column("updated_at", sa.DateTime(), nullable=False),
)

propagation_blocks = sa.Table(
    "propagation_blocks",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("job", sa.Text(), nullable=False),  # job node id
    sa.Column("source_field", sa.Text(), nullable=True),  # datasetField node ids
    sa.Column("target_field", sa.Text(), nullable=True),
    sa.Column("tag", sa.Text(), nullable=True),
    sa.Column("reason", sa.Text(), nullable=True),
    sa.Column("created_at", sa.DateTime(), nullable=False),
    sa.Column("removed_at", sa.DateTime(), nullable=True),
)

owners = sa.Table(
    "owners",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("subject", sa.Text(), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("type", sa.Text(), nullable=False),  # '' when not given
    sa.Column("created_at", sa.DateTime(), nullable=False),
    sa.UniqueConstraint("subject", "name", "type"),
)

owner_history = sa.Table(
    "owner_history",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("subject", sa.Text(), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("type", sa.Text(), nullable=False),
    sa.Column("valid_from", sa.DateTime(), nullable=False),
    sa.Column("valid_to", sa.DateTime(), nullable=False),
    sa.Index("ix_owner_history_subject", "subject"),
)

tag_history = sa.Table(
    "tag_history",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("kind", sa.String(10), nullable=False),  # definition | assignment
    sa.Column("tag", sa.Text(), nullable=False),
    sa.Column("subject", sa.Text(), nullable=False),  # '' for a definition
    sa.Column("propagates", sa.Boolean(), nullable=True),  # a definition's flag
    sa.Column("valid_from", sa.DateTime(), nullable=False),
    sa.Column("valid_to", sa.DateTime(), nullable=True),
    sa.Index("ix_tag_history_kind_tag", "kind", "tag"),
)
_h = tag_history


def _close_definition(conn: sa.Connection, name: str, now: datetime) -> None:
    conn.execute(_h.update().where(_h.c.kind == "definition", _h.c.tag == name,
                                   _h.c.valid_to.is_(None)).values(valid_to=now))


def record_removed_assignment(conn: sa.Connection, tag: str, subject: str,
                              assigned_at: datetime, removed_at: datetime) -> None:
    """Keep an assignment the API takes off, for answers as of its time."""
    conn.execute(_h.insert().values(kind="assignment", tag=tag, subject=subject,
                                    valid_from=assigned_at, valid_to=removed_at))


def put_definition(engine: sa.Engine, name: str, propagates: bool,
                   description: str | None) -> dict[str, Any]:
    """Create or change the definition of tag ``name``."""
    now = now_utc()
    with write_transaction(engine) as conn:
        stmt = dialects.insert(conn.dialect.name, tag_definitions).values(
            name=name, propagates=propagates, description=description,
            created_at=now, updated_at=now)
        conn.execute(stmt.on_conflict_do_update(
            index_elements=["name"],
            set_={"propagates": propagates, "description": description, "updated_at": now}))
        _close_definition(conn, name, now)
        conn.execute(_h.insert().values(kind="definition", tag=name, subject="",
                                        propagates=propagates, valid_from=now))
    return {"name": name, "propagates": propagates, "description": description}


def delete_definition(engine: sa.Engine, name: str) -> None:
    """Forget tag ``name``'s definition (it follows the default list again)."""
    with write_transaction(engine) as conn:
        done = conn.execute(tag_definitions.delete().where(tag_definitions.c.name == name))
        _close_definition(conn, name, now_utc())
    if not done.rowcount:
        raise NotFoundError(f"tag '{name}' has no definition")


def add_block(engine: sa.Engine, job: str, source_field: str | None, target_field: str | None,
              tag: str | None, reason: str | None) -> dict[str, Any]:
    """Record a block; the stored row as a dict."""
    if (source_field is None) != (target_field is None):
        raise WriteRefused("a block names both ends of an edge or neither",
                           field="body.target" if target_field is None else "body.source")
    now = now_utc()
    with write_transaction(engine) as conn:
        new_id = conn.execute(propagation_blocks.insert().values(
            job=job, source_field=source_field, target_field=target_field, tag=tag,
            reason=reason, created_at=now).returning(propagation_blocks.c.id)).scalar_one()
    return {"id": int(new_id), "job": job, "source": source_field, "target": target_field,
            "tag": tag, "reason": reason, "createdAt": now, "removedAt": None}


def remove_block(engine: sa.Engine, block_id: int) -> datetime:
    """Mark block ``block_id`` removed now (it keeps applying to earlier times)."""
    now = now_utc()
    b = propagation_blocks
    with write_transaction(engine) as conn:
        done = conn.execute(b.update().where(b.c.id == block_id, b.c.removed_at.is_(None))
                            .values(removed_at=now))
    if not done.rowcount:
        raise NotFoundError(f"no block {block_id} in force")
    return now


def put_owner(engine: sa.Engine, subject: str, name: str, owner_type: str) -> None:
    """Add owner ``name`` (of ``owner_type``) to ``subject``; adding twice is harmless."""
    now = now_utc()
    with write_transaction(engine) as conn:
        stmt = dialects.insert(conn.dialect.name, owners).values(
            subject=subject, name=name, type=owner_type, created_at=now)
        conn.execute(stmt.on_conflict_do_nothing(index_elements=["subject", "name", "type"]))


def delete_owner(engine: sa.Engine, subject: str, name: str, owner_type: str) -> None:
    """Take owner ``name`` off ``subject``, keeping when it held for as-of answers."""
    now = now_utc()
    match = (owners.c.subject == subject, owners.c.name == name, owners.c.type == owner_type)
    with write_transaction(engine) as conn:
        added = conn.scalar(sa.select(owners.c.created_at).where(*match))
        if added is not None:
            conn.execute(owners.delete().where(*match))
            conn.execute(owner_history.insert().values(
                subject=subject, name=name, type=owner_type, valid_from=added, valid_to=now))
    if added is None:
        raise NotFoundError(f"'{name}' is not an owner of {subject} set through the API")
