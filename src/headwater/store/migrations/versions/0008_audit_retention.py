"""audit_log: rows older than a day may be deleted (retention); nothing else changes a row

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 11:20:00
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# The log stays append-only for every row younger than a day, whoever connects: an
# UPDATE is always refused and a DELETE of a recent row too, so what happened today
# cannot be erased. Older rows may be deleted, which is what the retention job
# (``--audit-retention``, at least a day) does. The floor is the database's own
# clock, not a setting a client could change.
_YOUNG = "audit_log is append-only: rows younger than a day cannot be deleted"
_SQLITE_UP = [
    "DROP TRIGGER audit_log_no_delete",
    "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log "
    "WHEN OLD.at >= datetime('now', '-1 day') "
    f"BEGIN SELECT RAISE(ABORT, '{_YOUNG}'); END",
]
_SQLITE_DOWN = [
    "DROP TRIGGER audit_log_no_delete",
    "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log "
    "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END",
]
_POSTGRES_UP = [
    "CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN "
    "IF TG_OP = 'DELETE' AND OLD.at < (now() AT TIME ZONE 'UTC') - interval '1 day' THEN "
    "RETURN OLD; END IF; "
    "IF TG_OP = 'DELETE' THEN "
    f"RAISE EXCEPTION '{_YOUNG}'; END IF; "
    "RAISE EXCEPTION 'audit_log is append-only'; END $$",
]
_POSTGRES_DOWN = [
    "CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$",
]


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_UP if postgres else _SQLITE_UP:
        op.execute(statement)


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_DOWN if postgres else _SQLITE_DOWN:
        op.execute(statement)
