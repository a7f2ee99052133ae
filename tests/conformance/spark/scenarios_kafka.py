"""The suite's Kafka scenarios, against a real broker.

The conformance test starts one broker (``tests/support/kafka_broker.py``) and
passes its ``127.0.0.1:<port>`` to the job JVM in :data:`BOOTSTRAP_VARIABLE`.

The suite's broker is ``kafka-host:9092`` and its listener is configured with
``namespaceResolvers.kafka-cluster-prod.hosts=[kafka-host;kafka-host-other]``,
which turns ``kafka://kafka-host:9092`` into the expected
``kafka://kafka-cluster-prod:9092`` (the resolver replaces the host text and
keeps the rest). Here no name ``kafka-host`` resolves (that would take an
``/etc/hosts`` entry, root on every machine that runs the tests) and the port
is free, not 9092; so the scenario's resolver also lists the real address with
its port, ``127.0.0.1:<port>``, and the same substitution turns
``kafka://127.0.0.1:<port>`` into ``kafka://kafka-cluster-prod:9092`` — the
listener's hostList semantics, applied to the broker that actually ran.
"""

from __future__ import annotations

import os
from typing import Any

from tests.conformance.spark.scenario import Scenario

BOOTSTRAP_VARIABLE = "HEADWATER_CONFORMANCE_KAFKA_BOOTSTRAP"


def _bootstrap() -> str:
    bootstrap = os.environ.get(BOOTSTRAP_VARIABLE)
    if not bootstrap:
        raise RuntimeError(f"{BOOTSTRAP_VARIABLE} names no Kafka broker")
    return bootstrap


def _conf() -> dict[str, str]:
    # Read when the module is imported: the job JVM's process has the variable;
    # the test process, which only lists the scenarios, may not.
    real = os.environ.get(BOOTSTRAP_VARIABLE, "127.0.0.1:9092")
    resolver = "spark.openlineage.dataset.namespaceResolvers.kafka-cluster-prod:9092"
    return {
        "spark.openlineage.facets.spark_unknown.disabled": "false",
        "spark.openlineage.facets.spark.logicalPlan.disabled": "false",
        # The suite's listener reports read-only actions (show()) too.
        "spark.headwater.captureReadOnlyActions": "true",
        f"{resolver}.type": "hostList",
        f"{resolver}.hosts": f"[kafka-host:9092;kafka-host-other:9092;{real}]",
    }


PEOPLE = [
    ("Bilbo Baggins", 50),
    ("Gandalf", 1000),
    ("Thorin", 195),
    ("Balin", 178),
    ("Kili", 77),
    ("Dwalin", 169),
    ("Oin", 167),
    ("Gloin", 158),
    ("Fili", 82),
    ("Bombur", None),
]


def kafka_batch(spark: Any) -> None:
    bootstrap = _bootstrap()
    people = spark.createDataFrame(PEOPLE, ["name", "age"])
    (
        people.selectExpr("CAST(name AS STRING) AS key", "CAST(age AS STRING) AS value")
        .write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", "topic1")
        .save()
    )
    spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option(
        "subscribe", "topic1"
    ).load().show()


def kafka_assign(spark: Any) -> None:
    from confluent_kafka import Producer

    bootstrap = _bootstrap()
    # The topics exist before an assign read of them (the broker creates them on a first write).
    producer = Producer({"bootstrap.servers": bootstrap})
    for topic in ("topicA", "topicB"):
        producer.produce(topic, key=b"k", value=b"v", partition=0)
    producer.flush(30)
    spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option(
        "assign", '{"topicA": [0], "topicB": [0]}'
    ).load().show()


KAFKA_SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "kafka batch",
        "testPysparkKafkaReadWriteTest",
        "Kafka Examples",
        "/tmp/warehouse",
        (
            "pysparkKafkaWriteStartEvent",
            "pysparkKafkaWriteCompleteEvent",
            "pysparkKafkaReadStartEvent",
            "pysparkKafkaReadCompleteEvent",
        ),
        kafka_batch,
        conf=_conf(),
        session="kafka",
    ),
    Scenario(
        "kafka assign",
        "testPysparkKafkaReadAssignTest",
        "Kafka Examples",
        "/tmp/warehouse",
        ("pysparkKafkaAssignReadStartEvent", "pysparkKafkaAssignReadCompleteEvent"),
        kafka_assign,
        conf=_conf(),
        session="kafka",
    ),
)
