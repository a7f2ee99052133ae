"""access: api_tokens (hashed, scoped) and the append-only audit_log

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 00:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

# The audit log is append-only on both databases: the database itself refuses an
# UPDATE or DELETE of a row, whoever connects.
_SQLITE_GUARDS = [
    f"CREATE TRIGGER audit_log_no_{verb.lower()} BEFORE {verb} ON audit_log "
    "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
    for verb in ("UPDATE", "DELETE")
]
_POSTGRES_GUARDS = [
    "CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$",
    "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
    "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()",
]


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("scopes", sa.String(100), nullable=False),
        sa.Column("namespaces", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("name", name=op.f("uq_api_tokens_name")),
        sa.UniqueConstraint("digest", name=op.f("uq_api_tokens_digest")),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("token_name", sa.String(200), nullable=True),
        sa.Column("client", sa.String(100), nullable=True),
        sa.Column("operation", sa.String(50), nullable=False),
        sa.Column("target", sa.Text(), nullable=True),
        sa.Column("outcome", sa.String(50), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(op.f("ix_audit_log_at"), "audit_log", ["at"])
    guards = _POSTGRES_GUARDS if op.get_bind().dialect.name == "postgresql" else _SQLITE_GUARDS
    for statement in guards:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_log_append_only ON audit_log")
        op.execute("DROP FUNCTION audit_log_append_only()")
    op.drop_index(op.f("ix_audit_log_at"), table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_table("api_tokens")
