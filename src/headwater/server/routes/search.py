"""``GET /api/v1/search``: datasets and jobs by name (Marquez's parameters and shape)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from fastapi import Query

from headwater.server.deps import StoreDep
from headwater.server.responses import SearchResultList
from headwater.server.routes.reading import connection, read_router
from headwater.store.reads.search import search as search_names

__all__ = ["router"]

router = read_router()


@router.get("/api/v1/search", response_model=SearchResultList, tags=["search"])
def search(
    q: Annotated[str, Query(min_length=1, description="Text in the name; % and _ are wildcards.")],
    store: StoreDep,
    filter: Literal["dataset", "job", "DATASET", "JOB"] | None = None,  # noqa: A002
    sort: Literal["name", "updated_at", "NAME", "UPDATED_AT"] = "name",
    limit: Annotated[int, Query(ge=1, le=10_000)] = 10,
) -> dict[str, Any]:
    """Datasets and jobs whose name contains ``q``, case-insensitively."""
    kind = cast(Literal["dataset", "job"] | None, filter.lower() if filter else None)
    order = cast(Literal["name", "updated_at"], sort.lower())
    with connection(store) as conn:
        results, total = search_names(conn, q, kind, order, limit)
    return {"totalCount": total, "results": results}
