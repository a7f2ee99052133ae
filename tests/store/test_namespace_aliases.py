"""Namespace rules in the store, on SQLite and PostgreSQL: one node per dataset
whatever the producer's spelling, raw names kept as aliases, the raw log as sent."""

from __future__ import annotations

import itertools
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from headwater.store import Store, aliases, namespace_check
from headwater.store import store as store_module
from headwater.store import tables as t
from headwater.store.namespace_rules import parse_rules
from tests.store.dump import dump
from tests.support.lineage_events import complete_event, record, stored_datasets

RULES = parse_rules("""
[s3]
aliases = true
[paths]
trim_trailing_slash = true
[[kafka.clusters]]
name = "orders-cluster"
brokers = ["b1:9092", "b2:9092"]
[symlinks]
resolve = true
""")


def topic(namespace: str, facets: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"namespace": namespace, "name": "orders", "facets": facets or {}}


# Kafka Connect writes the topic naming broker b2, Spark reads it by a bootstrap
# list starting with b1, with a column lineage naming yet another spelling.
CONNECT = complete_event("connector", 1, outputs=[topic("kafka://b2:9092")])
SPARK = complete_event(
    "spark_job",
    2,
    inputs=[topic("kafka://b1:9092,b2:9092")],
    outputs=[
        {
            "namespace": "s3a://lake",
            "name": "silver/orders/",
            "facets": {
                "columnLineage": {
                    "fields": {
                        "id": {
                            "inputFields": [
                                {
                                    "namespace": "kafka://PLAINTEXT://B2:9092",
                                    "name": "orders",
                                    "field": "value",
                                }
                            ]
                        }
                    }
                },
                "symlinks": {
                    "identifiers": [
                        {"namespace": "hive://metastore", "name": "silver.orders", "type": "TABLE"}
                    ]
                },
            },
        }
    ],
)
# A query engine reads the table by its catalog name.
TRINO = complete_event(
    "report", 3, inputs=[{"namespace": "hive://metastore", "name": "silver.orders"}]
)


def test_two_producers_naming_one_topic_differently_meet_on_one_node(store: Store) -> None:
    assert store.use_namespace_rules(RULES) is None  # an empty store takes the rules
    assert record(store, CONNECT, SPARK, TRINO) == [False, False, False]
    assert stored_datasets(store) == {
        ("kafka://orders-cluster", "orders"),
        ("s3://lake", "silver/orders"),
    }
    with store.engine.connect() as conn:
        edges = conn.execute(sa.select(sa.func.count()).select_from(t.column_lineage)).scalar()
        assert edges == 1
        assert aliases.resolve(conn, "kafka://b2:9092", "orders") == (
            "kafka://orders-cluster",
            "orders",
        )
        assert aliases.resolve(conn, "kafka://PLAINTEXT://B2:9092", "orders") == (
            "kafka://orders-cluster",
            "orders",
        )
        assert aliases.resolve(conn, "hive://metastore", "silver.orders") == (
            "s3://lake",
            "silver/orders",
        )
        assert aliases.resolve(conn, "s3a://lake", "silver/orders/") == (
            "s3://lake",
            "silver/orders",
        )
        # A dataset's own name is not an alias; an unknown name resolves to nothing.
        assert aliases.resolve(conn, "s3://lake", "silver/orders") is None
        assert aliases.resolve(conn, "kafka://b9:9092", "orders") is None
        # The raw log keeps the events as sent.
        payloads = [json.loads(p) for (p,) in conn.execute(sa.select(t.events.c.payload))]
        assert {p["job"]["name"]: p for p in payloads}["connector"]["outputs"][0][
            "namespace"
        ] == "kafka://b2:9092"
        assert aliases.rules_in_force(conn) == RULES.fingerprint
        assert namespace_check.check(conn, RULES) == []
    # The same event again is one event: idempotency is unchanged by the rules.
    assert record(store, CONNECT, TRINO) == [True, True]


def test_the_outcome_is_the_same_in_any_order_and_any_batching(db_url: str, tmp_path: Path) -> None:
    dumps = []
    orders = list(itertools.permutations([CONNECT, SPARK, TRINO]))
    for i, order in enumerate([orders[0], orders[-1], orders[2]]):
        url = db_url if i == 0 else f"sqlite:///{tmp_path / f'order{i}.db'}"
        with Store.open(url) as store:
            store.use_namespace_rules(RULES)
            if i == 2:
                for one in order:  # one transaction per event
                    record(store, one)
            else:
                record(store, *order)
            dumps.append(
                {
                    k: v
                    for k, v in dump(store).items()
                    if k not in ("namespace_rules_applied", "events")
                }
            )
    assert dumps[0] == dumps[1] == dumps[2]


