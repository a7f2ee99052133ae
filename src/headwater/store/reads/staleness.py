"""Stale runs: a run whose producer beats a heartbeat and has gone silent.

A run's state is a function of its events: the server never invents a
terminal state for a run whose producer stopped talking (a long Spark action
sends nothing between START and COMPLETE, and a COMPLETE may still arrive).
What it can say at read time is that a run *looks* abandoned. A run is
**stale** when all of these hold at the moment of the read:

- its state is not terminal (its winning event is START or RUNNING);
- it is *heartbeat-tracked*: its producer (the ``producer`` of its newest
  event) matches a :class:`HeartbeatRule`, and the run itself has sent at least
  :data:`MIN_RUNNING` RUNNING events -- a producer seen beating for this very
  run, not one that sent a single progress report;
- the server has received nothing for the run for longer than its stale-after
  time: the rule's ``stale_after``, or :data:`CADENCE_FACTOR` times the run's
  own mean interval between RUNNING events when that is longer (a job
  checkpointing every 10 minutes is not stale after 5).

Silence is measured on the server's clock (``received_at`` of the run's newest
event), the cadence on the producer's (the RUNNING events' ``eventTime``), so a
producer whose clock is off neither hides nor fakes a silence. A late COMPLETE,
FAIL or ABORT makes the run terminal and so never stale; a late RUNNING makes
it fresh again. Nothing here is stored: the flag changes with the clock alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.store import tables as t
from headwater.store.reads.common import aware, chunks
from headwater.store.reads.runs import MARQUEZ_RUN_STATES, run_rows
from headwater.store.reads.scope import EVERYTHING, NamespaceScope

__all__ = [
    "CADENCE_FACTOR",
    "DEFAULT_HEARTBEAT_RULES",
    "MIN_RUNNING",
    "Heartbeat",
    "HeartbeatRule",
    "heartbeat_rules",
    "heartbeats",
    "run_liveness",
]

#: How many of a run's own RUNNING intervals it may stay silent before it is stale.
CADENCE_FACTOR = 3
#: RUNNING events a run must have sent before its producer counts as beating for it.
MIN_RUNNING = 2


@dataclass(frozen=True, slots=True)
class HeartbeatRule:
    """Producers known to send periodic RUNNING events.

    ``producer`` is a shell-style pattern (``*`` for any text) matched against
    the whole ``producer`` URI of a run's newest event; ``stale_after`` is the
    least silence, in seconds, that makes such a run stale.
    """

    producer: str
    stale_after: float

    def as_text(self) -> str:
        return f"{self.producer}={self.stale_after:g}s"


#: The OpenLineage Flink integration polls the job's checkpoints every 60 s by
#: default and sends a RUNNING per new checkpoint; headwater's agent sends a
#: streaming query's progress every 60 s by default. Five minutes is five beats.
DEFAULT_HEARTBEAT_RULES: tuple[HeartbeatRule, ...] = (
    HeartbeatRule("https://github.com/OpenLineage/OpenLineage/tree/*/integration/flink", 300.0),
    HeartbeatRule("https://github.com/headwater-lineage/headwater/tree/*/agent", 300.0),
)


def heartbeat_rules(pairs: Sequence[tuple[str, float]] | None) -> tuple[HeartbeatRule, ...]:
    """Rules from ``(pattern, seconds)`` pairs (the ``stale_producers`` setting);
    None means :data:`DEFAULT_HEARTBEAT_RULES`."""
    if pairs is None:
        return DEFAULT_HEARTBEAT_RULES
    return tuple(HeartbeatRule(pattern, seconds) for pattern, seconds in pairs)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """What the server heard from one run, and whether it is stale at ``checked_at``."""

    run_uuid: str
    producer: str | None
    running_events: int
    last_event_at: datetime
    #: Mean seconds between the run's RUNNING events (their event times); None below two.
    cadence: float | None
    #: The silence that makes this run stale; None when the run is not heartbeat-tracked.
    stale_after: float | None
    stale: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "producer": self.producer,
            "runningEvents": self.running_events,
            "cadenceSeconds": self.cadence,
            "staleAfterSeconds": self.stale_after,
        }


def _rule_for(producer: str | None, rules: Sequence[HeartbeatRule]) -> HeartbeatRule | None:
    if producer is None:
        return None
    return next((rule for rule in rules if fnmatchcase(producer, rule.producer)), None)


def _producers(conn: sa.Connection, event_ids: Sequence[int]) -> dict[int, str | None]:
    e = t.events
    found: dict[int, str | None] = {}
    for batch in chunks(sorted(event_ids)):
        for event_id, payload in conn.execute(
            sa.select(e.c.id, e.c.payload).where(e.c.id.in_(batch))
        ):
            producer = json.loads(payload).get("producer")
            found[event_id] = producer if isinstance(producer, str) else None
    return found


def heartbeats(
    conn: sa.Connection,
    run_uuids: Sequence[str],
    rules: Sequence[HeartbeatRule] = DEFAULT_HEARTBEAT_RULES,
    now: datetime | None = None,
) -> dict[str, Heartbeat]:
    """The heartbeat of each run of ``run_uuids`` the raw log holds events of.

    One grouped read of the runs' raw events (by the indexed ``run_uuid``) and
    one read of each run's newest event for its producer. ``now`` (aware)
    defaults to the clock.
    """
    checked_at = now or datetime.now(UTC)
    e, r = t.events, t.runs
    running = e.c.event_type == "RUNNING"
    rows: list[Any] = []
    for batch in chunks(sorted(set(run_uuids))):
        rows += conn.execute(
            sa.select(
                e.c.run_uuid,
                sa.func.sum(sa.case((running, 1), else_=0)),
                sa.func.min(sa.case((running, e.c.event_time))),
                sa.func.max(sa.case((running, e.c.event_time))),
                sa.func.max(e.c.received_at),
                sa.func.max(e.c.id),
                sa.select(r.c.state_rank).where(r.c.uuid == e.c.run_uuid).scalar_subquery(),
            )
            .where(e.c.run_uuid.in_(batch))
            .group_by(e.c.run_uuid)
        ).all()
    producers = _producers(conn, [row[5] for row in rows])
    result: dict[str, Heartbeat] = {}
    for run_uuid, count, first, last, received, newest, rank in rows:
        count = int(count or 0)
        cadence = None
        if count >= MIN_RUNNING and first is not None and last is not None:
            cadence = (last - first).total_seconds() / (count - 1)
        producer = producers.get(newest)
        rule = _rule_for(producer, rules)
        stale_after = None
        if rule is not None and count >= MIN_RUNNING:
            stale_after = max(rule.stale_after, CADENCE_FACTOR * (cadence or 0.0))
        last_event_at = aware(received)
        assert last_event_at is not None
        silence = (checked_at - last_event_at).total_seconds()
        # Rank 1: START or RUNNING won; a terminal state (2) is never stale.
        stale = stale_after is not None and rank == 1 and silence > stale_after
        result[run_uuid] = Heartbeat(
            run_uuid, producer, count, last_event_at, cadence, stale_after, stale
        )
    return result


def run_liveness(
    conn: sa.Connection,
    run_uuid: str,
    rules: Sequence[HeartbeatRule] = DEFAULT_HEARTBEAT_RULES,
    scope: NamespaceScope = EVERYTHING,
    now: datetime | None = None,
) -> dict[str, Any]:
    """A run's state as its events made it, and whether it is stale now.

    A run of a job outside ``scope`` is :class:`NotFoundError` like an unknown one.
    """
    rows = run_rows(conn, [run_uuid], scope)
    if not rows:
        raise NotFoundError(f"run '{run_uuid}' not found")
    row = rows[0]
    beat = heartbeats(conn, [run_uuid], rules, now).get(run_uuid)
    return {
        "id": row.uuid,
        "job": {"namespace": row.namespace, "name": row.job_name},
        "state": MARQUEZ_RUN_STATES.get(row.state or "", "NEW"),
        "stale": bool(beat and beat.stale),
        "startedAt": aware(row.started_at),
        "endedAt": aware(row.ended_at),
        "lastEventAt": beat.last_event_at if beat else None,
        "heartbeat": beat.as_dict() if beat and beat.stale_after is not None else None,
    }
