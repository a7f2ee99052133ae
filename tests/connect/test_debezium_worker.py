"""Debezium's PostgreSQL connector (``debezium-connector-postgres`` from Maven
Central, the release built against the test broker's Kafka) on the real Connect
worker, capturing a table of a real PostgreSQL started with ``wal_level=logical``:
the watcher names the table as the agent names a PostgreSQL table read over
JDBC, and the change topic ``<topic.prefix>.<schema>.<table>`` on the broker."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from headwater.jdbc_urls import jdbc_location
from tests.agent.spec import validate_event
from tests.connect.helpers import Collected, delete, put, running, unique, wait_state, watcher_for
from tests.support.pgcluster import PgCluster, find_pg_bin, start_cluster

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(scope="module")
def logical_pg() -> Iterator[PgCluster]:
    """A throwaway PostgreSQL whose WAL carries logical changes (Debezium's pgoutput)."""
    if find_pg_bin() is None:
        if os.environ.get("HEADWATER_TEST_REQUIRE_PG") == "1":
            pytest.fail("PostgreSQL is required (HEADWATER_TEST_REQUIRE_PG=1) but not installed")
        pytest.skip("PostgreSQL server binaries not installed")
    cluster = start_cluster(
        {"wal_level": "logical", "max_wal_senders": "4", "max_replication_slots": "4"}
    )
    try:
        yield cluster
    finally:
        cluster.stop()


def test_debezium_postgres_names_the_table_and_its_change_topic(
    connect_worker, kafka_bootstrap, logical_pg: PgCluster, tmp_path: Path
):
    import psycopg
    from confluent_kafka.admin import AdminClient

    database = f"shop_{uuid.uuid4().hex[:8]}"
    logical_pg.create_database(database)
    dsn = f"postgresql://postgres@127.0.0.1:{logical_pg.port}/{database}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.orders (id int PRIMARY KEY, amount numeric)")
        conn.execute("INSERT INTO public.orders VALUES (1, 10), (2, 20)")
    name, prefix = unique("cdc"), f"cdc{uuid.uuid4().hex[:6]}"
    put(
        connect_worker.url,
        name,
        {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": "127.0.0.1",
            "database.port": str(logical_pg.port),
            "database.user": "postgres",
            "database.password": "cdc-pass-1234",
            "database.dbname": database,
            "topic.prefix": prefix,
            "table.include.list": "public.orders",
            "plugin.name": "pgoutput",
            "slot.name": f"slot_{prefix}",
            "publication.name": f"pub_{prefix}",
            "publication.autocreate.mode": "filtered",
            "snapshot.mode": "initial",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        },
    )
    try:
        wait_state(connect_worker.url, name, running, timeout=90)
        topic = f"{prefix}.public.orders"
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        deadline = time.monotonic() + 90
        while topic not in admin.list_topics(timeout=10).topics:
            assert time.monotonic() < deadline, f"{topic} was never created"
            time.sleep(0.5)
        sent = Collected()
        watcher_for(connect_worker.url, kafka_bootstrap, tmp_path / "s.json", sent).poll()
        (start,) = sent.of(name)
        validate_event(start)
        assert start["run"]["facets"]["kafkaConnect"]["family"] == "debezium-postgres"
        # The table as the agent names a Spark JDBC read of it.
        location = jdbc_location(f"jdbc:postgresql://127.0.0.1:{logical_pg.port}/{database}")
        assert [(d["namespace"], d["name"]) for d in start["inputs"]] == [
            (location.namespace, location.table_name(["public", "orders"]))
        ]
        assert start["inputs"][0]["namespace"] == f"postgres://127.0.0.1:{logical_pg.port}"
        assert [(d["namespace"], d["name"]) for d in start["outputs"]] == [
            (f"kafka://{kafka_bootstrap}", topic)
        ]
        assert "cdc-pass-1234" not in json.dumps(sent.events)
    finally:
        delete(connect_worker.url, name)
