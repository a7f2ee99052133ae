"""A single-node Kafka broker (KRaft, broker and controller in one JVM) on free loopback ports.

Apache Kafka's own server (``org.apache.kafka:kafka_2.13``), its class path
resolved once (:func:`headwater.local_kafka.maven.resolve_classpath`), with a
capped heap and its data in a temporary directory that :meth:`KafkaBroker.stop`
removes::

    with running_broker() as broker:
        produce_to(broker.bootstrap)
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from headwater.local_kafka.jvm import JvmService, Probe, start_and_wait
from headwater.local_kafka.maven import (
    Coordinate,
    LocalKafkaError,
    free_port,
    missing_tools,
    resolve_classpath,
    tail,
)

__all__ = ["KAFKA_VERSION", "LOGGING_DEPENDENCIES", "KafkaBroker", "running_broker", "start_broker"]

KAFKA_VERSION = "4.1.1"

#: Kafka's server code logs through SLF4J and Log4j 2; this binding makes those
#: lines reach the process's log file instead of SLF4J's no-op logger.
LOGGING_DEPENDENCIES: tuple[Coordinate, ...] = (
    ("org.slf4j", "slf4j-api", "2.0.17"),
    ("org.apache.logging.log4j", "log4j-slf4j2-impl", "2.24.3"),
)

_LOG4J2 = """status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.request.name = kafka.request.logger
logger.request.level = WARN
"""

# One node, so every internal topic has one replica; the thread counts and
# JIT/GC flags keep the JVM light on machines shared with Spark jobs.
_SERVER_SETTINGS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "min.insync.replicas": "1",
    "default.replication.factor": "1",
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
    "num.network.threads": "1",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "log.cleaner.threads": "1",
}

_JVM_OPTIONS = (
    "-Xmx384m",
    "-Xms64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
)


def _cluster_id() -> str:
    # Kafka's Uuid text form is URL-safe base64 without padding; Kafka itself
    # never hands out ids that start with '-', as they read like CLI flags.
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


@dataclass
class KafkaBroker(JvmService):
    """A running broker; ``bootstrap`` is what clients put in bootstrap.servers."""

    log_name: ClassVar[str] = "broker"

    controller_port: int

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


def _write_config(broker: KafkaBroker) -> Path:
    settings = {
        **_SERVER_SETTINGS,
        "listeners": (
            f"PLAINTEXT://127.0.0.1:{broker.port},CONTROLLER://127.0.0.1:{broker.controller_port}"
        ),
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{broker.port}",
        "controller.quorum.voters": f"1@127.0.0.1:{broker.controller_port}",
        "log.dirs": str(broker.root / "data"),
    }
    config = broker.root / "server.properties"
    config.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    (broker.root / "log4j2.properties").write_text(_LOG4J2)
    return config


def _java(broker: KafkaBroker, classpath: list[str], *args: str) -> list[str]:
    return [
        "java",
        *_JVM_OPTIONS,
        f"-Dlog4j2.configurationFile={broker.root / 'log4j2.properties'}",
        "-cp",
        os.pathsep.join(classpath),
        *args,
    ]


def start_broker(
    version: str = KAFKA_VERSION, timeout: float = 90, port: int | None = None
) -> KafkaBroker:
    """Format storage, start ``kafka.Kafka`` and wait until an AdminClient lists topics.

    ``port`` is the client listener's port (a free one when None); a caller that
    names its topics' datasets across runs keeps it, as Kafka namespaces carry it.
    """
    if missing_tools():
        raise LocalKafkaError(f"not on PATH: {', '.join(missing_tools())}")
    classpath = resolve_classpath(
        f"kafka-{version}", (("org.apache.kafka", "kafka_2.13", version), *LOGGING_DEPENDENCIES)
    )
    broker = KafkaBroker(
        Path(tempfile.mkdtemp(prefix="headwater-kafka-")), port or free_port(), free_port()
    )
    try:
        config = _write_config(broker)
        formatted = subprocess.run(
            _java(
                broker,
                classpath,
                "kafka.tools.StorageTool",
                "format",
                "-t",
                _cluster_id(),
                "-c",
                str(config),
            ),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if formatted.returncode != 0:
            raise LocalKafkaError(
                f"kafka-storage format failed:\n{tail(formatted.stdout + formatted.stderr)}"
            )
        start_and_wait(
            broker,
            "Kafka broker",
            broker.bootstrap,
            _java(broker, classpath, "kafka.Kafka", str(config)),
            _ready_probe(broker),
            "the listener never accepted a connection",
            timeout,
        )
    except BaseException:
        broker.stop()
        raise
    return broker


def _ready_probe(broker: KafkaBroker) -> Probe:
    """Ready once an AdminClient's metadata lists the broker."""
    try:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient
    except ImportError as exc:
        raise LocalKafkaError(
            "confluent-kafka is not installed (pip install 'headwater[kafka]')"
        ) from exc

    admin = None

    def probe(problem: str) -> str | None:
        nonlocal admin
        # Waiting for the port first keeps librdkafka from logging refused connections.
        try:
            socket.create_connection(("127.0.0.1", broker.port), timeout=1).close()
        except OSError:
            return problem
        admin = admin or AdminClient({"bootstrap.servers": broker.bootstrap})
        try:
            if admin.list_topics(timeout=5).brokers:
                return None
            return "metadata listed no brokers"
        except KafkaException as exc:
            return str(exc)

    return probe


@contextlib.contextmanager
def running_broker(version: str = KAFKA_VERSION) -> Iterator[KafkaBroker]:
    """A broker for the ``with`` block, stopped and removed after it."""
    with start_broker(version) as broker:
        yield broker
