"""A throwaway Kafka Connect worker (standalone mode) on the test broker.

Apache Kafka's own ``connect-runtime``, ``connect-file``, ``connect-json`` and
``connect-mirror`` jars, of the broker's version, and Debezium's PostgreSQL
connector (:data:`DEBEZIUM`, the release built against that Kafka version),
resolved from Maven Central
with ``mvn`` once into a per-version cache directory (as
:mod:`tests.support.kafka_broker` resolves the broker's), then started as
``ConnectStandalone`` with its REST API on a free 127.0.0.1 port and its
offsets in a temporary directory that :meth:`ConnectWorker.stop` removes.
Connectors are created and removed through the REST API by the tests.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.kafka_broker import (
    _LOGGING_DEPENDENCIES,
    _POM,
    KAFKA_VERSION,
    KafkaBrokerError,
    _cached_classpath,
    _die_with_parent,
    _free_port,
    _tail,
    missing_tools,
)

__all__ = [
    "DEBEZIUM",
    "ConnectWorker",
    "resolve_connect_classpath",
    "running_worker",
    "start_worker",
]

_ARTIFACTS = ("connect-runtime", "connect-file", "connect-json", "connect-mirror")
#: Debezium's PostgreSQL connector of the release built against the broker's Kafka (4.1.1).
DEBEZIUM = ("io.debezium", "debezium-connector-postgres", "3.5.0.Final")

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


def _cache_dir(version: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "headwater-tests" / f"kafka-connect-{version}"


def resolve_connect_classpath(version: str = KAFKA_VERSION) -> list[str]:
    """The worker's jars, resolved with Maven once per version and cached."""
    cache = _cache_dir(version)
    classpath_file = cache / "classpath.txt"
    jars = _cached_classpath(classpath_file)
    if jars is not None:
        return jars
    cache.mkdir(parents=True, exist_ok=True)
    coordinates = (
        *(("org.apache.kafka", a, version) for a in _ARTIFACTS),
        *_LOGGING_DEPENDENCIES,
        DEBEZIUM,
    )
    dependencies = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in coordinates
    )
    (cache / "pom.xml").write_text(_POM.format(dependencies=dependencies))
    partial = cache / f"classpath.{os.getpid()}.tmp"
    result = subprocess.run(
        ["mvn", "-q", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={partial}"],
        cwd=cache,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        raise KafkaBrokerError(
            f"mvn could not resolve Kafka Connect {version}:\n"
            f"{_tail(result.stdout + result.stderr)}"
        )
    os.replace(partial, classpath_file)
    jars = _cached_classpath(classpath_file)
    if jars is None:
        raise KafkaBrokerError(f"mvn wrote no usable class path to {classpath_file}")
    return jars


@dataclass
class ConnectWorker:
    """A running worker; ``url`` is its REST API."""

    root: Path
    port: int
    bootstrap: str
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.root / "worker.log"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return _tail(self.log_file.read_text(errors="replace"), lines)
        except OSError:
            return "(no worker log)"

    def stop(self, timeout: float = 15) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ConnectWorker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_worker(
    bootstrap: str, version: str = KAFKA_VERSION, timeout: float = 90
) -> ConnectWorker:
    """Start ``ConnectStandalone`` against ``bootstrap`` and wait for its REST API."""
    if missing_tools():
        raise KafkaBrokerError(f"not on PATH: {', '.join(missing_tools())}")
    classpath = resolve_connect_classpath(version)
    worker = ConnectWorker(
        Path(tempfile.mkdtemp(prefix="headwater-connect-")), _free_port(), bootstrap
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
        with worker.log_file.open("wb") as log:
            worker.process = subprocess.Popen(
                [
                    "java",
                    *_JVM_OPTIONS,
                    f"-Dlog4j2.configurationFile={worker.root / 'log4j2.properties'}",
                    "-cp",
                    os.pathsep.join(classpath),
                    "org.apache.kafka.connect.cli.ConnectStandalone",
                    str(config),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent(),
            )
        _wait_ready(worker, time.monotonic() + timeout)
    except BaseException:
        worker.stop()
        raise
    return worker


def _wait_ready(worker: ConnectWorker, deadline: float) -> None:
    assert worker.process is not None
    problem = "the REST API never answered"
    while time.monotonic() < deadline:
        if worker.process.poll() is not None:
            raise KafkaBrokerError(
                f"Connect worker exited with code {worker.process.returncode}:\n{worker.log_tail()}"
            )
        try:
            answer = httpx.get(f"{worker.url}/connector-plugins", timeout=5)
            if answer.status_code == 200 and answer.json():
                return
            problem = f"/connector-plugins answered {answer.status_code}"
        except httpx.HTTPError as exc:
            problem = str(exc)
        time.sleep(0.25)
    raise KafkaBrokerError(
        f"Connect worker on {worker.url} was not ready in time ({problem}); "
        f"log tail:\n{worker.log_tail()}"
    )


@contextlib.contextmanager
def running_worker(bootstrap: str) -> Iterator[ConnectWorker]:
    """A worker for the ``with`` block, stopped and removed after it."""
    with start_worker(bootstrap) as worker:
        yield worker
