"""``GET /api/v1/search``: datasets and jobs by name (Marquez's parameters and shape)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from fastapi import Query

from headwater.server.cursors import Cursor, CursorKey
from headwater.server.deps import StoreDep
from headwater.server.responses import SearchResultList
from headwater.server.routes.reading import ScopeDep, connection, read_router
from headwater.store.reads.search import search as search_names

__all__ = ["router"]

router = read_router()
# Each sort's order, as its cursor records it (see headwater.server.cursors).
_ORDERS = {
    "name": CursorKey(
        "search-name",
        ("text", "text", "text"),
        lambda item: (item["name"], item["namespace"], item["type"]),
    ),
    "updated_at": CursorKey(
        "search-updated_at",
        ("time", "text", "text", "text"),
        lambda item: (item["updatedAt"], item["name"], item["namespace"], item["type"]),
    ),
}


@router.get("/api/v1/search", response_model=SearchResultList, tags=["search"])
def search(
    q: Annotated[str, Query(min_length=1, description="Text in the name; % and _ are wildcards.")],
    store: StoreDep,
    scope: ScopeDep,
    filter: Literal["dataset", "job", "DATASET", "JOB"] | None = None,  # noqa: A002
    sort: Literal["name", "updated_at", "NAME", "UPDATED_AT"] = "name",
    limit: Annotated[int, Query(ge=1, le=10_000)] = 10,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """Datasets and jobs whose name contains ``q``, case-insensitively.

    By name, ties by namespace then type; by ``updated_at`` newest first, ties by name,
    namespace and type. ``nextCursor`` pages on (Marquez's search has no paging).
    """
    kind = cast(Literal["dataset", "job"] | None, filter.lower() if filter else None)
    order = cast(Literal["name", "updated_at"], sort.lower())
    key = _ORDERS[order]
    after = key.decode(cursor) if cursor else None
    with connection(store) as conn:
        results, total = search_names(conn, q, kind, order, limit, scope, after)
    return {"totalCount": total, "results": results, "nextCursor": key.next_cursor(results, limit)}
