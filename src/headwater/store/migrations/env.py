"""Alembic environment: migrate on the connection ``headwater.store.migrate`` passes in."""

from __future__ import annotations

from alembic import context

from headwater.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("headwater migrations run through headwater.store.migrate, with a connection")

context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER most things in place; batch mode copies the table.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
