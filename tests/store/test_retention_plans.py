"""Retention's per-batch deletes find their rows through an index, never a table scan.

A scan in one of them costs every retention transaction the whole table while it
holds the write lock, so a retention's time grows with the square of the store
(see migration 0015). SQLite's plan is checked: its planner keeps an index
search for an ``IN`` list whatever the table's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from headwater.store import Store, drift
from headwater.store import tables as t
from headwater.store.retention import _NEXT_KEPT_SCHEMA

_KEYS = ["a" * 64, "b" * 64]

# Every delete and lookup that retention.prune runs per batch of runs.
_STATEMENTS = {
    "events by run": sa.select(t.events.c.event_hash).where(t.events.c.run_uuid.in_(_KEYS)),
    "event_subjects by event": sa.delete(t.event_subjects).where(
        t.event_subjects.c.event_hash.in_(_KEYS)
    ),
    "event_subjects by run node": sa.delete(t.event_subjects).where(
        t.event_subjects.c.subject.in_(_KEYS)
    ),
    "events by hash": sa.delete(t.events).where(t.events.c.event_hash.in_(_KEYS)),
    "versions by run": sa.select(t.dataset_versions.c.uuid).where(
        t.dataset_versions.c.run_uuid.in_(_KEYS)
    ),
    "facets by run": sa.delete(t.facets).where(t.facets.c.run_uuid.in_(_KEYS)),
    "run facets": sa.delete(t.facets).where(
        t.facets.c.kind == "run", t.facets.c.subject.in_(_KEYS)
    ),
    "run inputs": sa.delete(t.run_inputs).where(t.run_inputs.c.run_uuid.in_(_KEYS)),
    "run outputs": sa.delete(t.run_outputs).where(t.run_outputs.c.run_uuid.in_(_KEYS)),
    "runs": sa.delete(t.runs).where(t.runs.c.uuid.in_(_KEYS)),
}


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp("plans") / "headwater.db"
    store = Store.open(f"sqlite:///{path}")
    yield store
    store.close()


@pytest.mark.parametrize("name", sorted(_STATEMENTS))
def test_retention_statement_uses_an_index(sqlite_store: Store, name: str) -> None:
    statement = _STATEMENTS[name]
    sql = str(
        statement.compile(
            dialect=sqlite_store.engine.dialect, compile_kwargs={"literal_binds": True}
        )
    )
    with sqlite_store.engine.connect() as conn:
        plan = [row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}")]
    assert plan, sql
    assert all(" USING " in step and not step.startswith("SCAN") for step in plan), (name, plan)


# The statements a batch runs to re-derive the drifts around the versions it deletes:
# a search from each deleted version, and the chain between the versions left.
_DRIFT_STATEMENTS = {
    "next kept schema-bearing version": _NEXT_KEPT_SCHEMA.params(ids=_KEYS, runs=_KEYS),
    "chain between versions left": drift._CHAIN_BETWEEN.params(ids=_KEYS),
}


@pytest.mark.parametrize("name", sorted(_DRIFT_STATEMENTS))
def test_retention_drift_statement_searches_every_table(sqlite_store: Store, name: str) -> None:
    sql = str(
        _DRIFT_STATEMENTS[name].compile(
            dialect=sqlite_store.engine.dialect, compile_kwargs={"literal_binds": True}
        )
    )
    with sqlite_store.engine.connect() as conn:
        plan = [row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}")]
    searched = [step for step in plan if step.startswith(("SEARCH", "SCAN"))]
    assert searched, sql
    # The only scan is of the few bounds the statement computes (a CTE), never a table.
    assert all(step.startswith("SEARCH") or step == "SCAN since" for step in searched), plan
