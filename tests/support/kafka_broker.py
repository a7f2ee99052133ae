"""The tests' Kafka broker: the shipped one (:mod:`headwater.local_kafka.broker`).

Outside pytest, ``python -m tests.support.kafka_broker`` prints the bootstrap
address on its first line and keeps the broker up until it is terminated.
"""

from __future__ import annotations

import contextlib
import signal
import sys

from headwater.local_kafka import (
    KAFKA_VERSION,
    KafkaBroker,
    LocalKafkaError,
    missing_tools,
    running_broker,
    start_broker,
)

__all__ = [
    "KAFKA_VERSION",
    "KafkaBroker",
    "LocalKafkaError",
    "missing_tools",
    "running_broker",
    "start_broker",
]


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
