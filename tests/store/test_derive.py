"""Derived dataset columns follow their own facets whichever batch brings them.

Each batch re-derives only the columns its own facets and versions feed, so
a batch carrying one facet must leave the columns derived from the others as
the earlier batches left them, and still update its own.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from headwater.store import Store, tables as t
from tests.store.builders import dataset, facet, record, run_event

RUNS = [f"3f5e83fa-3480-44ff-99c5-ff943904e5{i:02d}" for i in range(6)]


def _dataset_row(store: Store) -> sa.Row[Any]:
    with store.engine.connect() as conn:
        (row,) = conn.execute(sa.select(t.datasets))
        return row


def _field_names(store: Store) -> list[str]:
    with store.engine.connect() as conn:
        return list(conn.scalars(sa.select(t.fields.c.name).order_by(t.fields.c.position)))


def _fields(row: sa.Row[Any]) -> list[str]:
    value = json.loads(row.fields) if isinstance(row.fields, str) else row.fields
    return [f["name"] for f in value]


def _read(time: str, run: str, ds: dict[str, Any]) -> dict[str, Any]:
    return run_event("COMPLETE", time, run, job="reader", inputs=[ds])


def test_each_facet_updates_its_column_and_leaves_the_others(store: Store) -> None:
    record(store, [_read("2024-01-01T00:00:00Z", RUNS[0],
                               dataset("file", "/t", [("a", "int"), ("b", "int")]))])
    row = _dataset_row(store)
    assert (_fields(row), row.description, row.source_name) == (["a", "b"], None, "file")
    assert _field_names(store) == ["a", "b"]

    # Documentation alone: description changes, fields stay.
    record(store, [_read("2024-01-02T00:00:00Z", RUNS[1], dataset(
        "file", "/t", documentation=facet(description="orders")))])
    row = _dataset_row(store)
    assert (_fields(row), row.description, row.source_name) == (["a", "b"], "orders", "file")

    # A data source alone; then a lifecycle change alone.
    record(store, [_read("2024-01-03T00:00:00Z", RUNS[2], dataset(
        "file", "/t", dataSource=facet(name="lake", uri="file:///")))])
    record(store, [_read("2024-01-04T00:00:00Z", RUNS[3], dataset(
        "file", "/t", lifecycleStateChange=facet(lifecycleStateChange="OVERWRITE")))])
    row = _dataset_row(store)
    assert (row.description, row.source_name, row.lifecycle_state) == (
        "orders", "lake", "OVERWRITE")
    assert row.current_version_uuid is None

    # A new schema changes fields and their rows; the rest stays.
    record(store, [_read("2024-01-05T00:00:00Z", RUNS[4],
                               dataset("file", "/t", [("c", "text")]))])
    row = _dataset_row(store)
    assert (_fields(row), row.description, row.source_name, row.lifecycle_state) == (
        ["c"], "orders", "lake", "OVERWRITE")
    assert _field_names(store) == ["c"]

    # A version alone (an output without facets) moves the current version only.
    record(store, [run_event("COMPLETE", "2024-01-06T00:00:00Z", RUNS[5], job="writer",
                                   outputs=[{"namespace": "file", "name": "/t"}])])
    row = _dataset_row(store)
    assert row.current_version_uuid is not None
    assert (_fields(row), row.description, row.source_name) == (["c"], "orders", "lake")


def test_an_older_facet_arriving_late_changes_nothing(store: Store) -> None:
    record(store, [_read("2024-01-02T00:00:00Z", RUNS[0], dataset(
        "file", "/t", [("new", "int")], documentation=facet(description="new")))])
    record(store, [_read("2024-01-01T00:00:00Z", RUNS[1], dataset(
        "file", "/t", [("old", "int")], documentation=facet(description="old")))])
    row = _dataset_row(store)
    assert (_fields(row), row.description) == (["new"], "new")
    assert _field_names(store) == ["new"]
