"""Fixtures shared by every test layer.

PostgreSQL: ``HEADWATER_TEST_PG_URL`` names an existing server; otherwise a
throwaway cluster is started from Debian's server binaries for the session.
When neither is possible the PostgreSQL variants skip, except where
``HEADWATER_TEST_REQUIRE_PG=1`` (CI sets it) turns that into a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support.connect_worker import ConnectWorker, start_worker
from tests.support.kafka_broker import missing_tools, start_broker
from tests.support.pgcluster import PgCluster, find_pg_bin, start_cluster

if TYPE_CHECKING:
    from headwater.store import Store

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster | None]:
    if os.environ.get("HEADWATER_TEST_PG_URL") or find_pg_bin() is None:
        yield None
        return
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster | None) -> str:
    """A fresh, empty PostgreSQL database for one test."""
    external = os.environ.get("HEADWATER_TEST_PG_URL")
    if external:
        return external
    if pg_cluster is None:
        if os.environ.get("HEADWATER_TEST_REQUIRE_PG") == "1":
            pytest.fail("PostgreSQL is required (HEADWATER_TEST_REQUIRE_PG=1) but not installed")
        pytest.skip("PostgreSQL server binaries not installed")
    return pg_cluster.create_database(f"t_{uuid.uuid4().hex[:12]}")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """Each test using this runs on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'headwater.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A migrated store on ``db_url``, closed after the test."""
    from headwater.store import Store

    opened = Store.open(db_url, migrate=True)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """``127.0.0.1:<port>`` of one real Kafka broker shared by the session.

    Started on first request only. Without java or mvn the tests that ask for it
    skip, except where ``HEADWATER_TEST_REQUIRE_KAFKA=1`` (CI sets it) makes that
    a failure.
    """
    missing = missing_tools()
    if missing:
        reason = f"Kafka broker needs {' and '.join(missing)} on PATH"
        if os.environ.get("HEADWATER_TEST_REQUIRE_KAFKA") == "1":
            pytest.fail(f"Kafka is required (HEADWATER_TEST_REQUIRE_KAFKA=1): {reason}")
        pytest.skip(reason)
    with start_broker() as broker:
        yield broker.bootstrap


@pytest.fixture(scope="session")
def connect_worker(kafka_bootstrap: str) -> Iterator[ConnectWorker]:
    """One real Kafka Connect worker (standalone) on the session broker, started on
    first request; its REST API is ``connect_worker.url`` on 127.0.0.1."""
    with start_worker(kafka_bootstrap) as worker:
        yield worker
