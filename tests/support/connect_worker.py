"""The tests' Kafka Connect worker: the shipped one (:mod:`headwater.local_kafka.connect_worker`)
with the connectors the tests exercise beyond the file connectors on its class path:
MirrorMaker 2 and Debezium's PostgreSQL connector (:data:`DEBEZIUM`, the release
built against the broker's Kafka version)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from headwater.local_kafka import KAFKA_VERSION, ConnectWorker
from headwater.local_kafka import start_worker as _start_worker

__all__ = ["DEBEZIUM", "PLUGINS", "ConnectWorker", "running_worker", "start_worker"]

#: Debezium's PostgreSQL connector of the release built against the broker's Kafka (4.1.1).
DEBEZIUM = ("io.debezium", "debezium-connector-postgres", "3.5.0.Final")
PLUGINS = (("org.apache.kafka", "connect-mirror", KAFKA_VERSION), DEBEZIUM)


def start_worker(bootstrap: str) -> ConnectWorker:
    """A worker with the file, mirror and Debezium connectors against ``bootstrap``."""
    return _start_worker(bootstrap, plugins=PLUGINS)


@contextlib.contextmanager
def running_worker(bootstrap: str) -> Iterator[ConnectWorker]:
    """A worker for the ``with`` block, stopped and removed after it."""
    with start_worker(bootstrap) as worker:
        yield worker
