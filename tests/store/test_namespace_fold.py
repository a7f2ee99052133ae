"""A catalog table named before any event tells its location joins the location's
dataset when the link arrives: the store is the one the other order makes, on
SQLite and PostgreSQL, in any order and batching of the events."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from headwater.events.parse import parse_event
from headwater.store import Store, aliases, fold, migrate, namespace_check, tags
from headwater.store import store as store_module
from headwater.store import tables as t
from headwater.store.extract import Facts
from headwater.store.keys import dataset_node
from headwater.store.namespace_rules import Normaliser, parse_rules
from tests.store.dump import dump
from tests.store.properties import emptied_store, store_property
from tests.support.lineage_events import RUN, complete_event, record, stored_datasets

RULES = parse_rules("""
[s3]
aliases = true
[paths]
trim_trailing_slash = true
[symlinks]
resolve = true
""")
HIVE = {"namespace": "hive://metastore", "name": "silver.orders"}
SCHEMA = {"fields": [{"name": "id", "type": "long"}, {"name": "amount", "type": "double"}]}


def _lineage(namespace: str, name: str) -> dict[str, Any]:
    return {
        "fields": {"id": {"inputFields": [{"namespace": namespace, "name": name, "field": "id"}]}}
    }


# Spark writes the table's location, naming the table in its symlinks facet.
SPARK = complete_event(
    "spark_job",
    2,
    inputs=[{"namespace": "s3://lake", "name": "bronze/orders"}],
    outputs=[
        {
            "namespace": "s3a://lake",
            "name": "silver/orders/",
            "facets": {
                "schema": SCHEMA,
                "symlinks": {"identifiers": [{**HIVE, "type": "TABLE"}]},
                "columnLineage": _lineage("s3://lake", "bronze/orders"),
            },
        }
    ],
)
# A query engine reads the table, sending its owners on the input (kept per event in
# dataset_facet_history), and reads another table of the catalog.
OWNERS = {"owners": [{"name": "team:silver", "type": "team"}]}
TRINO = complete_event(
    "report",
    3,
    inputs=[
        {**HIVE, "facets": {"ownership": OWNERS}},
        {"namespace": "hive://metastore", "name": "silver.x"},
    ],
)
# A loader writes the table by its catalog name, with a schema and column lineage.
LOADER = complete_event(
    "loader",
    5,
    inputs=[{"namespace": "s3://lake", "name": "bronze/orders"}],
    outputs=[
        {
            **HIVE,
            "facets": {
                "schema": SCHEMA,
                "tags": {"tags": [{"key": "pii", "value": "no", "source": "loader"}]},
                "columnLineage": _lineage("s3://lake", "bronze/orders"),
            },
        }
    ],
)
# A mart's column lineage names the table as a source (its own events do not).
MART = complete_event(
    "mart",
    6,
    outputs=[
        {
            "namespace": "s3://lake",
            "name": "gold/daily",
            "facets": {"columnLineage": _lineage("hive://metastore", "silver.orders")},
        }
    ],
)
# A catalog's dataset event about the table.
CATALOG = {
    "eventTime": "2026-01-01T00:00:07Z",
    "producer": "https://example.com/catalog",
    "schemaURL": "https://x/DatasetEvent",
    "dataset": {**HIVE, "facets": {"schema": SCHEMA}},
}
EVENTS = [SPARK, TRINO, LOADER, MART, CATALOG]


def _lineage_dump(store: Store) -> dict[str, list[str]]:
    # The raw log and the rules' record hold arrival times; the rest must match.
    skip = ("events", "namespace_rules_applied")
    return {k: v for k, v in dump(store).items() if k not in skip}


def test_the_table_named_first_joins_its_location_when_the_link_arrives(db_url: str) -> None:
    with emptied_store(db_url, RULES) as linked_first:
        record(linked_first, *EVENTS)
        expected = _lineage_dump(linked_first)
    with emptied_store(db_url, RULES) as store:
        # Every event naming the table comes before the one telling its location.
        for one in [TRINO, LOADER, MART, CATALOG]:
            record(store, one)
        assert ("hive://metastore", "silver.orders") in stored_datasets(store)
        record(store, SPARK)
        assert _lineage_dump(store) == expected
        names = stored_datasets(store)
        assert ("hive://metastore", "silver.orders") not in names
        assert {("s3://lake", "silver/orders"), ("hive://metastore", "silver.x")} <= names
        with store.engine.connect() as conn:
            assert aliases.resolve(conn, "hive://metastore", "silver.orders") == (
                "s3://lake",
                "silver/orders",
            )
            # The mart's column comes from the location's column, the loader's
            # output and the report's input are the location.
            source = conn.scalar(
                sa.select(t.datasets.c.name)
                .join(t.column_lineage, t.column_lineage.c.source_dataset_id == t.datasets.c.id)
                .join(t.runs, t.runs.c.uuid == t.column_lineage.c.run_uuid)
                .where(t.runs.c.uuid == f"{RUN}06")
            )
            assert source == "silver/orders"
            subjects = set(conn.scalars(sa.select(t.event_subjects.c.subject)))
            assert dataset_node("hive://metastore", "silver.orders") not in subjects
            assert [s.kind for s in namespace_check.check(conn, RULES)] == []
        # Idempotent: the same events again, and the link again, change nothing.
        record(store, SPARK, TRINO, LOADER)
        relinked = {**SPARK, "run": {"runId": f"{RUN}09"}, "eventTime": "2026-01-01T00:00:01Z"}
        record(store, relinked)
        with emptied_store(db_url, RULES) as again:
            record(again, *EVENTS, relinked)
            expected_again = _lineage_dump(again)
        assert _lineage_dump(store) == expected_again


def test_the_migration_fills_the_input_facets_under_the_names_the_rules_stored(
    db_url: str,
) -> None:
    with emptied_store(db_url, RULES) as store:
        record(store, *EVENTS)
        written = dump(store)["dataset_facet_history"]
        assert [json.loads(row)["subject"] for row in written] == [
            dataset_node("s3://lake", "silver/orders")
        ]
        migrate.downgrade(store.engine, "0023")
        migrate.upgrade(store.engine)
        assert dump(store)["dataset_facet_history"] == written


def test_a_namespace_left_empty_goes_with_the_table(db_url: str) -> None:
    with emptied_store(db_url, RULES) as store:
        record(store, LOADER)
        record(store, SPARK)
        with store.engine.connect() as conn:
            namespaces = set(conn.scalars(sa.select(t.namespaces.c.name)))
            sources = set(conn.scalars(sa.select(t.sources.c.name)))
        assert "hive://metastore" not in namespaces and "hive://metastore" not in sources
        # A table of the namespace named afterwards gets the namespace back.
        record(store, TRINO)
        assert ("hive://metastore", "silver.x") in stored_datasets(store)


def _lots(events: list[dict[str, Any]], cuts: list[int]) -> list[list[dict[str, Any]]]:
    bounds = sorted({c % (len(events) + 1) for c in cuts} | {0, len(events)})
    return [events[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@store_property(20)
@given(
    order=st.permutations(range(len(EVENTS))),
    cuts=st.lists(st.integers(0, len(EVENTS)), max_size=5),
)
def test_any_order_and_batching_makes_one_store(
    db_url: str, order: list[int], cuts: list[int]
) -> None:
    with emptied_store(db_url, RULES) as reference:
        record(reference, *EVENTS)
        expected = _lineage_dump(reference)
    with emptied_store(db_url, RULES) as store:
        for lot in _lots([EVENTS[i] for i in order], cuts):
            record(store, *lot)
        assert _lineage_dump(store) == expected


def test_a_batch_gathered_before_another_batch_carried_the_link_is_folded(db_url: str) -> None:
    # Server threads gather their batch's facts before taking the write lock: a
    # batch naming the table can be gathered before another thread's batch
    # carrying the link is written, and be written after it.
    with emptied_store(db_url, RULES) as linked_first:
        record(linked_first, SPARK, LOADER)
        expected = _lineage_dump(linked_first)
    with emptied_store(db_url, RULES) as store:
        loader = [parse_event(json.loads(json.dumps(LOADER)))]
        gathered = Facts.of(loader, Normaliser(RULES))
        record(store, SPARK)
        lot = store_module._Lot(loader, gathered)
        store._submit(lot)
        assert lot.error is None
        assert _lineage_dump(store) == expected


def test_tags_put_on_the_table_by_hand_move_to_its_location(db_url: str) -> None:
    with emptied_store(db_url, RULES) as store:
        record(store, LOADER)
        tags.create_tag(store.engine, "gold", None)
        tags.assign_tag(store.engine, "gold", dataset_node("hive://metastore", "silver.orders"))
        tags.assign_tag(store.engine, "gold", "datasetField:hive://metastore:silver.orders:id")
        record(store, SPARK)
        with store.engine.connect() as conn:
            assigned = {
                (row.subject, row.source) for row in conn.execute(sa.select(t.tag_assignments))
            }
        assert assigned == {
            ("dataset:s3://lake:silver/orders", "api"),
            ("datasetField:s3://lake:silver/orders:id", "api"),
            # The loader's own tag, written again under the location's name.
            ("dataset:s3://lake:silver/orders", "loader"),
        }


def test_a_table_another_process_stored_apart_is_folded_by_a_later_link(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Looked-up identifiers are not looked up again for a while: at 0 s, at once.
    monkeypatch.setattr(fold, "RECHECK_SECONDS", 0.0)
    with emptied_store(db_url, RULES) as store:
        other = Store.open(db_url)
        other.use_namespace_rules(RULES)  # reads the store's symlinks now: none yet
        try:
            record(store, SPARK)
            record(other, LOADER)  # before it reads the link the first store stored
            assert ("hive://metastore", "silver.orders") in stored_datasets(store)
        finally:
            other.close()
        record(store, {**SPARK, "run": {"runId": f"{RUN}09"}})
        assert ("hive://metastore", "silver.orders") not in stored_datasets(store)
        with store.engine.connect() as conn:
            loader_output = conn.scalar(
                sa.select(t.datasets.c.name)
                .join(t.run_outputs, t.run_outputs.c.dataset_id == t.datasets.c.id)
                .where(t.run_outputs.c.run_uuid == f"{RUN}05")
            )
        assert loader_output == "silver/orders"
