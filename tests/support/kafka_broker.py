"""A throwaway single-node Kafka broker on free loopback ports, for tests and demos.

The broker is Apache Kafka's own server (``org.apache.kafka:kafka_2.13``),
resolved from Maven Central with ``mvn`` into a per-version cache directory
once; later starts reuse the cached class path while its jars still exist.
The node runs in KRaft combined mode (broker and controller in one JVM) with a
capped heap, its data in a temporary directory that :meth:`KafkaBroker.stop`
removes.

Outside pytest::

    with running_broker() as broker:
        produce_to(broker.bootstrap)

or ``python -m tests.support.kafka_broker``, which prints the bootstrap address
on its first line and keeps the broker up until it is terminated.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "KAFKA_VERSION",
    "KafkaBroker",
    "KafkaBrokerError",
    "missing_tools",
    "resolve_classpath",
    "running_broker",
    "start_broker",
]

KAFKA_VERSION = "4.1.1"

# Kafka's server code logs through SLF4J 1.7 and Log4j 2; this binding makes
# those lines reach the broker's log file instead of SLF4J's no-op logger.
_LOGGING_DEPENDENCIES = (
    ("org.slf4j", "slf4j-api", "2.0.17"),
    ("org.apache.logging.log4j", "log4j-slf4j2-impl", "2.24.3"),
)

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>headwater.tests</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""

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
# JIT/GC flags keep the JVM light on machines shared with Spark tests.
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


class KafkaBrokerError(RuntimeError):
    """The broker's jars could not be resolved, or the broker did not come up."""


def missing_tools() -> list[str]:
    """The external commands the broker needs that are not on PATH."""
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def _cache_dir(version: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "headwater-tests" / f"kafka-{version}"


def _cached_classpath(path: Path) -> list[str] | None:
    if not path.exists():
        return None
    jars = [jar for jar in path.read_text().strip().split(os.pathsep) if jar]
    if jars and all(Path(jar).is_file() for jar in jars):
        return jars
    return None


def resolve_classpath(version: str = KAFKA_VERSION) -> list[str]:
    """The broker's jars, resolved with Maven once per version and cached."""
    cache = _cache_dir(version)
    classpath_file = cache / "classpath.txt"
    jars = _cached_classpath(classpath_file)
    if jars is not None:
        return jars
    cache.mkdir(parents=True, exist_ok=True)
    coordinates = (("org.apache.kafka", "kafka_2.13", version), *_LOGGING_DEPENDENCIES)
    dependencies = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in coordinates
    )
    (cache / "pom.xml").write_text(_POM.format(dependencies=dependencies))
    # Concurrent first runs each write their own file; the rename is atomic.
    partial = cache / f"classpath.{os.getpid()}.tmp"
    result = subprocess.run(
        ["mvn", "-q", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={partial}"],
        cwd=cache, capture_output=True, text=True,
    )
    if result.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        raise KafkaBrokerError(
            f"mvn could not resolve org.apache.kafka:kafka_2.13:{version}:\n"
            f"{_tail(result.stdout + result.stderr)}"
        )
    os.replace(partial, classpath_file)
    jars = _cached_classpath(classpath_file)
    if jars is None:
        raise KafkaBrokerError(f"mvn wrote no usable class path to {classpath_file}")
    return jars


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_id() -> str:
    # Kafka's Uuid text form is URL-safe base64 without padding; Kafka itself
    # never hands out ids that start with '-', as they read like CLI flags.
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _die_with_parent() -> Callable[[], None] | None:
    """Linux: a pre-exec hook that has the JVM terminated when its starter dies.

    A killed test run then leaves no broker behind. The signal follows the
    starting thread, so brokers start from a thread that outlives them. libc is
    looked up here, before the fork, as loading libraries in the child can hang.
    """
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGTERM)  # 1 is PR_SET_PDEATHSIG


@dataclass
class KafkaBroker:
    """A running broker; ``bootstrap`` is what clients put in bootstrap.servers."""

    root: Path
    port: int
    controller_port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.root / "broker.log"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return _tail(self.log_file.read_text(errors="replace"), lines)
        except OSError:
            return "(no broker log)"

    def stop(self, timeout: float = 15) -> None:
        """Terminate the JVM (kill it if it lingers) and remove its files."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> KafkaBroker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _write_config(broker: KafkaBroker) -> Path:
    settings = {
        **_SERVER_SETTINGS,
        "listeners": (f"PLAINTEXT://127.0.0.1:{broker.port},"
                      f"CONTROLLER://127.0.0.1:{broker.controller_port}"),
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
        "java", *_JVM_OPTIONS,
        f"-Dlog4j2.configurationFile={broker.root / 'log4j2.properties'}",
        "-cp", os.pathsep.join(classpath), *args,
    ]


def start_broker(version: str = KAFKA_VERSION, timeout: float = 90) -> KafkaBroker:
    """Format storage, start ``kafka.Kafka`` and wait until an AdminClient lists topics."""
    if missing_tools():
        raise KafkaBrokerError(f"not on PATH: {', '.join(missing_tools())}")
    classpath = resolve_classpath(version)
    broker = KafkaBroker(Path(tempfile.mkdtemp(prefix="headwater-kafka-")),
                         _free_port(), _free_port())
    try:
        config = _write_config(broker)
        formatted = subprocess.run(
            _java(broker, classpath, "kafka.tools.StorageTool", "format",
                  "-t", _cluster_id(), "-c", str(config)),
            capture_output=True, text=True, timeout=timeout,
        )
        if formatted.returncode != 0:
            raise KafkaBrokerError(
                f"kafka-storage format failed:\n{_tail(formatted.stdout + formatted.stderr)}")
        with broker.log_file.open("wb") as log:
            broker.process = subprocess.Popen(
                _java(broker, classpath, "kafka.Kafka", str(config)),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent(),
            )
        _wait_ready(broker, time.monotonic() + timeout)
    except BaseException:
        broker.stop()
        raise
    return broker


def _wait_ready(broker: KafkaBroker, deadline: float) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    assert broker.process is not None
    admin = None
    problem = "the listener never accepted a connection"
    while time.monotonic() < deadline:
        if broker.process.poll() is not None:
            raise KafkaBrokerError(
                f"Kafka broker exited with code {broker.process.returncode}:\n"
                f"{broker.log_tail()}")
        # Waiting for the port first keeps librdkafka from logging refused connections.
        try:
            socket.create_connection(("127.0.0.1", broker.port), timeout=1).close()
        except OSError:
            time.sleep(0.25)
            continue
        admin = admin or AdminClient({"bootstrap.servers": broker.bootstrap})
        try:
            if admin.list_topics(timeout=5).brokers:
                return
            problem = "metadata listed no brokers"
        except KafkaException as exc:
            problem = str(exc)
        time.sleep(0.25)
    raise KafkaBrokerError(
        f"Kafka broker on {broker.bootstrap} was not ready in time ({problem}); "
        f"log tail:\n{broker.log_tail()}")


@contextlib.contextmanager
def running_broker(version: str = KAFKA_VERSION) -> Iterator[KafkaBroker]:
    """A broker for the ``with`` block, stopped and removed after it."""
    with start_broker(version) as broker:
        yield broker


def main() -> None:
    """Print the bootstrap address, then serve until SIGTERM or SIGINT."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with running_broker() as broker:
        sys.stdout.write(f"{broker.bootstrap}\n")
        sys.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()
