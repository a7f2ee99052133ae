"""Token management and the audit log: ``/api/v2/tokens`` and ``GET /api/v2/audit``.

Every route here needs the ``admin`` scope (checked by
:class:`~headwater.server.access.AccessGate`). The first token of a server with
no ``--api-key`` cannot be created over HTTP: until then the server is open to
anyone, who could otherwise lock its owner out. ``headwater token create`` makes it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from pydantic import BaseModel, Field

from headwater.server.access import Access, audit_target
from headwater.server.deps import StoreDep
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import Limit, Offset, parse_time, read_router, time_query
from headwater.store import access as tokens

__all__ = ["router"]

router = read_router()
_ADMIN = error_responses(401, 403)


class TokenRequest(BaseModel):
    name: str = Field(min_length=1, max_length=200, description="Unique; shown in the audit log.")
    scopes: list[str] = Field(min_length=1, description="Some of admin, ingest, read.")
    namespaces: list[str] | None = Field(
        None, description="The namespaces the token may see; none given: all."
    )


class TokenResponse(BaseModel):
    name: str
    scopes: list[str]
    namespaces: list[str] | None
    createdAt: str
    revokedAt: str | None


class CreatedToken(TokenResponse):
    secret: str = Field(description="The bearer secret; shown this once, stored only hashed.")


class TokenList(BaseModel):
    tokens: list[TokenResponse]


class AuditEntry(BaseModel):
    at: str
    tokenName: str | None
    client: str | None
    operation: str = Field(description="ingest, ingest.batch, delete, tag, write, "
                           "token.create, token.revoke, auth (a rate-limited count), "
                           "read, token.read, audit.read (with --audit-reads) or "
                           "audit.prune (the retention job).")
    target: str | None
    outcome: str = Field(description="ok, failed, unauthenticated, forbidden, or "
                         "refused (rate-limited) for a row counting several refusals.")
    status: int | None
    count: int


class AuditList(BaseModel):
    entries: list[AuditEntry]


def _access(request: Request) -> Access:
    found: Access = request.app.state.access
    return found


@router.post(
    "/api/v2/tokens", response_model=CreatedToken, status_code=201, tags=["access"],
    responses=error_responses(401, 403, 409, 422),
)
def create_token(body: TokenRequest, request: Request, store: StoreDep) -> dict[str, Any]:
    """Create a token; the answer holds its secret, which is never shown again."""
    access = _access(request)
    if not access.tokens.protected():
        raise RequestError("this server has no token yet: create the first one with "
                           "`headwater token create`", status_code=403, field="Authorization")
    audit_target(request.scope, body.name)
    try:
        secret, token = tokens.create_token(store.engine, body.name, body.scopes,
                                            body.namespaces)
    except ValueError as exc:
        raise RequestError(str(exc), field="body") from exc
    except tokens.DuplicateToken as exc:
        raise RequestError(str(exc), status_code=409, field="body.name") from exc
    access.tokens.invalidate()
    return {**token.as_json(), "secret": secret}


@router.get("/api/v2/tokens", response_model=TokenList, tags=["access"], responses=_ADMIN)
def list_tokens(store: StoreDep) -> dict[str, Any]:
    """Every token, revoked ones included, oldest first; never a secret."""
    return {"tokens": [t.as_json() for t in tokens.list_tokens(store.engine)]}


@router.delete(
    "/api/v2/tokens/{name}", response_model=TokenList, tags=["access"],
    responses=error_responses(401, 403, 404, 422),
)
def revoke_token(name: str, request: Request, store: StoreDep) -> dict[str, Any]:
    """Revoke the token ``name``: refused from the next request on, in this process."""
    audit_target(request.scope, name)
    tokens.revoke_token(store.engine, name)
    _access(request).tokens.invalidate()
    return {"tokens": [t.as_json() for t in tokens.list_tokens(store.engine) if t.name == name]}


@router.get("/api/v2/audit", response_model=AuditList, tags=["access"], responses=_ADMIN)
def read_audit(
    request: Request,
    store: StoreDep,
    since: Annotated[str | None, time_query("Only entries at or after this time.")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """The audit log, oldest first, including everything queued up to this request."""
    after = parse_time(since, "since")
    _access(request).audit.flush()
    rows = tokens.read_audit(store.engine, since=None if after is None else
                             after.replace(tzinfo=None), limit=limit, offset=offset)
    return {"entries": [row.as_json() for row in rows]}
