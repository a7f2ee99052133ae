"""Per-producer figures: who sends events, how many, how many were refused, and when last.

Every producer is counted, whatever sends it -- headwater's agent, the
OpenLineage Java listener, ``openlineage-python`` -- from what each event
already carries: its ``producer`` URI and its job's namespace. So an
operator sees a producer fall silent before a user does.

* ``producer_hours``: per (producer, namespace, received hour) the events
  stored, the events refused, and the last arrival. The write path adds to
  it inside the transaction that stores the events (one statement per
  transaction, whatever the number of requests it groups); the quarantine
  adds the refusals in its own transaction. Counts go by the hour the server
  received them, since "silent" is about arrival, not event time; rebuilding
  a store counts its events again at the hour of the rebuild.
* ``producer_agents``: the latest ``headwater_emission`` run facet per
  (producer, namespace) -- the agent's own figures (queued, sent, spooled,
  dropped, send latency) that the server cannot see otherwise. Latest by
  (event time, event hash), so it is a function of the set of events.

Retention drops the hours before its window (:func:`prune`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from headwater.store import dialects
from headwater.store.tables import JSONType, metadata

__all__ = [
    "EMISSION_FACET",
    "ProducerFigures",
    "add_statement",
    "arrival_rows",
    "hour_of",
    "producer_agents",
    "producer_hours",
    "prune",
    "read",
    "record_agents",
    "record_refusals",
]

#: The agent's run facet with its own emission figures (``headwater.agent.emission``).
EMISSION_FACET = "headwater_emission"
# Producer URIs are free text; longer ones are cut so the key fits an index.
_MAX_PRODUCER = 512

producer_hours = sa.Table(
    "producer_hours",
    metadata,
    sa.Column("producer", sa.Text(), primary_key=True),
    sa.Column("namespace", sa.Text(), primary_key=True),  # the job's; '' without a job
    sa.Column("hour", sa.DateTime(), primary_key=True),  # received, truncated to the hour
    sa.Column("events", sa.BigInteger(), nullable=False),
    sa.Column("rejected", sa.BigInteger(), nullable=False),
    sa.Column("last_seen", sa.DateTime(), nullable=False),
    sa.Index("ix_producer_hours_hour", "hour"),
)

producer_agents = sa.Table(
    "producer_agents",
    metadata,
    sa.Column("producer", sa.Text(), primary_key=True),
    sa.Column("namespace", sa.Text(), primary_key=True),
    sa.Column("run_uuid", sa.Text(), nullable=False),
    sa.Column("event_time", sa.DateTime(), nullable=False),
    sa.Column("event_hash", sa.String(64), nullable=False),
    sa.Column("figures", JSONType, nullable=False),
)


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def _storable(value: Any) -> str:
    """``value`` as text either database stores: a refused event may name its producer
    or namespace with a lone surrogate or a NUL, which no text column takes."""
    if not isinstance(value, str):
        return ""
    text = value.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")
    return text[:_MAX_PRODUCER]


def _key(event: Mapping[str, Any]) -> tuple[str, str]:
    job = event.get("job")
    namespace = job.get("namespace") if isinstance(job, Mapping) else None
    return _storable(event.get("producer")), _storable(namespace)


_statements: dict[tuple[str, str], Any] = {}


def add_statement(dialect: str) -> Any:
    """INSERT ... ON CONFLICT adding the counts and keeping the latest arrival."""
    found = _statements.get((dialect, "add"))
    if found is None:
        stmt = dialects.insert(dialect, producer_hours)
        c, new = producer_hours.c, stmt.excluded
        found = stmt.on_conflict_do_update(
            index_elements=[c.producer, c.namespace, c.hour],
            set_={
                "events": c.events + new.events,
                "rejected": c.rejected + new.rejected,
                "last_seen": sa.case(
                    (new.last_seen > c.last_seen, new.last_seen), else_=c.last_seen
                ),
            },
        )
        _statements[(dialect, "add")] = found
    return found


def _agent_statement(dialect: str) -> Any:
    """INSERT ... ON CONFLICT keeping the facet of the latest (event time, event hash)."""
    found = _statements.get((dialect, "agent"))
    if found is None:
        stmt = dialects.insert(dialect, producer_agents)
        c, new = producer_agents.c, stmt.excluded
        newer = sa.or_(
            new.event_time > c.event_time,
            sa.and_(new.event_time == c.event_time, new.event_hash > c.event_hash),
        )
        found = stmt.on_conflict_do_update(
            index_elements=[c.producer, c.namespace],
            set_={
                "run_uuid": new.run_uuid,
                "event_time": new.event_time,
                "event_hash": new.event_hash,
                "figures": new.figures,
            },
            where=newer,
        )
        _statements[(dialect, "agent")] = found
    return found


def _rows(
    counts: dict[tuple[str, str, datetime], list[int]], when: datetime
) -> list[dict[str, Any]]:
    # Sorted, so two PostgreSQL writers lock the rows in one order (no deadlock).
    return [
        {"producer": p, "namespace": n, "hour": h, "events": e, "rejected": r, "last_seen": when}
        for (p, n, h), (e, r) in sorted(counts.items())
    ]


def arrival_rows(
    arrived: Iterable[Mapping[str, Any]],
    stored: Iterable[Mapping[str, Any]],
    received: datetime,
) -> list[dict[str, Any]]:
    """``producer_hours`` rows counting the ``stored`` events and noting every ``arrived``
    one (duplicates too) as seen; the write path runs them with :func:`add_statement`."""
    hour = hour_of(received)
    counts: dict[tuple[str, str, datetime], list[int]] = {}
    for event in arrived:
        counts.setdefault((*_key(event), hour), [0, 0])
    for event in stored:
        counts.setdefault((*_key(event), hour), [0, 0])[0] += 1
    return _rows(counts, received)


def record_refusals(conn: sa.Connection, refused: Iterable[Any], received: datetime) -> None:
    """Count refused values (decoded JSON, any shape) against their producer, when one is named."""
    hour = hour_of(received)
    counts: dict[tuple[str, str, datetime], list[int]] = {}
    for value in refused:
        key = _key(value) if isinstance(value, Mapping) else ("", "")
        counts.setdefault((*key, hour), [0, 0])[1] += 1
    rows = _rows(counts, received)
    if rows:
        conn.execute(add_statement(conn.dialect.name), rows)


def record_agents(
    conn: sa.Connection, events: Iterable[tuple[Mapping[str, Any], datetime, str]]
) -> None:
    """Keep the latest emission facet of each producer among ``(event, time, hash)``."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for event, time, event_hash in events:
        run = event.get("run")
        facets = run.get("facets") if isinstance(run, Mapping) else None
        figures = facets.get(EMISSION_FACET) if isinstance(facets, Mapping) else None
        if not isinstance(figures, Mapping):
            continue
        key = _key(event)
        row = {
            "producer": key[0],
            "namespace": key[1],
            "run_uuid": str(run.get("runId", "")),
            "event_time": time,
            "event_hash": event_hash,
            "figures": {k: v for k, v in figures.items() if not k.startswith("_")},
        }
        held = latest.get(key)
        if held is None or (time, event_hash) > (held["event_time"], held["event_hash"]):
            latest[key] = row
    if latest:
        conn.execute(_agent_statement(conn.dialect.name), [latest[k] for k in sorted(latest)])


