"""Tag writes from the API: create a tag, tag or untag a dataset, a field or a job.

Tags also arrive in events (``tags`` facets, schema field tags); those are the
store's write path. Writes here add or remove single ``tag_assignments`` rows and
never touch facts derived from events. Tags must exist before they are assigned
(as in Marquez); assigning twice is harmless, as is removing a missing assignment.
"""

from __future__ import annotations

import hashlib
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.store import dialects
from headwater.store import tables as t
from headwater.store.classification import record_removed_assignment
from headwater.store.transactions import now_utc, write_transaction

__all__ = ["assign_tag", "create_tag", "unassign_tag"]


def create_tag(engine: sa.Engine, name: str, description: str | None) -> dict[str, Any]:
    """Create tag ``name`` or update its description; return the tag."""
    now = now_utc()
    with write_transaction(engine) as conn:
        stmt = dialects.insert(conn.dialect.name, t.tags).values(
            name=name, description=description, created_at=now, updated_at=now
        )
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["name"],
                set_={"description": description, "updated_at": now},
            )
        )
    return {"name": name, "description": description}


def _tag_id(conn: sa.Connection, name: str) -> int:
    found = conn.execute(sa.select(t.tags.c.id).where(t.tags.c.name == name)).scalar()
    if found is None:
        raise NotFoundError(f"tag '{name}' not found (create it with PUT /api/v1/tags/{name})")
    return int(found)


def assign_tag(engine: sa.Engine, tag: str, subject: str) -> None:
    """Put ``tag`` on ``subject`` (a ``dataset:``, ``datasetField:`` or ``job:`` node id)."""
    now = now_utc()
    with write_transaction(engine) as conn:
        tag_id = _tag_id(conn, tag)
        stmt = dialects.insert(conn.dialect.name, t.tag_assignments).values(
            tag_id=tag_id,
            subject=subject,
            value=None,
            source="api",
            tag_time=now,
            # Assignments from events carry their event's hash; ours says where it came from.
            tag_hash=hashlib.sha256(f"api:{tag}:{subject}".encode()).hexdigest(),
            created_at=now,
            updated_at=now,
        )
        conn.execute(stmt.on_conflict_do_nothing(index_elements=["tag_id", "subject"]))


def unassign_tag(engine: sa.Engine, tag: str, subject: str) -> None:
    """Take ``tag`` off ``subject``; the assignment is kept in ``tag_history`` for
    answers as of a time it held (:mod:`headwater.store.classification`)."""
    ta = t.tag_assignments
    with write_transaction(engine) as conn:
        tag_id = _tag_id(conn, tag)
        mine = sa.and_(ta.c.tag_id == tag_id, ta.c.subject == subject)
        assigned = conn.execute(sa.select(ta.c.created_at).where(mine)).scalar()
        if assigned is not None:
            record_removed_assignment(conn, tag, subject, assigned, max(now_utc(), assigned))
        conn.execute(sa.delete(ta).where(mine))
