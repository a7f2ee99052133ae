"""``GET /api/v2/quarantine``: the events the write path refused, with the reason.

Most producers keep nothing of a refused event; the server does (see
:mod:`headwater.store.quarantine`), so an operator can see what was refused,
why, how often it arrived, and send it again once fixed.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from headwater.server.deps import StoreDep
from headwater.server.routes.reading import Limit, Offset, connection, page, read_router
from headwater.store import quarantine
from headwater.store.reads.common import aware

__all__ = ["router"]

router = read_router()


class QuarantinedEvent(BaseModel):
    id: int
    receivedAt: datetime = Field(description="When it last arrived (UTC).")
    firstReceivedAt: datetime
    timesSeen: int = Field(description="How many times it arrived.")
    reason: str
    field: str | None = Field(None, description="Where in the event, when known.")
    status: int = Field(description="The status the producer got: 400 invalid, 422 refused.")
    payload: Any = Field(description="The value as received.")


class QuarantineList(BaseModel):
    totalCount: int
    events: list[QuarantinedEvent]


@router.get("/api/v2/quarantine", response_model=QuarantineList, tags=["quarantine"])
def list_quarantine(store: StoreDep, limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    """Refused events, most recently received first."""
    with connection(store) as conn:
        total, rows = quarantine.page(conn, page(limit, offset))
    return {"totalCount": total, "events": [_event(row) for row in rows]}


def _event(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "receivedAt": aware(row["last_received_at"]),
            "firstReceivedAt": aware(row["first_received_at"]), "timesSeen": row["times_seen"],
            "reason": row["reason"], "field": row["field"], "status": row["status"],
            "payload": json.loads(row["payload"])}
