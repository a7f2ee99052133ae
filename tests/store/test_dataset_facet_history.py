"""The dataset facets runs' inputs sent, kept per event in ``dataset_facet_history``, on
both databases: retention deletes a run's rows but keeps those in force at its cutoff,
what it leaves equals the raw log's recomputation, and the migration fills the table
from the raw log with the rows the write path writes."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import sqlalchemy as sa

from headwater.store import Store, migrate
from headwater.store.dataset_facet_history import dataset_facet_history
from headwater.store.reads.classification import owners_at
from headwater.store.reads.nodes import _failed_assertions
from headwater.store.retention import prune
from tests.server.test_retention import KEEP, NOW
from tests.store.builders import dataset, facet, record, run_event
from tests.store.dump import dump
from tests.store.ownership_nights import owned_nights

CLEAN = "dataset:file:/lake/clean/orders"
TABLE = "dataset_facet_history"
# The revision before the table's: downgrading to it drops the table.
BEFORE = "0023"


def _in_force(store: Store, moments: list[datetime]) -> dict[datetime, tuple[list[str], int]]:
    """The clean orders' facet owners and failed assertions at each of ``moments``."""
    with store.engine.connect() as conn:
        return {
            moment: (
                [o["name"] for o in owners_at(conn, [CLEAN], moment)[CLEAN]],
                _failed_assertions(conn, [CLEAN], moment).get(CLEAN, 0),
            )
            for moment in moments
        }


def _count(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(dataset_facet_history)))


def _refilled(store: Store) -> list[str]:
    """The table as the migration fills it from the raw log."""
    migrate.downgrade(store.engine, BEFORE)
    migrate.upgrade(store.engine)
    return dump(store)[TABLE]


def test_retention_keeps_the_input_facets_in_force_at_its_cutoff(store: Store) -> None:
    record(store, [event for night in owned_nights() for event in night])
    cutoff = NOW - KEEP
    moments = [cutoff, cutoff + timedelta(days=20), NOW]
    before = _in_force(store, moments)
    # Night 42 sent readers:1 and a failing assertion; night 142 readers:5, failing.
    assert before[cutoff] == (["readers:1"], 1)
    assert before[cutoff + timedelta(days=20)] == (["readers:2"], 0)
    assert before[NOW] == (["readers:5"], 1)
    kept_before = _count(store)
    assert prune(store.engine, KEEP, now=NOW, settle=0).runs > 0
    assert _in_force(store, moments) == before
    # Night 17's owners and assertions were replaced before the cutoff: its rows went.
    assert _count(store) == kept_before - 2
    pruned = dump(store)[TABLE]
    assert _refilled(store) == pruned


def test_the_migration_fills_the_table_as_the_write_path_writes_it(store: Store) -> None:
    record(store, [event for night in owned_nights()[:90] for event in night])
    # One event reading a dataset twice (the first counts), a JobEvent's output, a null
    # facet (kept nowhere), and a DatasetEvent (kept with its version instead).
    owners = facet(owners=[{"name": "a", "type": "team"}])
    other = facet(owners=[{"name": "b", "type": "team"}])
    twice = [dataset("f", "x", ownership=owners), dataset("f", "x", ownership=other)]
    record(
        store,
        [
            run_event(
                "COMPLETE",
                "2024-01-01T00:00:00Z",
                "00000000-0000-4000-8000-000000000001",
                inputs=twice,
            )
        ],
    )
    record(
        store,
        [
            {
                "eventTime": "2024-01-01T00:00:01Z",
                "producer": "p",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
                "job": {"namespace": "bi", "name": "dash", "facets": {}},
                "outputs": [dataset("f", "y", ownership=owners, dataQualityMetrics=None)],
            },
            {
                "eventTime": "2024-01-01T00:00:02Z",
                "producer": "p",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
                "dataset": dataset("f", "z", ownership=owners),
            },
        ],
    )
    written = dump(store)[TABLE]
    rows = [json.loads(row) for row in written]
    assert {row["subject"] for row in rows} == {"dataset:f:x", "dataset:f:y", CLEAN}
    [x] = [row for row in rows if row["subject"] == "dataset:f:x"]
    assert x["payload"]["owners"] == [{"name": "a", "type": "team"}]
    assert _refilled(store) == written
