"""``GET /api/v1/events/lineage``: the raw OpenLineage events, by time, with paging."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from headwater.server.cursors import Cursor, CursorKey
from headwater.server.deps import StoreDep
from headwater.server.responses import EventList
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    parse_time,
    read_router,
    time_query,
)
from headwater.store.reads.search import event_page

__all__ = ["router"]

router = read_router()
# The log's order per direction, as its cursor records it (see headwater.server.cursors).
_ORDERS = {
    "asc": CursorKey("events-asc", ("time", "int")),
    "desc": CursorKey("events-desc", ("time", "int")),
}


@router.get("/api/v1/events/lineage", response_model=EventList, tags=["events"])
def lineage_events(
    store: StoreDep,
    scope: ScopeDep,
    before: Annotated[str | None, time_query("Only events before this time.")] = None,
    after: Annotated[str | None, time_query("Only events after this time.")] = None,
    sortDirection: Literal["asc", "desc"] = "desc",  # noqa: N803 - Marquez's name
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """Events with ``after < eventTime < before``, newest first unless ``sortDirection=asc``.

    Each event is returned exactly as it was stored (duplicates were dropped on ingest);
    for a token limited to namespaces, only those about its namespaces, without the
    inputs, outputs and facet references outside them.
    """
    start, end = parse_time(after, "after"), parse_time(before, "before")
    order = _ORDERS[sortDirection]
    with connection(store) as conn:
        items, total, last = event_page(
            conn, order.page(limit, offset, cursor), end, start, sortDirection == "asc", scope
        )
    more = last is not None and limit > 0 and len(items) == limit
    return {
        "events": items,
        "totalCount": total,
        "nextCursor": order.encode(last) if more and last is not None else None,
    }
