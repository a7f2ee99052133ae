"""``headwater consume`` as a real process against the real broker and real databases.

Killed with SIGKILL mid-way and restarted, it stores every event exactly once;
two processes in one group on one PostgreSQL share the partitions; refused
messages reach the quarantine and the dead-letter topic and hold nothing up,
not even when the dead-letter topic refuses them; while the database is
away, nothing is committed; and what the agent's kafka transport produces is
what the store ends up with.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from headwater.store import Store
from tests.server.events import run_event
from tests.server.live import free_port
from tests.support.kafka_topics import create_topic, produce, read_messages

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

# A restarted member waits for the killed one's session to expire before the
# group rebalances: the broker's shortest session keeps that wait short.
_FAST_GROUP = ("-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=1000")


class _Consume:
    """One ``headwater consume`` process; its stderr goes to a file read back by the test."""

    def __init__(self, log: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "headwater", "consume", *args],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env={**{k: v for k, v in os.environ.items()
                        if not k.startswith("HEADWATER_") and k != "FORCE_COLOR"},
                     **(env or {})},
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.output())
            if match:
                return match
            assert self.process.poll() is None, self.output()
            time.sleep(0.1)
        raise AssertionError(f"no {pattern!r} in time:\n{self.output()}")

    def stop(self, timeout: float = 60) -> str:
        """SIGTERM, wait for a clean exit, and return the output."""
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout) == 0, self.output()
        return self.output()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


@pytest.fixture
def processes() -> Iterator[list[_Consume]]:
    started: list[_Consume] = []
    yield started
    for process in started:
        process.kill()


def _args(bootstrap: str, topic: str, db_url: str, *extra: str) -> list[str]:
    return ["--topic", topic, "--bootstrap-servers", bootstrap, "--db", db_url,
            "--status-interval", "0.5", *_FAST_GROUP, *extra]


def _counter(db_url: str) -> tuple[Callable[[str], int], sa.Engine]:
    engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)

    def count(table: str) -> int:
        try:
            with engine.connect() as conn:
                return int(conn.scalar(sa.text(f"SELECT count(*) FROM {table}")) or 0)
        except sa.exc.OperationalError:
            return 0  # not created yet
        except sa.exc.ProgrammingError:
            return 0
    return count, engine


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _committed(bootstrap: str, topic: str, group: str) -> int:
    """The offset ``group`` has committed on partition 0 of ``topic`` (asked without joining)."""
    from confluent_kafka import Consumer, TopicPartition

    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        [partition] = reader.committed([TopicPartition(topic, 0)], timeout=10)
    finally:
        reader.close()
    return int(partition.offset)


def _events(count: int, runs: int) -> list[dict[str, Any]]:
    """``count`` distinct events over ``runs`` runs (their run ids spread the keys)."""
    run_ids = [str(uuid.uuid4()) for _ in range(runs)]
    return [
        run_event(run_id=run_ids[i % runs], job=f"job_{i % runs}",
                  event_type="START" if i < runs else "RUNNING",
                  event_time=f"2026-11-01T10:{(i // 60) % 60:02d}:{i % 60:02d}.{i:06d}Z")
        for i in range(count)
    ]


def _messages(events: list[dict[str, Any]]) -> Iterator[tuple[bytes, bytes]]:
    for event in events:
        yield f"run:{event['run']['runId']}".encode(), json.dumps(event).encode()


def test_kill_9_mid_way_and_a_restart_store_every_event_exactly_once(
    kafka_bootstrap: str, tmp_path: Path, processes: list[_Consume]
) -> None:
    db_url = f"sqlite:///{tmp_path / 'lineage.db'}"
    topic = create_topic(kafka_bootstrap, partitions=3)
    events = _events(3000, runs=150)
    produce(kafka_bootstrap, topic, _messages(events))
    count, engine = _counter(db_url)
    args = _args(kafka_bootstrap, topic, db_url, "--group", "kill9", "--batch-size", "20")

    first = _Consume(tmp_path / "first.log", *args)
    processes.append(first)
    _wait(lambda: count("events") >= 300, 120, "the first batches")
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(30)
    at_kill = count("events")
    assert at_kill < len(events), "the consumer finished before it could be killed mid-way"

    second = _Consume(tmp_path / "second.log", *args)
    processes.append(second)
    _wait(lambda: count("events") >= len(events), 180, "every event")
    second.wait_for(r"lag 0 over 3 partition", 60)  # every offset committed
    out = second.stop()
    stopped = re.search(r"stopped: consumed (\d+) \((\d+) stored, (\d+) duplicates, "
                        r"(\d+) quarantined", out)
    assert stopped, out
    consumed, stored, duplicates, quarantined = map(int, stopped.groups())
    # The restart re-reads at most what the killed process stored but had not committed.
    assert consumed == stored + quarantined
    assert consumed - duplicates == len(events) - at_kill
    assert quarantined == 0

    assert count("events") == len(events)
    assert count("runs") == 150
    with engine.connect() as conn:
        hashes = conn.execute(sa.text("SELECT count(DISTINCT event_hash) FROM events")).scalar()
    assert hashes == len(events)
    engine.dispose()


def test_on_a_terminal_progress_is_a_bar_with_events_per_second(
    kafka_bootstrap: str, tmp_path: Path, processes: list[_Consume]
) -> None:
    db_url = f"sqlite:///{tmp_path / 'lineage.db'}"
    topic = create_topic(kafka_bootstrap, partitions=1)
    produce(kafka_bootstrap, topic, list(_messages(_events(50, 5))))
    # FORCE_COLOR makes rich take stderr for a terminal; COLUMNS keeps the bar on one line.
    consume = _Consume(tmp_path / "consume.log", *_args(kafka_bootstrap, topic, db_url,
                                                         "--group", "terminal"),
                       env={"FORCE_COLOR": "1", "COLUMNS": "250"})
    processes.append(consume)
    consume.wait_for(r"50 stored, 0 duplicates, 0 quarantined, lag 0")
    output = consume.stop()
    assert f"consuming {topic}" in output and "━" in output and "100%" in output
    assert re.search(r"[\d,]+ events/s", output)
    assert "\x1b[" in output
    assert "headwater consume: consumed" not in output  # the plain lines are for non-terminals


@pytest.mark.postgres
def test_two_consumers_in_one_group_share_the_partitions_on_postgresql(
    kafka_bootstrap: str, pg_url: str, tmp_path: Path, processes: list[_Consume]
) -> None:
    Store.open(pg_url, migrate=True).close()  # deployed once, before the consumers start
    topic = create_topic(kafka_bootstrap, partitions=4)
    args = _args(kafka_bootstrap, topic, pg_url, "--group", "pair", "--batch-size", "50")
    first = _Consume(tmp_path / "a.log", *args)
    processes.append(first)
    first.wait_for(rf"assigned {topic}\[0,1,2,3\]")
    second = _Consume(tmp_path / "b.log", *args)
    processes.append(second)
    second.wait_for(rf"assigned {topic}\[\d")
    first.wait_for(rf"assigned {topic}\[\d(,\d)?\]\n")  # gave half away

    events = _events(1200, runs=200)
    produce(kafka_bootstrap, topic, _messages(events))
    count, engine = _counter(pg_url)
    _wait(lambda: count("events") >= len(events), 180, "every event")
    consumed = []
    for process in (first, second):
        process.wait_for(r"lag 0 over 2 partition", 60)
        out = process.stop()
        stopped = re.search(r"stopped: consumed (\d+) \((\d+) stored", out)
        assert stopped, out
        consumed.append(int(stopped.group(1)))
    assert all(n > 0 for n in consumed), consumed  # both did part of the work
    # More only if the group rebalanced mid-way (a heartbeat lost on a busy machine).
    assert sum(consumed) >= len(events)
    assert count("events") == len(events)
    assert count("quarantine") == 0
    engine.dispose()


def test_refused_messages_go_to_the_quarantine_and_the_dead_letter_topic(
    kafka_bootstrap: str, tmp_path: Path, processes: list[_Consume]
) -> None:
    db_url = f"sqlite:///{tmp_path / 'lineage.db'}"
    topic = create_topic(kafka_bootstrap, partitions=1)
    dead = create_topic(kafka_bootstrap, partitions=1, prefix="dead")
    good = [run_event(), run_event()]
    invalid = run_event(run_id="not-a-uuid")
    sent: list[tuple[bytes | None, bytes | None]] = [
        (b"k1", json.dumps(good[0]).encode()),
        (b"k2", b"{not json"),
        (b"k3", json.dumps(invalid).encode()),
        (None, None),  # an empty message
        (b"k4", json.dumps(good[1]).encode()),
    ]
    produce(kafka_bootstrap, topic, sent)
    metrics_port = free_port()
    consume = _Consume(tmp_path / "consume.log", *_args(
        kafka_bootstrap, topic, db_url, "--group", "refusals", "--dead-letter-topic", dead,
        "--metrics-port", str(metrics_port)))
    processes.append(consume)
    consume.wait_for(r"consumed 5 \(2 stored, 0 duplicates, 3 quarantined, "
                     r"3 dead-lettered\).* lag 0 over 1 partition")

    metrics = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics").text
    assert f'headwater_consumer_lag{{partition="0",topic="{topic}"}} 0.0' in metrics
    assert 'headwater_consumer_events_total{outcome="quarantined"} 3.0' in metrics
    assert 'headwater_consumer_events_total{outcome="stored"} 2.0' in metrics
    consume.stop()

    with Store.open(db_url, migrate=False) as store:
        assert store.counts()["events"] == 2
        with store.engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT payload, reason, status FROM quarantine ORDER BY payload")).all()
    by_payload = {payload: (reason, status) for payload, reason, status in rows}
    assert set(by_payload) == {json.dumps("{not json"), json.dumps(""),
                               json.dumps(invalid, sort_keys=True, ensure_ascii=False)}
    assert {status for _, status in by_payload.values()} == {400}
    assert "run.runId" in by_payload[json.dumps(invalid, sort_keys=True, ensure_ascii=False)][0]

    letters = read_messages(kafka_bootstrap, dead, 3)
    assert [(m.key(), m.value()) for m in letters] == [sent[1], sent[2], sent[3]]
    headers = [dict(m.headers()) for m in letters]
    assert [h["headwater.source"].decode() for h in headers] == [
        f"{topic}/0/1", f"{topic}/0/2", f"{topic}/0/3"]
    assert "runId" in headers[1]["headwater.reason"].decode()
    assert headers[1]["headwater.field"] == b"run.runId"
    assert all(h["headwater.status"] == b"400" for h in headers)


@pytest.mark.postgres
def test_while_the_database_is_down_the_batch_waits_uncommitted(
    kafka_bootstrap: str, pg_url: str, tmp_path: Path, processes: list[_Consume]
) -> None:
    Store.open(pg_url, migrate=True).close()
    topic = create_topic(kafka_bootstrap, partitions=1)
    consume = _Consume(tmp_path / "consume.log", *_args(
        kafka_bootstrap, topic, pg_url, "--group", "outage", "--batch-size", "50"))
    processes.append(consume)
    consume.wait_for(rf"assigned {topic}\[0\]")
    events = _events(200, runs=20)
    produce(kafka_bootstrap, topic, _messages(events[:100]))
    count, engine = _counter(pg_url)
    _wait(lambda: count("events") == 100, 60, "the first 100 events")

    database = pg_url.rsplit("/", 1)[1]
    admin = sa.create_engine(pg_url.rsplit("/", 1)[0] + "/postgres",
                             isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    engine.dispose()
    with admin.connect() as conn:
        conn.execute(sa.text(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS false'))
        conn.execute(sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE datname = :name"), {"name": database})
    try:
        produce(kafka_bootstrap, topic, _messages(events[100:]))
        consume.wait_for(r"store unavailable, retrying 50 message")
        assert _committed(kafka_bootstrap, topic, "outage") == 100  # none of the second half
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true'))
        admin.dispose()
    _wait(lambda: count("events") == 200, 90, "the second 100 events")
    consume.wait_for(r"consumed 200 \(200 stored, 0 duplicates, 0 quarantined\).*lag 0 over 1 ")
    consume.stop()
    assert count("quarantine") == 0  # an outage refuses nothing
    engine.dispose()


def test_a_dead_letter_topic_that_refuses_holds_nothing_up(
    kafka_bootstrap: str, tmp_path: Path, processes: list[_Consume]
) -> None:
    db_url = f"sqlite:///{tmp_path / 'lineage.db'}"
    topic = create_topic(kafka_bootstrap, partitions=1)
    produce(kafka_bootstrap, topic,
            [(b"k", b"[not json"), (b"k", json.dumps(run_event()).encode())])
    consume = _Consume(tmp_path / "consume.log", *_args(
        kafka_bootstrap, topic, db_url, "--group", "no-letters",
        "--dead-letter-topic", "not a topic name!", "-X", "message.timeout.ms=3000"))
    processes.append(consume)
    consume.wait_for(r"dead-letter topic not a topic name!: 1 of 1 message\(s\) not delivered")
    consume.wait_for(r"consumed 2 \(1 stored, 0 duplicates, 1 quarantined\).*lag 0 over 1 ")
    consume.stop()
    count, engine = _counter(db_url)
    assert (count("events"), count("quarantine")) == (1, 1)
    engine.dispose()


def test_the_agents_kafka_transport_to_consume_end_to_end(
    kafka_bootstrap: str, tmp_path: Path, processes: list[_Consume]
) -> None:
    from headwater.agent.config import AgentConfig
    from headwater.agent.emitter import build_emitter

    db_url = f"sqlite:///{tmp_path / 'lineage.db'}"
    topic = create_topic(kafka_bootstrap, partitions=2)
    emitter = build_emitter(AgentConfig.from_sources({
        "spark.openlineage.transport.type": "kafka",
        "spark.openlineage.transport.topicName": topic,
        "spark.openlineage.transport.properties.bootstrap.servers": kafka_bootstrap,
        "spark.headwater.spool.dir": str(tmp_path / "spool"),
    }, {}))
    sent = 0
    for app_number in range(4):
        app = run_event(job=f"app_{app_number}", event_type="START")
        emitter.emit(app)
        for action in range(3):
            child = run_event(job=f"app_{app_number}.write_{action}")
            child["run"]["facets"]["parent"] = {
                "run": {"runId": app["run"]["runId"]},
                "job": {"namespace": "retail", "name": f"app_{app_number}"}}
            emitter.emit(child)
        emitter.emit({**app, "eventType": "COMPLETE", "eventTime": "2026-11-01T11:00:00.000Z"})
        sent += 5
    emitter.close(30)
    assert emitter.metrics.snapshot()["sent"] == sent

    consume = _Consume(tmp_path / "consume.log",
                       *_args(kafka_bootstrap, topic, db_url, "--group", "e2e"))
    processes.append(consume)
    consume.wait_for(rf"consumed {sent} \({sent} stored, 0 duplicates.*lag 0 over 2 ")
    consume.stop()
    count, engine = _counter(db_url)
    with engine.connect() as conn:
        states = dict(conn.execute(sa.text(
            "SELECT j.name, r.state FROM runs r JOIN jobs j ON j.id = r.job_id")).all())
    engine.dispose()
    assert count("events") == sent
    assert {name: state for name, state in states.items() if "." not in name} == {
        f"app_{n}": "COMPLETE" for n in range(4)}
    assert len(states) == 16
