"""What every read route shares: a database connection, paging and node-id parameters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import APIRouter, Query
from sqlalchemy.exc import SQLAlchemyError

from headwater.errors import StoreError
from headwater.graph.model import NodeId, NodeType
from headwater.server.handlers import RequestError
from headwater.server.routes.encoded import EncodedPathRoute
from headwater.store.reads.common import Page

__all__ = [
    "Limit",
    "Offset",
    "connection",
    "page",
    "parse_node_id",
    "parse_time",
    "read_router",
]

#: Marquez's paging parameters and defaults; limits over 10,000 are refused.
Limit = Annotated[int, Query(ge=0, le=10_000, description="How many items to return.")]
Offset = Annotated[int, Query(ge=0, description="How many items to skip.")]


def read_router() -> APIRouter:
    """A router for the read API whose path parameters may hold encoded slashes."""
    return APIRouter(route_class=EncodedPathRoute)


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


def parse_time(value: str | None, field: str) -> datetime | None:
    """An ISO-8601 query parameter (``Z`` or offset; none means UTC); 400 if malformed."""
    if value is None or value == "":
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise RequestError(
            f"{field} must be an ISO-8601 time such as 2026-01-31T12:00:00Z, not {value!r}",
            field=f"query.{field}",
        ) from exc
