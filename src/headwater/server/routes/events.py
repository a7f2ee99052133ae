"""``GET /api/v1/events/lineage``: the raw OpenLineage events, by time, with paging."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from headwater.server.deps import StoreDep
from headwater.server.responses import EventList
from headwater.server.routes.reading import (
    Limit,
    Offset,
    connection,
    page,
    parse_time,
    read_router,
    time_query,
)
from headwater.store.reads.search import list_events

__all__ = ["router"]

router = read_router()


@router.get("/api/v1/events/lineage", response_model=EventList, tags=["events"])
def lineage_events(
    store: StoreDep,
    before: Annotated[str | None, time_query("Only events before this time.")] = None,
    after: Annotated[str | None, time_query("Only events after this time.")] = None,
    sortDirection: Literal["asc", "desc"] = "desc",  # noqa: N803 - Marquez's name
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Events with ``after < eventTime < before``, newest first unless ``sortDirection=asc``.

    Each event is returned exactly as it was stored (duplicates were dropped on ingest).
    """
    start, end = parse_time(after, "after"), parse_time(before, "before")
    with connection(store) as conn:
        items, total = list_events(conn, page(limit, offset), end, start, sortDirection == "asc")
    return {"events": items, "totalCount": total}
