"""Writes the Marquez API makes outside OpenLineage events: namespace and source
metadata, and soft deletes.

Everything an event can say goes through the store's write path instead (the
deprecated dataset/job/run endpoints are turned into events by the server). What
is left is small and lives here, each function one transaction:

- :func:`put_namespace` / :func:`put_source` — create, or set the owner,
  description, type and connection URL that no event carries;
- :func:`hide_dataset`, :func:`hide_job`, :func:`hide_namespace` — Marquez's soft
  delete. The row stays; ``deleted_at`` is set to the later of now and the row's
  ``updated_at`` (its latest event time), and reads hide a row while ``updated_at
  <= deleted_at`` (:func:`headwater.store.reads.visibility.visible`). An event
  about the object with a later time moves ``updated_at`` past ``deleted_at`` and
  so shows it again, with no write of its own.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.store import dialects
from headwater.store import tables as t
from headwater.store.transactions import now_utc, write_transaction

__all__ = ["hide_dataset", "hide_job", "hide_namespace", "put_namespace", "put_source"]


def put_namespace(
    engine: sa.Engine, name: str, owner_name: str, description: str | None
) -> None:
    """Create namespace ``name`` or set its owner and description; shows it if hidden."""
    now = now_utc()
    ns = t.namespaces
    with write_transaction(engine) as conn:
        stmt = dialects.insert(conn.dialect.name, ns).values(
            name=name, owner_name=owner_name, description=description,
            created_at=now, updated_at=now,
        )
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["name"],
                set_={"owner_name": owner_name, "description": description,
                      "deleted_at": None},
            )
        )


def put_source(
    engine: sa.Engine,
    name: str,
    source_type: str,
    connection_url: str,
    description: str | None,
) -> None:
    """Create source ``name`` or change its type, connection URL and description.

    The URL follows the sources table's rule (latest by time, then hash), with the
    time of this call, so a later ``dataSource`` facet still wins over it.
    """
    now = now_utc()
    src = t.sources
    url_hash = hashlib.sha256(f"api:{name}:{connection_url}".encode()).hexdigest()
    with write_transaction(engine) as conn:
        stmt = dialects.insert(conn.dialect.name, src).values(
            name=name, type=source_type, description=description,
            connection_url=connection_url, url_time=now, url_hash=url_hash,
            created_at=now, updated_at=now,
        )
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["name"],
                set_={"type": source_type, "description": description,
                      "connection_url": connection_url, "url_time": now,
                      "url_hash": url_hash, "updated_at": now},
            )
        )


def _hide(table: sa.Table, now: datetime) -> dict[str, sa.ColumnElement[datetime]]:
    # The later of now and the row's latest event time, so a row whose events carry a
    # time ahead of this server's clock is hidden too.
    return {"deleted_at": sa.case((table.c.updated_at > now, table.c.updated_at), else_=now)}


def _namespace_id(conn: sa.Connection, name: str) -> int:
    found = conn.execute(sa.select(t.namespaces.c.id).where(t.namespaces.c.name == name)).scalar()
    if found is None:
        raise NotFoundError(f"namespace '{name}' not found")
    return int(found)


def _hide_one(engine: sa.Engine, table: sa.Table, kind: str, namespace: str, name: str) -> None:
    now = now_utc()
    with write_transaction(engine) as conn:
        ns_id = _namespace_id(conn, namespace)
        done = conn.execute(
            sa.update(table)
            .where(table.c.namespace_id == ns_id, table.c.name == name)
            .values(**_hide(table, now))
        )
        if done.rowcount == 0:
            raise NotFoundError(f"{kind} '{name}' not found in namespace '{namespace}'")


def hide_dataset(engine: sa.Engine, namespace: str, name: str) -> None:
    """Soft-delete dataset ``namespace``/``name``: hidden until an event mentions it again."""
    _hide_one(engine, t.datasets, "dataset", namespace, name)


def hide_job(engine: sa.Engine, namespace: str, name: str) -> None:
    """Soft-delete job ``namespace``/``name``: hidden until an event mentions it again."""
    _hide_one(engine, t.jobs, "job", namespace, name)


def hide_namespace(engine: sa.Engine, name: str) -> None:
    """Soft-delete namespace ``name`` and every dataset and job in it, in one transaction."""
    now = now_utc()
    with write_transaction(engine) as conn:
        ns_id = _namespace_id(conn, name)
        for table in (t.datasets, t.jobs):
            conn.execute(
                sa.update(table).where(table.c.namespace_id == ns_id).values(**_hide(table, now))
            )
        conn.execute(
            sa.update(t.namespaces)
            .where(t.namespaces.c.id == ns_id)
            .values(**_hide(t.namespaces, now))
        )
