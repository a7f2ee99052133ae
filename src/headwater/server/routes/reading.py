"""What every read route shares: a database connection and its parameters.

Paging is bounded, node ids and times are parsed into 400s naming the parameter,
and no path or query parameter may hold a NUL character.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import APIRouter, Depends, Query, Request
from sqlalchemy.exc import SQLAlchemyError

from headwater.errors import StoreError
from headwater.events.parse import MAX_NAME_BYTES
from headwater.graph.model import NodeId, NodeType
from headwater.server.access import principal_of
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.routes.encoded import EncodedPathRoute
from headwater.store.reads.common import Page
from headwater.store.reads.scope import NamespaceScope

__all__ = [
    "Limit",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "Offset",
    "ScopeDep",
    "connection",
    "holds_nul",
    "namespace_scope",
    "node_id_query",
    "page",
    "parse_dataset_path",
    "parse_node_id",
    "parse_time",
    "parse_window",
    "read_router",
    "refuse_unstorable_parameters",
    "time_query",
]

#: The largest ``limit`` a list endpoint accepts.
MAX_LIMIT = 10_000
#: The largest ``offset``. The database reads and drops every row an offset skips, so
#: a deeper page costs more the deeper it is; past this, page with ``cursor``.
MAX_OFFSET = 100_000

#: Marquez's paging parameters and defaults; values out of range are a 400 naming them.
Limit = Annotated[
    int, Query(ge=0, le=MAX_LIMIT, description=f"How many items to return, 0 to {MAX_LIMIT}.")
]
Offset = Annotated[
    int,
    Query(
        ge=0,
        le=MAX_OFFSET,
        description=f"How many items to skip, 0 to {MAX_OFFSET:,}; deeper, page with `cursor`.",
    ),
]


async def namespace_scope(request: Request) -> NamespaceScope:
    """The namespaces the request's token may see (all for a token without namespaces)."""
    return NamespaceScope.of(principal_of(request.scope).namespaces)


#: The reads' :class:`NamespaceScope`, for routes that pass it down to the store.
ScopeDep = Annotated[NamespaceScope, Depends(namespace_scope)]


def node_id_query(*allowed: NodeType) -> Any:
    """A ``nodeId`` query parameter of the ``allowed`` types (all when none are named).

    The document gives the id's prefix as a pattern; :func:`parse_node_id` checks it.
    """
    prefixes = [t.prefix for t in (allowed or tuple(NodeType))]
    return Query(
        description="A node id: " + ", ".join(f"`{p}:...`" for p in prefixes) + ".",
        json_schema_extra={"pattern": f"^({'|'.join(prefixes)}):"},
    )


def time_query(description: str) -> Any:
    """An ISO-8601 time query parameter, read with :func:`parse_time`."""
    return Query(description=description, json_schema_extra={"format": "date-time"})


def read_router() -> APIRouter:
    """A router for the read API whose path parameters may hold encoded slashes.

    Every route on it reads or writes the database, so each may answer 503; none
    takes a parameter no store could hold (400): a NUL character, or a path
    parameter longer than any stored name.
    """
    return APIRouter(
        route_class=EncodedPathRoute,
        dependencies=[Depends(refuse_unstorable_parameters)],
        responses=error_responses(503),
    )


async def refuse_unstorable_parameters(request: Request) -> None:
    """A parameter holding a NUL character, or a path parameter (a name) longer than
    :data:`~headwater.events.parse.MAX_NAME_BYTES` UTF-8 bytes, is a 400 naming it.

    Names are bounded as the event check bounds them, so a write through the
    Marquez API never reaches a database index with a key it cannot hold.
    """
    for where, items in (
        ("path", request.path_params.items()),
        ("query", request.query_params.multi_items()),
    ):
        for name, value in items:
            if holds_nul(value):
                raise RequestError(
                    f"{name} must not contain a NUL character", field=f"{where}.{name}"
                )
            if where == "path" and isinstance(value, str) and \
                    len(value.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
                raise RequestError(f"{name} is longer than {MAX_NAME_BYTES} bytes",
                                   field=f"{where}.{name}")


def holds_nul(value: Any) -> bool:
    """Whether ``value`` (a string, or JSON holding strings) has a NUL character in it.

    PostgreSQL text cannot hold one: a value that does is refused with a 400 before
    it reaches the database, so both databases answer alike.
    """
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(holds_nul(key) or holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(holds_nul(item) for item in value)
    return False


def page(limit: int, offset: int) -> Page:
    return Page(limit=limit, offset=offset)


@contextmanager
def connection(store: Any) -> Iterator[sa.Connection]:
    """One read connection for a request; database failures become :class:`StoreError`."""
    try:
        with store.engine.connect() as conn:
            yield conn
    except SQLAlchemyError as exc:
        raise StoreError(str(exc).splitlines()[0]) from exc


def parse_node_id(
    value: str, field: str = "nodeId", allowed: tuple[NodeType, ...] | None = None
) -> NodeId:
    """Parse a node id parameter; a malformed or unsupported one is a 400 naming ``field``."""
    try:
        node = NodeId.parse(value)
    except ValueError as exc:
        raise RequestError(str(exc), field=f"query.{field}") from exc
    if allowed is not None and node.type not in allowed:
        kinds = ", ".join(t.prefix for t in allowed)
        raise RequestError(
            f"{field} must be a {kinds} node id, not {value!r}", field=f"query.{field}"
        )
    return node


def parse_dataset_path(value: str) -> NodeId:
    """The ``{nodeId}`` of a per-dataset endpoint (``/api/v2/datasets/{nodeId}/...``):
    a dataset node id without a version, else a 400 naming ``nodeId``."""
    node = parse_node_id(value, "nodeId", (NodeType.DATASET,))
    if node.version:
        raise RequestError(
            "nodeId must name a dataset, not one of its versions", field="path.nodeId"
        )
    return node


def parse_window(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    """The ``since`` and ``until`` query parameters of a time window, each parsed by
    :func:`parse_time` (left out: None, for the endpoint's own default)."""
    return parse_time(since, "since"), parse_time(until, "until")


def parse_time(value: str | None, field: str) -> datetime | None:
    """An ISO-8601 query parameter (``Z`` or offset; none means UTC) as an aware UTC time.

    Malformed, or outside the years 1 to 9999 once in UTC, is a 400 naming ``field``.
    """
    if value is None or value == "":
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise RequestError(
            f"{field} must be an ISO-8601 time such as 2026-01-31T12:00:00Z, not {value!r}",
            field=f"query.{field}",
        ) from exc
