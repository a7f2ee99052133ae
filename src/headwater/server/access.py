"""Who may do what: bearer tokens with scopes, checked once per request in front of the app.

:class:`AccessGate` is the outermost ASGI middleware, so it sees every request
(the ingestion POSTs, the routes, ``/docs``, the UI) before anything else does.
For each it decides the scope the request needs (:func:`required_scope`):

- ``ingest``: ``POST /api/v1/lineage`` and ``POST /api/v1/lineage/batch``;
- ``admin``: every other method than GET/HEAD (deletes, tag writes, the Marquez
  PUTs and run writes, token management), and any GET of ``/api/v2/tokens`` or
  ``/api/v2/audit``;
- ``read``: every other GET under ``/api``, and ``/openapi.json``, ``/metrics``;
- none: ``GET /api/v1/health`` and the UI's static shells (``index.html`` for every
  page path, the ``/docs`` and ``/redoc`` pages, and ``/static/...``), which hold no
  data: their scripts read the API with the token the page keeps.

A server with neither ``--api-key`` nor a live token is open to everyone, as a
laptop server should be. Once either exists, a request needing a scope must carry
``Authorization: Bearer <secret>`` of a token holding that scope (``--api-key``
holds all three), except reads when ``--public-reads`` is set. A missing or
unknown token is a 401, a token without the scope a 403; both are audited
(rate-limited per client). A token limited to namespaces may read the paths
under ``/api/v1/namespaces/{one of them}`` and the reads of
:data:`NAMESPACE_FILTERED_READS`, whose answers are built for the token's
namespaces only (:class:`headwater.store.reads.scope.NamespaceScope`); a path
naming another namespace, and every other read, is refused with a 403, so a new
route is closed to such a token until it filters its answer.

Token digests are cached in memory (:class:`~headwater.server.token_cache.TokenCache`)
and reloaded at most every :data:`TOKEN_TTL_SECONDS`, at once after a change through
this process's API, and on an unknown secret at most every :data:`MISS_RELOAD_SECONDS`,
so an authenticated ingest request costs no database query; a reload runs in a
worker thread, so a slow database never holds up the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from headwater.errors import StoreError
from headwater.server.audit import AuditLog
from headwater.server.handlers import error_body
from headwater.server.principal import Principal
from headwater.server.token_cache import (
    ALL_SCOPES,
    MISS_RELOAD_SECONDS,
    TOKEN_TTL_SECONDS,
    TokenCache,
)
from headwater.store.access import AuditRow
from headwater.store.transactions import now_utc

if TYPE_CHECKING:
    from headwater.server.oidc import JwtVerifier

__all__ = [
    "ALL_SCOPES",
    "MISS_RELOAD_SECONDS",
    "NAMESPACE_FILTERED_READS",
    "OPEN",
    "PRINCIPAL_KEY",
    "TOKEN_TTL_SECONDS",
    "Access",
    "AccessGate",
    "Principal",
    "TokenCache",
    "audit_target",
    "principal_of",
    "required_scope",
]

#: Where the gate leaves the request's :class:`Principal` in the ASGI scope.
PRINCIPAL_KEY = "headwater.principal"
#: Where a route may name what it changed more precisely than its path, for the audit log.
_TARGET_KEY = "headwater.audit_target"

_INGEST_PATHS = {"/api/v1/lineage": "ingest", "/api/v1/lineage/batch": "ingest.batch"}
_READ_PREFIXES = ("/api/", "/openapi.json", "/metrics")
_ADMIN_READ_PREFIXES = ("/api/v2/tokens", "/api/v2/audit")
_NAMESPACES = "/api/v1/namespaces"
#: Reads whose answers are built for a namespace-limited token's namespaces only
#: (besides the paths under /api/v1/namespaces/{namespace}); the prefixes end in "/".
NAMESPACE_FILTERED_READS = frozenset({
    _NAMESPACES,
    "/openapi.json",  # the API's description holds no data of any namespace
    "/api/v1/lineage",
    "/api/v1/column-lineage",
    "/api/v1/runlineage/upstream",
    "/api/v1/search",
    "/api/v1/events/lineage",
    "/api/v1/jobs/runs/",
    "/api/v2/lineage",
    "/api/v2/impact",
    "/api/v2/drift",
    "/api/v2/drift/",  # one drift, 404 outside the namespaces; its impact walk stays inside
    "/api/v2/duplicates",
    "/api/v2/datasets/",  # quality and readers of one dataset, 404 outside the namespaces
    "/api/v2/owners",
    "/api/v2/propagation-blocks",
    "/api/v2/tag-definitions",  # the tags' rules, no data of any namespace
    "/api/v1/tags",
    "/api/v1/sources",
    "/api/v1/sources/",
    "/api/v2/classification",
    "/api/v2/classification/datasets",
    "/api/v2/compliance",
    "/api/v2/producers",
    "/api/v2/runs/",  # one run's liveness, 404 outside the namespaces
})


#: Everyone on a server with no token and no ``--api-key``.
OPEN = Principal(None, ALL_SCOPES)
_ANONYMOUS_READER = Principal(None, frozenset({"read"}))
_NOBODY = Principal(None, frozenset())


def principal_of(scope: Scope) -> Principal:
    """The principal the gate admitted for this request (OPEN for an app without the gate)."""
    found: Principal = scope.get(PRINCIPAL_KEY, OPEN)
    return found


def audit_target(scope: Scope, target: str) -> None:
    """Name what a write changed (a token's name), in place of its path, in the audit log."""
    scope[_TARGET_KEY] = target


def required_scope(method: str, path: str) -> str | None:
    """The scope a request needs; None for the allow-list (health, the UI shell)."""
    if method in ("GET", "HEAD"):
        if path == "/api/v1/health":
            return None
        if path.startswith(_ADMIN_READ_PREFIXES):
            return "admin"
        if path == "/api" or path.startswith(_READ_PREFIXES):
            return "read"
        return None  # index.html for a page path, /docs, /redoc, or an asset under /static/
    if method == "POST" and path in _INGEST_PATHS:
        return "ingest"
    return "admin"



@dataclass
class Access:
    """What the gate needs: the token cache, the audit log and the public-reads switch.

    ``audit_reads`` audits the requests that read with a scope (``read`` or
    ``admin``) too, not only writes and refusals; the health check and the UI's
    static shell need no scope and are never audited.
    """

    tokens: TokenCache
    audit: AuditLog
    public_reads: bool = False
    audit_reads: bool = False
    #: Bearer JWTs of an OpenID Connect issuer (``--oidc-issuer``); none: stored tokens only.
    jwt: JwtVerifier | None = None


class AccessGate:
    """ASGI middleware: authenticate, check the scope, audit writes and refusals."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        path: str = scope["path"]
        need = required_scope(method, path)
        audited = method not in ("GET", "HEAD") or (self.access.audit_reads and need is not None)
        cache = self.access.tokens
        try:
            if cache.stale():  # the query runs in a worker thread, never in the event loop
                await run_in_threadpool(cache.refresh)
            protected = cache.protected() or self.access.jwt is not None
        except StoreError as exc:
            await _refuse(scope, receive, send, 503,
                          error_body(f"database unavailable: {exc}", retriable=True))
            return
        principal = OPEN
        if protected and need is not None:
            refusal = await self._admit(scope, method, path, need)
            if isinstance(refusal, tuple):
                status, message = refusal
                principal_name = scope.get(PRINCIPAL_KEY, _NOBODY).name
                self.access.audit.refused(
                    _client(scope), principal_name, _operation(method, path), path,
                    "unauthenticated" if status == 401 else "forbidden", status,
                )
                headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
                await _refuse(scope, receive, send, status,
                              error_body(message, "Authorization"), headers)
                return
            principal = refusal
        scope[PRINCIPAL_KEY] = principal
        status_seen: list[int] = []

        async def send_marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_seen.append(message["status"])
                if principal.authenticated:
                    headers = MutableHeaders(scope=message)
                    existing = headers.get("cache-control")
                    if existing is None:
                        headers["Cache-Control"] = "private"
                    elif "private" not in existing:
                        headers["Cache-Control"] = f"private, {existing}"
            await send(message)

        try:
            await self.app(scope, receive, send_marked)
        finally:
            if audited:
                status = status_seen[0] if status_seen else 500
                self.access.audit.record(AuditRow(
                    now_utc(), principal.name, _client(scope), _operation(method, path),
                    scope.get(_TARGET_KEY, path), "ok" if status < 400 else "failed", status,
                ))

    async def _admit(self, scope: Scope, method: str, path: str,
                     need: str) -> Principal | tuple[int, str]:
        header = Headers(scope=scope).get("authorization")
        if header is None:
            if need == "read" and self.access.public_reads:
                return _ANONYMOUS_READER
            return 401, "this server requires Authorization: Bearer <token>"
        kind, _, secret = header.partition(" ")
        if kind.lower() != "bearer":
            return 401, "invalid token"
        cache = self.access.tokens
        secret = secret.strip()
        principal = cache.find(secret)
        if principal is None and self.access.jwt is not None:
            from headwater.server.oidc import looks_like_jwt

            if looks_like_jwt(secret):
                return await self._admit_jwt(scope, secret, need)
        if principal is None and cache.miss_reload_due():
            await run_in_threadpool(cache.reload)
            principal = cache.find(secret)
        if principal is None:
            return 401, "invalid token"
        return self._grant(scope, principal, need)

    async def _admit_jwt(self, scope: Scope, token: str,
                         need: str) -> Principal | tuple[int, str]:
        """A JWT's principal: keys fetched in a worker thread when stale or unknown."""
        from headwater.server.oidc import JwtRefused, UnknownKey

        verifier = self.access.jwt
        assert verifier is not None
        if verifier.stale():
            await run_in_threadpool(verifier.refresh)
        try:
            try:
                principal = verifier.principal(token)
            except UnknownKey:
                if not verifier.refresh_due():
                    raise
                await run_in_threadpool(verifier.refresh)
                principal = verifier.principal(token)
        except JwtRefused as exc:
            return 401, str(exc)
        return self._grant(scope, principal, need)

    def _grant(self, scope: Scope, principal: Principal,
               need: str) -> Principal | tuple[int, str]:
        """``principal`` if it holds ``need`` (and may see the path's namespace)."""
        scope[PRINCIPAL_KEY] = principal
        if need not in principal.scopes:
            return 403, f"token '{principal.name}' lacks the {need} scope"
        if principal.namespaces is not None and need != "ingest":
            denied = _namespace_refusal(principal, scope)
            if denied is not None:
                return 403, denied
        return principal


def _namespace_refusal(principal: Principal, scope: Scope) -> str | None:
    """Why a namespace-limited token may not make this request; None when it may."""
    raw: bytes = scope.get("raw_path") or scope["path"].encode()
    path = raw.decode("latin-1").split("?", 1)[0]
    if scope["method"] in ("GET", "HEAD") and (
        path.rstrip("/") in NAMESPACE_FILTERED_READS
        or any(path.startswith(p) for p in NAMESPACE_FILTERED_READS if p.endswith("/"))
    ):
        return None
    if path.startswith(_NAMESPACES + "/"):
        namespace = unquote(path[len(_NAMESPACES) + 1:].split("/", 1)[0])
        if principal.may_see(namespace):
            return None
        return f"token '{principal.name}' may not see namespace '{namespace}'"
    return (f"token '{principal.name}' is limited to namespaces; "
            f"{scope['path']} does not answer for a part of the namespaces")


def _operation(method: str, path: str) -> str:
    """The audit log's name for a request."""
    if method == "POST" and path in _INGEST_PATHS:
        return _INGEST_PATHS[path]
    if path.startswith("/api/v2/tokens"):
        return {"POST": "token.create", "DELETE": "token.revoke"}.get(method, "token.read")
    if path.startswith("/api/v2/audit"):
        return "audit.read"
    if "/tags" in path:
        return "tag"
    if method == "DELETE":
        return "delete"
    if method in ("GET", "HEAD"):
        return "read"
    return "write"


def _client(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int,
                  body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    await JSONResponse(body, status, headers=headers)(scope, receive, send)
