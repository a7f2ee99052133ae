"""Fixtures for agent tests: ONE session-scoped SparkSession (Hive support, Derby in a
tmp dir; Delta as ``spark_catalog``, Iceberg as the Hadoop catalog ``ice``, the
Kafka and PostgreSQL JDBC connectors: see ``tests/support/spark_packages.py``) and ``lineage``, which attaches a fresh agent writing JSONL through the real
emitter and file transport, and reads the events back."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.spec import validate_event
from tests.support.spark_packages import lakehouse_conf

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

# Per test process: several pytest runs on one machine (two Spark lines, other
# checkouts) must not clear each other's tables. Job names keep the last part.
_ROOT = f"/tmp/headwater-tests-{os.getpid()}"
WAREHOUSE = f"{_ROOT}/headwater-test-warehouse"
ICEBERG_WAREHOUSE = f"{_ROOT}/headwater-test-iceberg"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    base = tmp_path_factory.mktemp("spark")
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    shutil.rmtree(ICEBERG_WAREHOUSE, ignore_errors=True)
    builder = SparkSession.builder
    for key, value in lakehouse_conf(ICEBERG_WAREHOUSE).items():
        builder = builder.config(key, value)
    session = (
        builder.master("local[2]")
        .appName("headwater agent tests")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", WAREHOUSE)
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={base / 'derby'}")
        .config("spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={base / 'metastore'};create=true")
        .enableHiveSupport()
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    shutil.rmtree(_ROOT, ignore_errors=True)


class Lineage:
    """An attached agent writing to a JSONL file; ``events()`` flushes and reads it."""

    def __init__(self, spark: Any, path: Path, **overrides: Any) -> None:
        from headwater.agent import attach
        from headwater.agent.config import AgentConfig, DeliveryConfig
        from headwater.agent.emitter import build_emitter

        conf = dict(spark.sparkContext.getConf().getAll())
        config = AgentConfig.from_sources(conf, {})
        config = dataclasses.replace(
            config,
            transport={"type": "file", "location": str(path)},
            delivery=DeliveryConfig(spool_enabled=False),
            **overrides,
        )
        self.path = path
        self.agent = attach(spark, config=config, emitter=build_emitter(config))
        assert self.agent.enabled

    def events(self) -> list[dict[str, Any]]:
        assert self.agent.flush(30.0)
        if not self.path.exists():
            return []
        events = [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
        # Every event any agent test sees must validate against the OpenLineage spec.
        for event in events:
            validate_event(event)
        return events

    def action_events(self) -> list[dict[str, Any]]:
        """Events of child runs only (not the application run)."""
        app = self.agent.model.app_name
        return [e for e in self.events() if e["job"]["name"] != app]

    def close(self) -> None:
        self.agent.close(10.0)


@pytest.fixture
def lineage(spark: Any, tmp_path: Path) -> Iterator[Lineage]:
    tracker = Lineage(spark, tmp_path / "events.jsonl")
    yield tracker
    tracker.close()
