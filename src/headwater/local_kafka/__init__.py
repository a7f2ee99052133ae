"""Throwaway Kafka processes on loopback: a single-node KRaft broker and a Connect worker.

Apache Kafka's own jars, resolved from Maven Central with ``mvn`` once and
cached (:mod:`headwater.local_kafka.maven`), started as capped-heap JVMs on
free 127.0.0.1 ports with their files in a temporary directory removed at
stop. The demo's real-time half runs on them, and so do the tests' fixtures.
They need ``java`` and ``mvn`` on PATH and ``confluent-kafka`` (the
``kafka`` extra) for the broker's readiness check.
"""

from __future__ import annotations

from headwater.local_kafka.broker import KAFKA_VERSION, KafkaBroker, running_broker, start_broker
from headwater.local_kafka.connect_worker import ConnectWorker, running_worker, start_worker
from headwater.local_kafka.maven import LocalKafkaError, missing_tools

__all__ = [
    "KAFKA_VERSION",
    "ConnectWorker",
    "KafkaBroker",
    "LocalKafkaError",
    "missing_tools",
    "running_broker",
    "running_worker",
    "start_broker",
    "start_worker",
]
