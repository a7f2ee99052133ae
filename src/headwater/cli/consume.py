"""``headwater consume``: ingest OpenLineage events from a Kafka topic.

The agent's ``kafka`` transport (or the OpenLineage listener's) writes events
to a topic; this command reads it in a consumer group and writes the store
through the same path as ``POST /api/v1/lineage/batch``
(:mod:`headwater.cli.topic_consumer`). Offsets are committed only after the
store commits, so delivery is at least once and a redelivered event is a
duplicate the store skips. Any number of processes in one group share the
partitions (on PostgreSQL; SQLite takes one writer at a time).

Progress goes to stderr: a progress bar with events/s on a terminal
(:mod:`headwater.cli.progress`), otherwise a line every ``--status-interval``
seconds and one when the process stops (SIGTERM or
Ctrl-C: the batch in hand is finished and committed first). With
``--metrics-port`` the same figures, lag per partition included, are served
in Prometheus text format.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from headwater.errors import HeadwaterError

if TYPE_CHECKING:
    from headwater.cli.topic_consumer import ConsumeStats

__all__ = ["consume"]


def _properties(ctx: click.Context, param: click.Parameter,
                values: tuple[str, ...]) -> dict[str, str]:
    properties: dict[str, str] = {}
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}")
        properties[key.strip()] = setting
    return properties


@click.command()
@click.option("--topic", required=True, help="The topic the lineage events are written to.")
@click.option("--db", "db_url", metavar="URL",
              help="Store URL to write into. [HEADWATER_DB_URL; the default SQLite store]")
@click.option("--bootstrap-servers", metavar="HOST:PORT[,…]",
              help="Kafka brokers to start from (or -X bootstrap.servers=…).")
@click.option("--group", default="headwater", show_default=True,
              help="Consumer group: processes in one group share the topic's partitions.")
@click.option("--dead-letter-topic", metavar="TOPIC",
              help="Also send each refused message here, with the reason in its headers.")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=500, show_default=True,
              help="Most messages per store transaction and offset commit.")
@click.option("-X", "--property", "properties", multiple=True, metavar="KEY=VALUE",
              callback=_properties,
              help="A librdkafka setting for the consumer and the dead-letter producer "
              "(security.protocol, sasl.*, session.timeout.ms …); repeatable.")
@click.option("--status-interval", type=click.FloatRange(0.1), default=10.0, show_default=True,
              metavar="SECONDS", help="Seconds between status lines (counts, events/s, lag).")
@click.option("--metrics-port", type=click.IntRange(0, 65535), metavar="PORT",
              help="Serve the counts and the lag per partition in Prometheus text format "
              "on 127.0.0.1:PORT.")
@click.option("--namespace-rules", "namespace_rules", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Map dataset names by this namespace rules file (docs/namespaces.md). "
                   "[HEADWATER_NAMESPACE_RULES]")
def consume(topic: str, db_url: str | None, bootstrap_servers: str | None, group: str,
            dead_letter_topic: str | None, batch_size: int, properties: dict[str, str],
            status_interval: float, metrics_port: int | None,
            namespace_rules: Path | None) -> None:
    """Ingest the OpenLineage events of a Kafka topic, committing offsets after the store."""
    try:
        from confluent_kafka import Consumer, KafkaException, Producer
    except ImportError as exc:
        raise click.ClickException(
            "headwater consume needs confluent-kafka: pip install 'headwater[server,kafka]'"
        ) from exc
    from headwater.cli.topic_consumer import TopicConsumer
    from headwater.config import Settings
    from headwater.server.app import open_store

    common = dict(properties)
    if bootstrap_servers:
        common["bootstrap.servers"] = bootstrap_servers
    if not common.get("bootstrap.servers"):
        raise click.UsageError("give --bootstrap-servers (or -X bootstrap.servers=…)")
    settings = Settings.from_env(db_url=db_url, namespace_rules=namespace_rules)
    stop = threading.Event()
    say = _Reporter()
    try:
        store = open_store(settings)
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        consumer = Consumer({
            # Where a new group starts: the events already on the topic are lineage too.
            "auto.offset.reset": "earliest",
            **common,
            "group.id": group,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        })
        # A dead-letter topic that does not answer holds a batch up for at most
        # message.timeout.ms (10 s unless set), then the consumer goes on.
        letters = {"acks": "all", "message.timeout.ms": "10000", **common}
        dead_letter = Producer(letters) if dead_letter_topic else None
    except KafkaException as exc:
        store.close()
        raise click.ClickException(f"kafka settings refused: {exc}") from exc
    # With a producer built, librdkafka has accepted the setting as milliseconds.
    letters_wait = float(letters["message.timeout.ms"]) / 1000.0 + 1.0 if dead_letter else 0.0
    loop = TopicConsumer(store, consumer, batch_size=batch_size, dead_letter=dead_letter,
                         dead_letter_topic=dead_letter_topic, dead_letter_wait=letters_wait)

    def assigned(_consumer: Any, partitions: list[Any]) -> None:
        say.event(f"assigned {_partitions(partitions)}")

    def revoked(_consumer: Any, partitions: list[Any]) -> None:
        say.event(f"revoked {_partitions(partitions)}")

    consumer.subscribe([topic], on_assign=assigned, on_revoke=revoked)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    say.event(f"consuming {topic} as group {group!r} into {_safe_url(settings.database_url)}")
    try:
        with _metrics(metrics_port, loop.stats), say.live(loop.stats, topic):
            loop.run(stop, say.status, say.interval(status_interval))
    except (HeadwaterError, KafkaException) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        with contextlib.suppress(KafkaException):
            loop.measure_lag()
        consumer.close()  # leaves the group at once, so its partitions move on now
        if dead_letter is not None:
            dead_letter.flush(10)
        store.close()
    say.event(f"stopped: {loop.stats.line(overall=True)}")


def _partitions(partitions: list[Any]) -> str:
    if not partitions:
        return "no partitions"
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ", ".join(f"{t}[{','.join(str(p) for p in sorted(ps))}]"
                     for t, ps in sorted(by_topic.items()))


def _safe_url(url: str) -> str:
    """The store URL without its password, for the log."""
    scheme, sep, rest = url.partition("://")
    if "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}{sep}{user}@{host}"


class _Reporter:
    """Status to stderr: a rich progress bar on a terminal, plain lines otherwise.

    The bar's total is what the group has consumed plus its lag, so it shows how
    far behind the topic's end the process is; it is full when caught up.
    """

    def __init__(self, console: Any = None) -> None:
        from headwater.cli.progress import stderr_console

        self.console = console or stderr_console()
        self._bar: Any = None

    def event(self, text: str) -> None:
        if self.console.is_terminal:
            self.console.log(text)
        else:
            click.echo(f"headwater consume: {text}", err=True)

    def interval(self, seconds: float) -> float:
        """Seconds between status calls: at least once a second while a bar is drawn."""
        return min(seconds, 1.0) if self.console.is_terminal else seconds

    def status(self, stats: ConsumeStats) -> None:
        if self._bar is None:
            self.event(stats.line())
            return
        lag = stats.total_lag
        self._bar.total = None if lag is None else stats.consumed + lag
        detail = (f"{stats.stored} stored, {stats.duplicates} duplicates, "
                  f"{stats.quarantined} quarantined, lag {'unknown' if lag is None else lag}")
        self._bar.update(stats.consumed, detail=detail)

    @contextlib.contextmanager
    def live(self, stats: ConsumeStats, topic: str) -> Iterator[None]:
        if not self.console.is_terminal:
            yield
            return
        from headwater.cli.progress import EventProgress

        with EventProgress(f"consuming {topic}", total=None, console=self.console) as bar:
            self._bar = bar
            try:
                self.status(stats)
                yield
            finally:
                self._bar = None


@contextlib.contextmanager
def _metrics(port: int | None, stats: ConsumeStats) -> Iterator[None]:
    """Serve ``stats`` on 127.0.0.1:``port`` while the block runs (no port: nothing)."""
    if port is None:
        yield
        return
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
    from prometheus_client.registry import Collector

    class _Collector(Collector):
        def collect(self) -> Iterator[Metric]:
            events = CounterMetricFamily("headwater_consumer_events",
                                         "Messages read from the topic, by outcome.",
                                         labels=["outcome"])
            events.add_metric(["stored"], stats.stored)
            events.add_metric(["duplicate"], stats.duplicates)
            events.add_metric(["quarantined"], stats.quarantined)
            events.add_metric(["dead_lettered"], stats.dead_lettered)
            yield events
            lag = GaugeMetricFamily("headwater_consumer_lag",
                                    "Messages of an assigned partition the group has not "
                                    "committed yet.", labels=["topic", "partition"])
            for (topic, partition), value in sorted(stats.lag.items()):
                if value is not None:
                    lag.add_metric([topic, str(partition)], value)
            yield lag

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector())
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    try:
        yield
    finally:
        server.shutdown()
        thread.join(5)
