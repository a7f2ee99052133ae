"""Small COMPLETE events for store tests, recorded as the server records them, and
the datasets a store holds afterwards."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from headwater.events.parse import parse_event
from headwater.store import Store
from headwater.store import tables as t

#: Run ids are this prefix and the event's two-digit number.
RUN = "0195e0c5-0000-7000-8000-0000000000"


def complete_event(
    job: str,
    n: int,
    inputs: Sequence[dict[str, Any]] = (),
    outputs: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The COMPLETE event of run ``{RUN}{n:02d}`` of job ``etl.{job}``, at second ``n``."""
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-01-01T00:00:{n:02d}Z",
        "producer": f"https://example.com/{job}",
        "schemaURL": "https://x/RunEvent",
        "run": {"runId": f"{RUN}{n:02d}"},
        "job": {"namespace": "etl", "name": job},
        "inputs": list(inputs),
        "outputs": list(outputs),
    }


def record(store: Store, *events: dict[str, Any]) -> list[bool]:
    """Record ``events`` in one batch, parsed from their JSON; whether each was a duplicate."""
    parsed = [parse_event(json.loads(json.dumps(e))) for e in events]
    return [r.duplicate for r in store.record(parsed)]


def stored_datasets(store: Store) -> set[tuple[str, str]]:
    """(namespace, name) of every dataset the store holds."""
    with store.engine.connect() as conn:
        return {
            (r.namespace, r.name)
            for r in conn.execute(
                sa.select(t.namespaces.c.name.label("namespace"), t.datasets.c.name).join(
                    t.namespaces, t.namespaces.c.id == t.datasets.c.namespace_id
                )
            )
        }
