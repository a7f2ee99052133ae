"""A Kafka Connect worker (standalone mode) on a local broker.

Apache Kafka's own ``connect-runtime``, ``connect-file`` and ``connect-json``
jars of the broker's version, plus any ``plugins`` given (coordinates of
connector jars: their set keys the class-path cache), resolved once with
:func:`headwater.local_kafka.maven.resolve_classpath`, then started as
``ConnectStandalone`` with its REST API on a free 127.0.0.1 port and its
offsets in a temporary directory that :meth:`ConnectWorker.stop` removes.
Connectors are created and removed through the REST API.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import httpx

from headwater.local_kafka.broker import KAFKA_VERSION, LOGGING_DEPENDENCIES
from headwater.local_kafka.jvm import JvmService, Probe, start_and_wait
from headwater.local_kafka.maven import (
    Coordinate,
    LocalKafkaError,
    free_port,
    missing_tools,
    resolve_classpath,
)

__all__ = ["ConnectWorker", "running_worker", "start_worker"]

_ARTIFACTS = ("connect-runtime", "connect-file", "connect-json")

_LOG4J2 = """status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
"""

_JVM_OPTIONS = (
    "-Xmx256m",
    "-Xms32m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
)


def _classpath(version: str, plugins: Sequence[Coordinate]) -> list[str]:
    coordinates = (
        *(("org.apache.kafka", a, version) for a in _ARTIFACTS),
        *LOGGING_DEPENDENCIES,
        *plugins,
    )
    name = f"kafka-connect-{version}"
    if plugins:
        key = "\n".join(":".join(c) for c in sorted(plugins)).encode()
        name += "-" + hashlib.sha256(key).hexdigest()[:10]
    return resolve_classpath(name, coordinates)


@dataclass
class ConnectWorker(JvmService):
    """A running worker; ``url`` is its REST API."""

    log_name: ClassVar[str] = "worker"

    bootstrap: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def start_worker(
    bootstrap: str,
    version: str = KAFKA_VERSION,
    timeout: float = 90,
    plugins: Sequence[Coordinate] = (),
) -> ConnectWorker:
    """Start ``ConnectStandalone`` against ``bootstrap`` and wait for its REST API."""
    if missing_tools():
        raise LocalKafkaError(f"not on PATH: {', '.join(missing_tools())}")
    classpath = _classpath(version, plugins)
    worker = ConnectWorker(
        Path(tempfile.mkdtemp(prefix="headwater-connect-")), free_port(), bootstrap
    )
    try:
        settings = {
            "bootstrap.servers": bootstrap,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(worker.root / "offsets"),
            "offset.flush.interval.ms": "1000",
            "listeners": f"http://127.0.0.1:{worker.port}",
            # The plugins are on the class path; scanning it once is all discovery needs.
            "plugin.discovery": "only_scan",
            "task.shutdown.graceful.timeout.ms": "2000",
        }
        config = worker.root / "worker.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        (worker.root / "log4j2.properties").write_text(_LOG4J2)
        start_and_wait(
            worker,
            "Connect worker",
            worker.url,
            [
                "java",
                *_JVM_OPTIONS,
                f"-Dlog4j2.configurationFile={worker.root / 'log4j2.properties'}",
                "-cp",
                os.pathsep.join(classpath),
                "org.apache.kafka.connect.cli.ConnectStandalone",
                str(config),
            ],
            _ready_probe(worker),
            "the REST API never answered",
            timeout,
        )
    except BaseException:
        worker.stop()
        raise
    return worker


def _ready_probe(worker: ConnectWorker) -> Probe:
    """Ready once the REST API lists connector plugins."""

    def probe(_problem: str) -> str | None:
        try:
            answer = httpx.get(f"{worker.url}/connector-plugins", timeout=5)
            if answer.status_code == 200 and answer.json():
                return None
            return f"/connector-plugins answered {answer.status_code}"
        except httpx.HTTPError as exc:
            return str(exc)

    return probe


@contextlib.contextmanager
def running_worker(bootstrap: str, plugins: Sequence[Coordinate] = ()) -> Iterator[ConnectWorker]:
    """A worker for the ``with`` block, stopped and removed after it."""
    with start_worker(bootstrap, plugins=plugins) as worker:
        yield worker
