"""The kafka transport: configured from SparkConf as the listener is, read back by a real consumer.

Events leave through the agent's own emitter and a real confluent-kafka
producer to the session's real broker, and a real consumer reads them back.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from headwater.agent.config import AgentConfig
from headwater.agent.emitter import build_emitter
from headwater.errors import ConfigError
from headwater.transport import create_transport
from headwater.transport.kafka import KafkaConfig, KafkaTransport, message_key
from tests.server.events import dataset_event, job_event, run_event
from tests.server.live import free_port
from tests.support.kafka_topics import create_topic, read_messages

OL = "spark.openlineage."


def _child(app: dict[str, Any], job: str, event_type: str) -> dict[str, Any]:
    event = run_event(job=job, event_type=event_type)
    event["run"]["facets"]["parent"] = {
        "run": {"runId": app["run"]["runId"]},
        "job": {"namespace": app["job"]["namespace"], "name": app["job"]["name"]},
    }
    return event


# -- configuration and keys (no broker) ---------------------------------------------


def test_spark_conf_keys_configure_the_transport_as_for_the_listener() -> None:
    config = AgentConfig.from_sources({
        OL + "transport.type": "kafka",
        OL + "transport.topicName": "openlineage.events",
        OL + "transport.properties.bootstrap.servers": "broker-1:9092,broker-2:9092",
        OL + "transport.properties.acks": "1",
        OL + "transport.messageKey": "fixed",
    }, {})
    kafka = KafkaConfig.from_dict(config.transport)
    assert kafka == KafkaConfig(
        topic="openlineage.events",
        properties={"bootstrap.servers": "broker-1:9092,broker-2:9092", "acks": "1"},
        message_key="fixed")


def test_the_python_clients_spelling_works_too() -> None:
    kafka = KafkaConfig.from_dict({"type": "kafka", "topic": "t", "message_key": "k",
                                   "config": {"bootstrap.servers": "b:9092"}})
    assert (kafka.topic, kafka.message_key, dict(kafka.properties)) == (
        "t", "k", {"bootstrap.servers": "b:9092"})


@pytest.mark.parametrize(("config", "message"), [
    ({"properties": {"bootstrap.servers": "b:9092"}}, "topicName"),
    ({"topicName": "t"}, "bootstrap.servers"),
    ({"topicName": "t", "properties": "b:9092"}, "key/value map"),
])
def test_incomplete_settings_are_config_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_transport({"type": "kafka", **config})


def test_the_default_key_keeps_an_applications_runs_together() -> None:
    app = run_event(job="etl_app", event_type="START")
    child = _child(app, "etl_app.write_orders", "COMPLETE")
    assert message_key(app) == "run:retail/etl_app"
    assert message_key(child) == "run:retail/etl_app"
    child["run"]["facets"]["parent"]["root"] = {
        "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "airflow", "name": "dag.task"}}
    assert message_key(child) == "run:airflow/dag.task"
    assert message_key(dataset_event("/data/x")) == "dataset:file//data/x"
    assert message_key(job_event("orders_daily")) == "job:retail/orders_daily"
    assert message_key({"eventType": "COMPLETE"}) is None


def test_a_missing_client_library_is_a_config_error_the_emitter_survives(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "confluent_kafka", None)
    with pytest.raises(ConfigError, match=r"headwater\[kafka\]"):
        create_transport({"type": "kafka", "topicName": "t",
                          "properties": {"bootstrap.servers": "127.0.0.1:1"}})
    emitter = build_emitter(AgentConfig.from_sources({
        OL + "transport.type": "kafka", OL + "transport.topicName": "t",
        OL + "transport.properties.bootstrap.servers": "127.0.0.1:1",
        "spark.headwater.spool.dir": str(tmp_path)}, {}))
    emitter.emit(run_event())
    emitter.close(1)


# -- against the real broker --------------------------------------------------------


@pytest.mark.kafka
def test_the_agents_events_are_read_back_in_order_per_run(kafka_bootstrap: str,
                                                          tmp_path: Path) -> None:
    topic = create_topic(kafka_bootstrap, partitions=3)
    config = AgentConfig.from_sources({
        OL + "transport.type": "kafka",
        OL + "transport.topicName": topic,
        OL + "transport.properties.bootstrap.servers": kafka_bootstrap,
        # The listener's documented example carries the Java producer's serializers.
        OL + "transport.properties.key.serializer":
            "org.apache.kafka.common.serialization.StringSerializer",
        OL + "transport.properties.value.serializer":
            "org.apache.kafka.common.serialization.StringSerializer",
        "spark.headwater.spool.dir": str(tmp_path / "spool"),
        "spark.headwater.batchSize": "7",
    }, {})
    emitter = build_emitter(config)
    assert isinstance(emitter.transport, KafkaTransport)
    sent: list[dict[str, Any]] = []
    for app_number in range(6):
        app = run_event(job=f"app_{app_number}", event_type="START")
        sent.append(app)
        for action in range(4):
            for event_type in ("START", "COMPLETE"):
                sent.append(_child(app, f"app_{app_number}.action_{action}", event_type))
        sent.append({**app, "eventType": "COMPLETE"})
    for event in sent:
        emitter.emit(event)
    emitter.close(30)  # close flushes: everything is on the broker when it returns
    assert emitter.metrics.snapshot()["sent"] == len(sent)
    assert not any((tmp_path / "spool").glob("*.jsonl"))

    messages = read_messages(kafka_bootstrap, topic, len(sent))
    assert sorted(json.dumps(json.loads(m.value()), sort_keys=True) for m in messages) == sorted(
        json.dumps(e, sort_keys=True) for e in sent)
    by_key: dict[str, list[Any]] = {}
    for m in messages:
        by_key.setdefault(m.key().decode(), []).append(m)
    assert sorted(by_key) == [f"run:retail/app_{n}" for n in range(6)]
    for key, group in by_key.items():
        assert len({m.partition() for m in group}) == 1, key  # one application, one partition
        group.sort(key=lambda m: m.offset())
        expected = [e for e in sent if message_key(e) == key]
        assert [json.loads(m.value()) for m in group] == expected  # in the order produced
    assert len({m.partition() for m in messages}) > 1  # the applications are spread out


@pytest.mark.kafka
def test_an_unreachable_broker_spools_and_the_next_emitter_delivers(kafka_bootstrap: str,
                                                                    tmp_path: Path) -> None:
    topic = create_topic(kafka_bootstrap, partitions=1)
    spool_dir = tmp_path / "spool"

    def conf(bootstrap: str) -> AgentConfig:
        return AgentConfig.from_sources({
            OL + "transport.type": "kafka", OL + "transport.topicName": topic,
            OL + "transport.properties.bootstrap.servers": bootstrap,
            OL + "transport.properties.message.timeout.ms": "1500",
            "spark.headwater.spool.dir": str(spool_dir),
            "spark.headwater.retries": "0",
        }, {})

    down = build_emitter(conf(f"127.0.0.1:{free_port()}"))
    events = [run_event() for _ in range(5)]
    started = time.monotonic()
    for event in events:
        down.emit(event)  # returns at once: the Spark job never waits for the broker
    assert time.monotonic() - started < 0.5
    down.close(10)
    assert down.metrics.snapshot()["spooled"] == len(events)

    up = build_emitter(conf(kafka_bootstrap))  # replays what the last one spooled
    assert up.flush(30)
    up.close(10)
    assert up.metrics.snapshot()["replayed"] == len(events)
    received = [json.loads(m.value()) for m in read_messages(kafka_bootstrap, topic, len(events))]
    assert sorted(e["run"]["runId"] for e in received) == sorted(
        e["run"]["runId"] for e in events)


@pytest.mark.kafka
def test_a_message_the_producer_cannot_carry_is_refused_not_retried(kafka_bootstrap: str) -> None:
    topic = create_topic(kafka_bootstrap, partitions=1)
    transport = create_transport({"type": "kafka", "topicName": topic, "properties": {
        "bootstrap.servers": kafka_bootstrap, "message.max.bytes": "2000"}})
    big = run_event(job="x" * 5000)
    small = run_event()
    failures = transport.emit_batch([big, small])
    transport.close(10)
    assert [(f.index, f.retriable) for f in failures] == [(0, False)]
    assert "too large" in failures[0].reason.lower()
    [message] = read_messages(kafka_bootstrap, topic, 1)
    assert json.loads(message.value()) == small
