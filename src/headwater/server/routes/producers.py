"""``GET /api/v2/producers``: every producer's arrivals, refusals and last arrival.

Counted for every producer from the events' ``producer`` URI and job
namespace (see :mod:`headwater.store.producers`), with the headwater agent's
own emission figures where it sends them, so an operator sees a silent or
spooling producer before a user does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from headwater.server.deps import StoreDep
from headwater.server.routes.reading import ScopeDep, connection, read_router
from headwater.store import producers
from headwater.store.reads.common import aware

__all__ = ["router"]

router = read_router()


class AgentFigures(BaseModel):
    runId: str = Field(description="The application run whose COMPLETE/FAIL carried them.")
    eventTime: datetime
    figures: dict[str, Any] = Field(
        description="The headwater_emission facet: queued, sent, retried, spooled, replayed, "
        "rejected, dropped; sendMs, captureMs, buildMs (count, p50, p95, max)."
    )


class Producer(BaseModel):
    producer: str = Field(
        description="The events' producer URI ('' when a refused value named none)."
    )
    namespace: str = Field(description="The events' job namespace ('' without a job).")
    firstSeen: datetime = Field(description="Start of the first hour kept (UTC).")
    lastSeen: datetime = Field(description="Last arrival, stored, duplicate or refused (UTC).")
    events: int = Field(description="Events stored over the hours kept (duplicates not counted).")
    rejected: int = Field(description="Events refused (quarantined) over the hours kept.")
    eventsLastHour: int
    eventsLast24h: int
    eventsPerHour: float = Field(description="The average over the last 24 hours.")
    rejectedLast24h: int
    agent: AgentFigures | None = Field(
        None,
        description="The latest emission figures a headwater agent sent; null for other producers.",
    )


class ProducerList(BaseModel):
    producers: list[Producer]


@router.get("/api/v2/producers", response_model=ProducerList, tags=["producers"])
def list_producers(store: StoreDep, scope: ScopeDep) -> dict[str, Any]:
    """Every producer per job namespace, by producer URI (for a token limited to
    namespaces, those of its job namespaces)."""
    now = datetime.now(UTC).replace(tzinfo=None)
    with connection(store) as conn:
        found = producers.read(conn, now)
    return {"producers": [as_json(f) for f in found if scope.sees(f.namespace)]}


def as_json(f: producers.ProducerFigures) -> dict[str, Any]:
    agent = None
    if f.agent is not None:
        agent = {
            "runId": f.agent["runId"],
            "eventTime": aware(f.agent["eventTime"]),
            "figures": f.agent["figures"],
        }
    return {
        "producer": f.producer,
        "namespace": f.namespace,
        "firstSeen": aware(f.first_seen),
        "lastSeen": aware(f.last_seen),
        "events": f.events,
        "rejected": f.rejected,
        "eventsLastHour": f.events_last_hour,
        "eventsLast24h": f.events_last_day,
        "eventsPerHour": round(f.events_per_hour, 3),
        "rejectedLast24h": f.rejected_last_day,
        "agent": agent,
    }
