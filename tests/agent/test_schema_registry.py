"""A topic's value schema read from a real schema registry (Apicurio Registry's
Confluent-compatible API): Avro and JSON Schema fields as nested schema fields,
misses and an unreachable registry as no fields, and a Kafka write whose value
is bytes to Spark getting the registered fields in its ``schema`` facet."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from headwater.agent.sources.schema_registry import SchemaRegistry
from headwater.local_kafka.maven import free_port, missing_tools
from tests.agent.conftest import Lineage
from tests.support.schema_registry import ApicurioRegistry, running_registry
from tests.support.spark_packages import needs_connectors

pytestmark = [pytest.mark.kafka]

_ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "amount", "type": ["null", "double"], "default": None},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "customer",
            "type": {
                "type": "record",
                "name": "Customer",
                "fields": [{"name": "id", "type": "string"}, {"name": "city", "type": "string"}],
            },
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}

_ORDER_FIELDS = [
    ("order_id", "long", []),
    ("amount", "double", []),
    ("placed", "timestamp-millis", []),
    ("customer", "struct", [("id", "string", []), ("city", "string", [])]),
    ("tags", "array<string>", []),
]


@pytest.fixture(scope="session")
def apicurio() -> Iterator[ApicurioRegistry]:
    """One registry for the session, built from Maven Central on first use (cached)."""
    missing = missing_tools()
    if missing:
        reason = f"the schema registry needs {' and '.join(missing)} on PATH"
        if os.environ.get("HEADWATER_TEST_REQUIRE_KAFKA") == "1":
            pytest.fail(f"Kafka tools are required (HEADWATER_TEST_REQUIRE_KAFKA=1): {reason}")
        pytest.skip(reason)
    with running_registry() as registry:
        yield registry


def _register(
    registry: ApicurioRegistry, subject: str, schema: dict[str, Any], kind: str | None = None
) -> None:
    body: dict[str, Any] = {"schema": json.dumps(schema)}
    if kind is not None:
        body["schemaType"] = kind
    answer = httpx.post(
        f"{registry.ccompat_url}/subjects/{subject}/versions", json=body, timeout=10
    )
    assert answer.status_code == 200, answer.text


def _topic() -> str:
    return f"orders-{uuid.uuid4().hex[:8]}"


def test_avro_record_fields_are_nested_schema_fields(apicurio: ApicurioRegistry) -> None:
    topic = _topic()
    _register(apicurio, f"{topic}-value", _ORDER)
    assert SchemaRegistry(apicurio.ccompat_url, 2.0).value_fields(topic) == _ORDER_FIELDS


def test_json_schema_properties_are_nested_schema_fields(apicurio: ApicurioRegistry) -> None:
    topic = _topic()
    schema = {
        "type": "object",
        "properties": {
            "order_id": {"type": "integer"},
            "amount": {"type": ["number", "null"]},
            "customer": {"type": "object", "properties": {"city": {"type": "string"}}},
            "lines": {
                "type": "array",
                "items": {"type": "object", "properties": {"sku": {"type": "string"}}},
            },
        },
    }
    _register(apicurio, f"{topic}-value", schema, "JSON")
    assert SchemaRegistry(apicurio.ccompat_url, 2.0).value_fields(topic) == [
        ("order_id", "integer", []),
        ("amount", "number", []),
        ("customer", "struct", [("city", "string", [])]),
        ("lines", "array<struct>", [("sku", "string", [])]),
    ]


def test_a_topic_is_asked_for_once_per_application(apicurio: ApicurioRegistry) -> None:
    topic = _topic()
    registry = SchemaRegistry(apicurio.ccompat_url, 2.0)
    assert registry.value_fields(topic) is None
    _register(apicurio, f"{topic}-value", _ORDER)
    # The miss is kept: a registry is not asked again on every action.
    assert registry.value_fields(topic) is None
    assert SchemaRegistry(apicurio.ccompat_url, 2.0).value_fields(topic) == _ORDER_FIELDS


def test_an_unreachable_registry_gives_no_fields_and_no_error() -> None:
    assert (
        SchemaRegistry(f"http://127.0.0.1:{free_port()}/apis/ccompat/v7", 0.5).value_fields("t")
        is None
    )


@pytest.mark.spark
@pytest.mark.slow
@needs_connectors("kafka")
def test_a_kafka_write_of_bytes_gets_the_registered_value_fields(
    spark: Any, kafka_bootstrap: str, apicurio: ApicurioRegistry, tmp_path: Path
) -> None:
    topic = _topic()
    _register(apicurio, f"{topic}-value", _ORDER)
    lineage = Lineage(spark, tmp_path / "events.jsonl", schema_registry_url=apicurio.ccompat_url)
    try:
        spark.createDataFrame([("1", b"\x00")], "key string, value binary").write.format(
            "kafka"
        ).option("kafka.bootstrap.servers", kafka_bootstrap).option("topic", topic).save()
        events = lineage.action_events()
    finally:
        lineage.close()
    outputs = [o for e in events for o in e.get("outputs", []) if o["name"] == topic]
    assert outputs
    value = next(f for f in outputs[-1]["facets"]["schema"]["fields"] if f["name"] == "value")
    assert value["type"] == "struct"
    assert [f["name"] for f in value["fields"]] == [name for name, _, _ in _ORDER_FIELDS]
    customer = next(f for f in value["fields"] if f["name"] == "customer")
    assert [(f["name"], f["type"]) for f in customer["fields"]] == [
        ("id", "string"),
        ("city", "string"),
    ]