def test_without_rules_names_stay_as_sent_and_check_finds_the_splits(store: Store) -> None:
    assert store.use_namespace_rules(None) is None
    slash = complete_event("copy", 4, inputs=[{"namespace": "s3://lake", "name": "silver/orders"}])
    record(store, CONNECT, SPARK, TRINO, slash)
    names = stored_datasets(store)
    assert ("kafka://b2:9092", "orders") in names and ("kafka://b1:9092,b2:9092", "orders") in names
    with store.engine.connect() as conn:
        assert not aliases.any_aliases(conn)
        found = {(s.kind, s.datasets, s.certain) for s in namespace_check.check(conn)}
        rules = {s.kind: s.rule for s in namespace_check.check(conn)}
    kafka = ("kafka://PLAINTEXT://B2:9092", "orders")
    assert (
        "kafka",
        tuple(
            sorted({("kafka://b1:9092,b2:9092", "orders"), ("kafka://b2:9092", "orders"), kafka})
        ),
        True,
    ) in found
    assert (
        "trailing-slash",
        (("s3://lake", "silver/orders"), ("s3://lake", "silver/orders/")),
        True,
    ) in found
    assert (
        "symlink",
        (("hive://metastore", "silver.orders"), ("s3://lake", "silver/orders/")),
        True,
    ) in found
    assert (
        rules["kafka"] == '[[kafka.clusters]]\nname = "CLUSTER"\nbrokers = ["b1:9092", "b2:9092"]'
    )
    assert rules["symlink"] == "[symlinks]\nresolve = true"
    # Rules given to a store derived without them: said, not applied backwards.
    changed = store.use_namespace_rules(RULES)
    assert changed is not None and "headwater rebuild --from-raw" in changed
    assert RULES.fingerprint in changed


def test_s3_schemes_and_an_unrelated_cluster_are_told_apart(store: Store) -> None:
    record(
        store,
        complete_event("a", 1, inputs=[topic("kafka://x1:9092")]),
        complete_event("b", 2, inputs=[topic("kafka://y1:9092")]),
        complete_event(
            "c",
            3,
            inputs=[
                {
                    "namespace": "s3://b",
                    "name": "k",
                    "facets": {
                        "symlinks": {
                            "identifiers": [
                                {"namespace": "s3a://b", "name": "k", "type": "LOCATION"}
                            ]
                        }
                    },
                }
            ],
        ),
    )
    with store.engine.connect() as conn:
        with conn.begin():
            # A store written before s3a was normalised at parse time holds s3a names.
            ns = conn.execute(
                t.namespaces.insert()
                .values(name="s3a://b", created_at=sa.func.now(), updated_at=sa.func.now())
                .returning(t.namespaces.c.id)
            ).scalar()
            conn.execute(
                t.datasets.insert().values(
                    namespace_id=ns,
                    name="k",
                    source_name="s3a://b",
                    created_at=sa.func.now(),
                    updated_at=sa.func.now(),
                )
            )
        found = {s.kind: s for s in namespace_check.check(conn)}
    assert not found["kafka"].certain  # no broker in common: possibly a mirrored topic
    assert found["s3"].datasets == (("s3://b", "k"), ("s3a://b", "k"))
    assert found["s3"].rule == "[s3]\naliases = true"


def test_job_namespaces_follow_renames_when_asked(store: Store) -> None:
    rules = parse_rules(
        '[jobs]\napply_renames = true\n[[rename]]\nnamespace = "etl"\nto_namespace = "platform"\n'
    )
    store.use_namespace_rules(rules)
    record(store, CONNECT)
    with store.engine.connect() as conn:
        jobs = conn.execute(
            sa.select(t.namespaces.c.name, t.jobs.c.name).join(
                t.namespaces, t.namespaces.c.id == t.jobs.c.namespace_id
            )
        ).all()
        run_job = conn.execute(
            sa.select(t.jobs.c.name).join(t.runs, t.runs.c.job_id == t.jobs.c.id)
        ).scalar()
        raw = conn.execute(sa.select(t.events.c.job_namespace)).scalar()
    assert [tuple(j) for j in jobs] == [("platform", "connector")]
    assert run_job == "connector" and raw == "etl"


def test_a_rule_mapping_a_name_not_seen_leaves_no_alias(store: Store) -> None:
    store.use_namespace_rules(RULES)
    record(store, complete_event("x", 1, inputs=[topic(f"kafka://{uuid.uuid4().hex}:9092")]))
    with store.engine.connect() as conn:
        assert not aliases.any_aliases(conn)


def test_a_second_process_learns_the_symlinks_another_stored(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two stores on one database, as two `serve --workers` processes: the one that
    # gets the table's name learns its location from the other's stored symlink.
    monkeypatch.setattr(store_module, "SYMLINK_REFRESH_SECONDS", 0.0)
    with Store.open(db_url) as first, Store.open(db_url) as second:
        first.use_namespace_rules(RULES)
        second.use_namespace_rules(RULES)
        record(first, SPARK)
        record(second, TRINO)
        assert stored_datasets(second) == {
            ("kafka://orders-cluster", "orders"),
            ("s3://lake", "silver/orders"),
        }
