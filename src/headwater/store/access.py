"""Access tokens and the audit log: their tables and every statement on them.

Tables (added to :data:`headwater.store.tables.metadata`, migration ``0006``)::

    api_tokens   one row per token: name, SHA-256 digest of the secret, scopes,
                 the namespaces it may see (NULL: all), created/revoked times
    audit_log    append-only: time, token name, client address, operation,
                 target, outcome, HTTP status and how many requests the row counts

A token's secret is never stored: only its hex SHA-256 digest, which the server
compares in constant time. Revoking sets ``revoked_at``; the row stays so the
audit log's names keep their meaning. Nothing here updates an audit row, and
the migrations install triggers that make both databases refuse an update of
any row and a delete of a row younger than a day; :func:`prune_audit` (the
retention job) deletes only rows older than that.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from headwater.errors import HeadwaterError, NotFoundError
from headwater.store.checkpoint import truncate_large_wal
from headwater.store.dialects import UNVERSIONED_OPTION
from headwater.store.tables import metadata
from headwater.store.transactions import now_utc, translate, write_transaction

__all__ = [
    "SCOPES",
    "TOKEN_PREFIX",
    "AuditRow",
    "DuplicateToken",
    "Token",
    "api_tokens",
    "append_audit",
    "audit_log",
    "create_token",
    "digest",
    "list_tokens",
    "prune_audit",
    "read_audit",
    "revoke_token",
]

#: What a token may do: post lineage, read anything, administer (deletes, tags,
#: Marquez writes, tokens, the audit log).
SCOPES = ("admin", "ingest", "read")
#: Every secret starts with it, so a leaked one is recognisable (secret scanners, logs).
TOKEN_PREFIX = "hw_"

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

api_tokens = sa.Table(
    "api_tokens",
    metadata,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("digest", sa.String(64), nullable=False, unique=True),
    sa.Column("scopes", sa.String(100), nullable=False),
    sa.Column("namespaces", sa.JSON(), nullable=True),
    sa.Column("created_at", sa.DateTime(), nullable=False),
    sa.Column("revoked_at", sa.DateTime(), nullable=True),
)

audit_log = sa.Table(
    "audit_log",
    metadata,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("at", sa.DateTime(), nullable=False, index=True),
    sa.Column("token_name", sa.String(200), nullable=True),
    sa.Column("client", sa.String(100), nullable=True),
    sa.Column("operation", sa.String(50), nullable=False),
    sa.Column("target", sa.Text(), nullable=True),
    sa.Column("outcome", sa.String(50), nullable=False),
    sa.Column("status", sa.Integer(), nullable=True),
    sa.Column("count", sa.Integer(), nullable=False),
)


class DuplicateToken(HeadwaterError):
    """A token of that name exists already (revoked ones included: names stay unique)."""


@dataclass(frozen=True)
class Token:
    """A stored token, without its secret."""

    name: str
    digest: str
    scopes: frozenset[str]
    namespaces: frozenset[str] | None
    created_at: datetime
    revoked_at: datetime | None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "scopes": sorted(self.scopes),
            "namespaces": None if self.namespaces is None else sorted(self.namespaces),
            "createdAt": _iso(self.created_at),
            "revokedAt": _iso(self.revoked_at),
        }


@dataclass(frozen=True)
class AuditRow:
    """One audit entry; ``count`` > 1 when it stands for several refused requests."""

    at: datetime
    token_name: str | None
    client: str | None
    operation: str
    target: str | None
    outcome: str
    status: int | None = None
    count: int = 1

    def as_json(self) -> dict[str, Any]:
        return {
            "at": _iso(self.at), "tokenName": self.token_name, "client": self.client,
            "operation": self.operation, "target": self.target, "outcome": self.outcome,
            "status": self.status, "count": self.count,
        }


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="microseconds") + "Z"


def digest(secret: str) -> str:
    """The hex SHA-256 of ``secret``: what the table keeps and the server compares."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(
    engine: sa.Engine, name: str, scopes: Iterable[str], namespaces: Iterable[str] | None = None
) -> tuple[str, Token]:
    """Store a new token; returns its secret (shown once, never stored) and the row."""
    wanted = frozenset(scopes)
    unknown = wanted - set(SCOPES)
    if not wanted or unknown:
        raise ValueError(f"scopes must be some of {', '.join(SCOPES)}, got {sorted(wanted)}")
    if not name or len(name) > 200:
        raise ValueError("a token name must be 1 to 200 characters")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    allowed = None if namespaces is None else frozenset(namespaces)
    token = Token(name, digest(secret), wanted, allowed, now_utc(), None)
    try:
        with write_transaction(engine, records=False) as conn:
            conn.execute(sa.insert(api_tokens).values(
                name=name, digest=token.digest, scopes=",".join(sorted(wanted)),
                namespaces=None if allowed is None else sorted(allowed),
                created_at=token.created_at,
            ))
    except Exception as exc:
        if isinstance(exc.__cause__, IntegrityError):
            raise DuplicateToken(f"a token named '{name}' exists already") from exc
        raise
    return secret, token


