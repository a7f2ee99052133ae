"""The Kafka broker fixture serves a real produce/consume round trip."""

from __future__ import annotations

import time
import uuid

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.kafka]


def test_topic_round_trip(kafka_bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"roundtrip-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    for future in admin.create_topics([NewTopic(topic, num_partitions=1)]).values():
        future.result(timeout=30)

    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    sent = [b"first", b"second", b"third"]
    for value in sent:
        producer.produce(topic, value=value)
    assert producer.flush(30) == 0

    consumer = Consumer({
        "bootstrap.servers": kafka_bootstrap,
        "group.id": topic,
        "auto.offset.reset": "earliest",
    })
    consumer.subscribe([topic])
    received: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(received) < len(sent) and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is None:
                continue
            assert message.error() is None, message.error()
            received.append(message.value())
    finally:
        consumer.close()
    assert received == sent