@dataclass(frozen=True)
class ProducerFigures:
    """One producer in one namespace, over the hours the store keeps."""

    producer: str
    namespace: str
    first_seen: datetime  # the start of the first hour kept
    last_seen: datetime
    events: int
    rejected: int
    events_last_hour: int  # received in the 60 minutes before now (by whole hours, see read)
    events_last_day: int
    rejected_last_day: int
    agent: Mapping[str, Any] | None  # the latest emission facet's figures, run and time

    @property
    def events_per_hour(self) -> float:
        """The average over the last 24 hours."""
        return self.events_last_day / 24.0


def read(conn: sa.Connection, now: datetime) -> list[ProducerFigures]:
    """Every producer's figures, by producer and namespace.

    ``events_last_hour`` adds the current hour and the part of the previous
    hour that lies within the last 60 minutes, pro rata.
    """
    h = producer_hours.c
    this_hour = hour_of(now)
    previous = this_hour - timedelta(hours=1)
    day = this_hour - timedelta(hours=23)

    def within(since: datetime, column: Any) -> Any:
        return sa.func.coalesce(sa.func.sum(sa.case((h.hour >= since, column), else_=0)), 0)

    query = (
        sa.select(
            h.producer,
            h.namespace,
            sa.func.min(h.hour).label("first"),
            sa.func.max(h.last_seen).label("last"),
            sa.func.sum(h.events).label("events"),
            sa.func.sum(h.rejected).label("rejected"),
            within(this_hour, h.events).label("this_hour"),
            within(previous, h.events).label("two_hours"),
            within(day, h.events).label("day"),
            within(day, h.rejected).label("rejected_day"),
        )
        .group_by(h.producer, h.namespace)
        .order_by(h.producer, h.namespace)
    )
    agents = {(r.producer, r.namespace): r for r in conn.execute(sa.select(producer_agents))}
    out: list[ProducerFigures] = []
    share = 1.0 - (now - this_hour).total_seconds() / 3600.0
    for row in conn.execute(query):
        this = int(row.this_hour)
        before = int(row.two_hours) - this
        agent = agents.get((row.producer, row.namespace))
        figures = agent.figures if agent is not None else None
        if isinstance(figures, str):
            figures = json.loads(figures)
        out.append(
            ProducerFigures(
                producer=row.producer,
                namespace=row.namespace,
                first_seen=row.first,
                last_seen=row.last,
                events=int(row.events),
                rejected=int(row.rejected),
                events_last_hour=this + round(before * share),
                events_last_day=int(row.day),
                rejected_last_day=int(row.rejected_day),
                agent=None
                if agent is None
                else {"runId": agent.run_uuid, "eventTime": agent.event_time, "figures": figures},
            )
        )
    return out


def prune(conn: sa.Connection, before: datetime) -> int:
    """Delete the hours wholly before ``before``; the number of rows deleted."""
    result = conn.execute(sa.delete(producer_hours).where(producer_hours.c.hour < hour_of(before)))
    return int(result.rowcount or 0)