def list_tokens(engine: sa.Engine, *, include_revoked: bool = True) -> list[Token]:
    """Every token, oldest first."""
    query = sa.select(api_tokens).order_by(api_tokens.c.id)
    if not include_revoked:
        query = query.where(api_tokens.c.revoked_at.is_(None))
    return [
        Token(row.name, row.digest, frozenset(row.scopes.split(",")),
              None if row.namespaces is None else frozenset(row.namespaces),
              row.created_at, row.revoked_at)
        for row in _rows(engine, query)
    ]


def revoke_token(engine: sa.Engine, name: str) -> None:
    """Revoke the live token ``name``; NotFoundError when there is none."""
    with write_transaction(engine, records=False) as conn:
        done = conn.execute(
            sa.update(api_tokens)
            .where(api_tokens.c.name == name, api_tokens.c.revoked_at.is_(None))
            .values(revoked_at=now_utc())
        )
        if done.rowcount == 0:
            raise NotFoundError(f"no live token named '{name}'")


def append_audit(engine: sa.Engine, rows: Sequence[AuditRow]) -> None:
    """Append ``rows`` in one transaction."""
    if not rows:
        return
    with write_transaction(engine, records=False) as conn:
        conn.execution_options(**{UNVERSIONED_OPTION: True})  # no read answer shows it
        conn.execute(sa.insert(audit_log), [
            {"at": r.at, "token_name": r.token_name, "client": r.client,
             "operation": r.operation, "target": r.target, "outcome": r.outcome,
             "status": r.status, "count": r.count}
            for r in rows
        ])


def prune_audit(engine: sa.Engine, before: datetime) -> int:
    """Delete the audit rows older than ``before`` (naive UTC); how many were deleted.

    The database refuses it (the triggers of migration 0008) for a row younger
    than a day, whatever ``before`` says.
    """
    with write_transaction(engine, records=False) as conn:
        conn.execution_options(**{UNVERSIONED_OPTION: True})  # no read answer shows it
        deleted = int(
            conn.execute(sa.delete(audit_log).where(audit_log.c.at < before)).rowcount or 0
        )
    if deleted:
        # One statement: the first prune of a long log writes a WAL that size.
        truncate_large_wal(engine)
    return deleted


def read_audit(
    engine: sa.Engine, *, since: datetime | None = None, limit: int = 100, offset: int = 0
) -> list[AuditRow]:
    """Audit rows at or after ``since`` (naive UTC), oldest first."""
    query = sa.select(audit_log).order_by(audit_log.c.id).limit(limit).offset(offset)
    if since is not None:
        query = query.where(audit_log.c.at >= since)
    return [
        AuditRow(row.at, row.token_name, row.client, row.operation, row.target, row.outcome,
                 row.status, row.count)
        for row in _rows(engine, query)
    ]


def _rows(engine: sa.Engine, query: sa.Select[Any]) -> list[sa.Row[Any]]:
    """The rows of ``query``; a database failure becomes a headwater error."""
    try:
        with engine.connect() as conn:
            return list(conn.execute(query).all())
    except SQLAlchemyError as exc:
        raise translate(exc) from exc
