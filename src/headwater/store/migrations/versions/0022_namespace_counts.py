"""namespace_counts: each namespace's shown datasets and jobs, kept by triggers

The Marquez lists' ``totalCount`` is read from this table instead of counted
over the namespace's rows per request (``headwater.store.namespace_counts``).
Triggers on ``namespaces``, ``datasets`` and ``jobs`` keep it in the writing
transaction; the upgrade fills it from the stored rows.

A row is shown while ``deleted_at`` is null or older than ``updated_at``
(``headwater.store.reads.visibility.visible``); the triggers apply that
condition to the row before and after each write.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27 03:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_TABLES = ("datasets", "jobs")  # each counted in the column of its own name


def _shown(row: str) -> str:
    """SQL: ``row`` (OLD or NEW) is shown in its namespace's list (null counts as not)."""
    return f"({row}.deleted_at IS NULL OR {row}.updated_at > {row}.deleted_at)"


def _add(table: str, row: str, step: str) -> str:
    return (
        f"UPDATE namespace_counts SET {table} = {table} {step} 1 "
        f"WHERE namespace_id = {row}.namespace_id"
    )


# Only the columns the condition reads: an upsert that changes neither the
# namespace nor whether the row is shown fails the WHEN and calls nothing.
_UPDATE_OF = "namespace_id, updated_at, deleted_at"


def _sqlite_up() -> list[str]:
    statements = [
        "CREATE TRIGGER namespace_counts_namespace AFTER INSERT ON namespaces BEGIN "
        "INSERT INTO namespace_counts (namespace_id, datasets, jobs) VALUES (NEW.id, 0, 0); END"
    ]
    for table in _TABLES:
        changed = (
            f"OLD.namespace_id IS NOT NEW.namespace_id "
            f"OR coalesce({_shown('OLD')}, 0) <> coalesce({_shown('NEW')}, 0)"
        )
        statements += [
            f"CREATE TRIGGER namespace_counts_{table}_insert AFTER INSERT ON {table} "
            f"WHEN {_shown('NEW')} BEGIN {_add(table, 'NEW', '+')}; END",
            f"CREATE TRIGGER namespace_counts_{table}_delete AFTER DELETE ON {table} "
            f"WHEN {_shown('OLD')} BEGIN {_add(table, 'OLD', '-')}; END",
            f"CREATE TRIGGER namespace_counts_{table}_update AFTER UPDATE OF {_UPDATE_OF} "
            f"ON {table} WHEN {changed} BEGIN "
            f"{_add(table, 'OLD', '-')} AND {_shown('OLD')}; "
            f"{_add(table, 'NEW', '+')} AND {_shown('NEW')}; END",
        ]
    return statements


def _postgres_up() -> list[str]:
    statements = [
        "CREATE FUNCTION namespace_counts_new_namespace() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN INSERT INTO namespace_counts (namespace_id, datasets, jobs) "
        "VALUES (NEW.id, 0, 0); RETURN NULL; END $$",
        "CREATE TRIGGER namespace_counts_namespace AFTER INSERT ON namespaces "
        "FOR EACH ROW EXECUTE FUNCTION namespace_counts_new_namespace()",
    ]
    for table in _TABLES:
        function = f"namespace_counts_{table}"
        changed = (
            f"OLD.namespace_id IS DISTINCT FROM NEW.namespace_id "
            f"OR coalesce({_shown('OLD')}, false) <> coalesce({_shown('NEW')}, false)"
        )
        statements += [
            # OLD is null on INSERT and NEW on DELETE: TG_OP says which to read.
            f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF TG_OP <> 'INSERT' THEN IF {_shown('OLD')} THEN "
            f"{_add(table, 'OLD', '-')}; END IF; END IF; "
            f"IF TG_OP <> 'DELETE' THEN IF {_shown('NEW')} THEN "
            f"{_add(table, 'NEW', '+')}; END IF; END IF; "
            "RETURN NULL; END $$",
            f"CREATE TRIGGER {function}_insert AFTER INSERT ON {table} FOR EACH ROW "
            f"WHEN {_shown('NEW')} EXECUTE FUNCTION {function}()",
            f"CREATE TRIGGER {function}_delete AFTER DELETE ON {table} FOR EACH ROW "
            f"WHEN {_shown('OLD')} EXECUTE FUNCTION {function}()",
            f"CREATE TRIGGER {function}_update AFTER UPDATE OF {_UPDATE_OF} ON {table} "
            f"FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION {function}()",
        ]
    return statements


def _fill() -> str:
    counts = ", ".join(
        f"(SELECT count(*) FROM {table} x WHERE x.namespace_id = n.id AND {_shown('x')})"
        for table in _TABLES
    )
    return (
        "INSERT INTO namespace_counts (namespace_id, datasets, jobs) "
        f"SELECT n.id, {counts} FROM namespaces n"
    )


def upgrade() -> None:
    op.create_table(
        "namespace_counts",
        sa.Column("namespace_id", sa.Integer(), nullable=False),
        sa.Column("datasets", sa.BigInteger(), nullable=False),
        sa.Column("jobs", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["namespace_id"],
            ["namespaces.id"],
            ondelete="CASCADE",
            name=op.f("fk_namespace_counts_namespace_id_namespaces"),
        ),
        sa.PrimaryKeyConstraint("namespace_id", name=op.f("pk_namespace_counts")),
    )
    op.execute(_fill())
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _postgres_up() if postgres else _sqlite_up():
        op.execute(statement)


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    triggers = [("namespaces", "namespace_counts_namespace")] + [
        (table, f"namespace_counts_{table}_{op_name}")
        for table in _TABLES
        for op_name in ("insert", "delete", "update")
    ]
    for table, trigger in triggers:
        op.execute(f"DROP TRIGGER {trigger} ON {table}" if postgres else f"DROP TRIGGER {trigger}")
    if postgres:
        for function in ("new_namespace", *_TABLES):
            op.execute(f"DROP FUNCTION namespace_counts_{function}()")
    op.drop_table("namespace_counts")
