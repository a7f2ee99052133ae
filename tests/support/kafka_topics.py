"""Topics on the test broker: create one, produce to it, read it back (real confluent-kafka)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

__all__ = ["create_topic", "produce", "read_messages"]


def create_topic(bootstrap: str, partitions: int, prefix: str = "lineage") -> str:
    """A new topic with ``partitions`` partitions and a unique name."""
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, num_partitions=partitions)]).values():
        future.result(timeout=30)
    return topic


def produce(bootstrap: str, topic: str,
            messages: Iterable[tuple[bytes | None, bytes | None]]) -> int:
    """Produce ``(key, value)`` pairs and wait for every acknowledgement; returns the count."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20})
    count = 0
    for key, value in messages:
        while True:
            try:
                producer.produce(topic, key=key, value=value)
                break
            except BufferError:
                producer.poll(0.1)
        count += 1
    left = producer.flush(60)
    assert left == 0, f"{left} message(s) not acknowledged"
    return count


def read_messages(bootstrap: str, topic: str, count: int, timeout: float = 30) -> list[Any]:
    """Up to ``count`` messages of ``topic`` from the beginning, read by a fresh group."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    messages: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            messages.append(message)
    finally:
        consumer.close()
    return messages
