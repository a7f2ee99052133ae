"""The demo's real-time half: a Kafka broker, its topics, and (optionally) a Connect source.

:class:`RealtimeHalf` owns what the streaming steps run against: a local
single-node broker (:mod:`headwater.local_kafka`, or one given), the Spark
connector packages for the installed Spark line, and with ``with_connect`` a
Kafka Connect worker whose FileStreamSource copies the point-of-sale feed
(``raw/pos_orders.jsonl``) into the orders topic, watched by
:class:`~headwater.connect.watcher.ConnectWatcher` so the connector's lineage
reaches the demo's server. :meth:`prepare` runs before a pipeline run's first streaming step,
:meth:`end_run` after its last, :meth:`finish` when the demo stops.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import httpx

from headwater.errors import HeadwaterError
from headwater.spark_connectors import connector

__all__ = [
    "CONNECTOR_NAME",
    "FEED_FILE",
    "ORDERS_TOPIC",
    "SCORES_TOPIC",
    "RealtimeHalf",
    "RealtimeUnavailable",
]

logger = logging.getLogger(__name__)

#: The topics the pipeline's streaming scripts use (pipelines/retail/_streaming.py).
ORDERS_TOPIC = "retail.orders"
SCORES_TOPIC = "retail.order_scores"
#: The Connect source's file (written by generate.py) and the connector's name.
FEED_FILE = Path("raw") / "pos_orders.jsonl"
CONNECTOR_NAME = "retail-pos-orders"

_FEED_TIMEOUT_SECONDS = 90.0


class RealtimeUnavailable(HeadwaterError):
    """The real-time half cannot run here (no java/mvn, no connector build, broker down)."""


class RealtimeHalf:
    """Broker (started here unless ``bootstrap`` is given), packages and the optional connector."""

    def __init__(
        self,
        bootstrap: str | None = None,
        with_connect: bool = False,
        port_file: Path | None = None,
    ) -> None:
        packages = [connector("kafka"), connector("delta")]
        if not all(packages):
            raise RealtimeUnavailable("no Kafka and Delta connector builds for this Spark line")
        if importlib.util.find_spec("confluent_kafka") is None:
            raise RealtimeUnavailable(
                "confluent-kafka is not installed (pip install 'headwater[kafka]')"
            )
        self.packages = ",".join(packages)
        self.with_connect = with_connect
        self._broker: Any = None
        self._worker: Any = None
        self._watcher: Any = None
        if bootstrap is None:
            from headwater.local_kafka import LocalKafkaError, start_broker

            try:
                self._broker = start_broker(port=_kept_port(port_file))
            except LocalKafkaError as exc:
                raise RealtimeUnavailable(f"the Kafka broker did not start: {exc}") from exc
            bootstrap = self._broker.bootstrap
            if port_file is not None:
                port_file.write_text(f"{self._broker.port}\n")
        self.bootstrap: str = bootstrap

    def env(self) -> dict[str, str]:
        """What the streaming scripts read: the broker and the connector packages."""
        return {"RETAIL_KAFKA_BOOTSTRAP": self.bootstrap, "RETAIL_SPARK_PACKAGES": self.packages}

    def prepare(self, data_dir: Path, lineage_url: str) -> None:
        """Before the first streaming step: fresh checkpoints and live table; the feed copied in.

        A stream's checkpoint holds offsets of the broker it last read; a new
        broker's topics start again at 0, so each pipeline run streams afresh.
        """
        shutil.rmtree(data_dir / "checkpoints", ignore_errors=True)
        shutil.rmtree(data_dir / "lake" / "silver" / "orders_live", ignore_errors=True)
        _create_topics(self.bootstrap, (ORDERS_TOPIC, SCORES_TOPIC))
        if self.with_connect:
            self._start_connector(data_dir, lineage_url)

    def end_run(self) -> None:
        """After a run's streams: remove the connector (its run completes), stop its worker."""
        if self._worker is None:
            return
        try:
            httpx.delete(f"{self._worker.url}/connectors/{CONNECTOR_NAME}", timeout=30)
            self._poll_watcher()
        except (httpx.HTTPError, HeadwaterError) as exc:
            logger.warning("could not report the connector's end: %s", exc)
        finally:
            self._worker.stop()
            self._worker = None
            self._watcher = None

    def finish(self) -> None:
        """Stop what is still running: the connector's worker and the broker started here."""
        try:
            self.end_run()
        finally:
            if self._broker is not None:
                self._broker.stop()
                self._broker = None

    def _start_connector(self, data_dir: Path, lineage_url: str) -> None:
        from headwater.connect.rest import ConnectClient
        from headwater.connect.watcher import ConnectWatcher
        from headwater.local_kafka import LocalKafkaError, start_worker

        feed = data_dir / FEED_FILE
        lines = sum(1 for line in feed.read_text(encoding="utf-8").splitlines() if line.strip())
        try:
            self._worker = start_worker(self.bootstrap)
        except LocalKafkaError as exc:
            raise RealtimeUnavailable(f"the Kafka Connect worker did not start: {exc}") from exc
        before = _end_offset(self.bootstrap, ORDERS_TOPIC)
        answer = httpx.put(
            f"{self._worker.url}/connectors/{CONNECTOR_NAME}/config",
            json={
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "file": str(feed),
                "topic": ORDERS_TOPIC,
                "tasks.max": "1",
            },
            timeout=30,
        )
        if answer.status_code not in (200, 201):
            raise RealtimeUnavailable(f"the connector was refused: {answer.text}")

        def emit(events: list[dict[str, Any]]) -> None:
            for event in events:
                httpx.post(
                    f"{lineage_url}/api/v1/lineage", json=event, timeout=30
                ).raise_for_status()

        self._watcher = ConnectWatcher(
            ConnectClient(self._worker.url),
            emit,
            namespace="retail",
            bootstrap_servers=self.bootstrap,
            state_path=data_dir / "connect-watch.json",
        )
        # The connector copies the file on its own thread: wait until the topic holds it all.
        deadline = time.monotonic() + _FEED_TIMEOUT_SECONDS
        while _end_offset(self.bootstrap, ORDERS_TOPIC) < before + lines:
            if time.monotonic() > deadline:
                raise RealtimeUnavailable(
                    f"the connector did not copy {feed} into {ORDERS_TOPIC} in time; "
                    f"worker log:\n{self._worker.log_tail()}"
                )
            time.sleep(0.5)
        self._poll_watcher()

    def _poll_watcher(self) -> None:
        if self._watcher is not None:
            self._watcher.poll()


def _kept_port(port_file: Path | None) -> int | None:
    """The port an earlier run's broker listened on, if it is free: a Kafka dataset's
    namespace names the broker's address, so the same port keeps the same topics."""
    try:
        port = int(port_file.read_text().strip()) if port_file is not None else 0
    except (OSError, ValueError):
        port = 0
    if not port:
        return None
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))
    except OSError:
        return None
    return port


def _create_topics(bootstrap: str, topics: tuple[str, ...]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    existing = set(admin.list_topics(timeout=10).topics)
    wanted = [NewTopic(t, num_partitions=1) for t in topics if t not in existing]
    for future in admin.create_topics(wanted).values() if wanted else ():
        future.result(timeout=30)


def _end_offset(bootstrap: str, topic: str) -> int:
    """The sum of the topic's partitions' high watermarks."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "headwater-demo-offsets",
            "enable.auto.commit": False,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return sum(
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in partitions
        )
    finally:
        consumer.close()
