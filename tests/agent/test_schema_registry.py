"""A topic's value schema read from a real schema registry (Apicurio Registry's
Confluent-compatible API): Avro and JSON Schema fields as nested schema fields,
misses and an unreachable registry as no fields, a Kafka write whose value
is bytes to Spark getting the registered fields in its ``schema`` facet, and the
request made on the agent's capture worker, never on Spark's listener thread."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


def test_an_unreachable_registry_gives_no_fields_and_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"http://127.0.0.1:{free_port()}/apis/ccompat/v7"
    registry = SchemaRegistry(url, 0.5)
    with caplog.at_level(logging.WARNING, logger="headwater.agent.sources.schema_registry"):
        assert registry.value_fields("t") is None
        # The failure is remembered too: one warning, no second request.
        assert registry.value_fields("t") is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and url in warnings[0].getMessage()


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


class _HoldingRegistry:
    """The real registry behind a proxy that holds each answer ``hold`` seconds before
    asking it: a slow registry. Notes when it answered each request."""

    def __init__(self, upstream: str, hold: float) -> None:
        self.answered: list[float] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                time.sleep(hold)
                answer = httpx.get(upstream + self.path, timeout=10)
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("content-type", "text/plain"))
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)
                proxy.answered.append(time.monotonic())

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.mark.spark
@pytest.mark.slow
@needs_connectors("kafka")
def test_the_registry_is_asked_on_the_capture_worker_not_the_listener_thread(
    spark: Any,
    kafka_bootstrap: str,
    apicurio: ApicurioRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spark's listener bus is shared by every listener: a registry holding its answer
    for seconds must hold up the agent's own worker only. The threads and the order of
    events tell it, not wall times: which thread asked, and whether each listener
    callback had returned before the registry answered."""
    topic = _topic()
    _register(apicurio, f"{topic}-value", _ORDER)
    slow = _HoldingRegistry(f"http://127.0.0.1:{apicurio.port}", hold=3.0)
    asked: list[tuple[str, int]] = []
    ask = SchemaRegistry._ask

    def noted_ask(self: SchemaRegistry, name: str) -> Any:
        asked.append((name, threading.get_ident()))
        return ask(self, name)

    monkeypatch.setattr(SchemaRegistry, "_ask", noted_ask)
    lineage = Lineage(
        spark,
        tmp_path / "events.jsonl",
        schema_registry_url=f"{slow.url}/apis/ccompat/v7",
        schema_registry_timeout=10.0,
    )
    listener = lineage.agent._listener
    callbacks: list[tuple[int, float]] = []
    on_action = listener._on_action_scoped

    def noted_callback(*args: Any) -> None:
        try:
            on_action(*args)
        finally:
            callbacks.append((threading.get_ident(), time.monotonic()))

    listener._on_action_scoped = noted_callback
    try:
        for key in ("1", "2"):
            spark.createDataFrame([(key, b"\x00")], "key string, value binary").write.format(
                "kafka"
            ).option("kafka.bootstrap.servers", kafka_bootstrap).option("topic", topic).save()
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
        events = lineage.action_events()
        worker = lineage.agent._worker._thread.ident
    finally:
        del listener._on_action_scoped
        lineage.close()
        slow.close()
    # Both writes' callbacks ran, each on a listener thread, none of which asked.
    assert len(callbacks) >= 2
    assert [name for name, _ in asked] == [topic]
    assert asked[0][1] == worker
    assert worker not in {thread for thread, _ in callbacks}
    # The first write's callback, whose action asked, returned before the registry gave
    # its held answer (on the listener thread the answer would have come first).
    assert len(slow.answered) == 1
    assert min(returned for _, returned in callbacks) < slow.answered[0]
    # ...and the worker waited for it: both writes carry the registered fields.
    writes = [e for e in events if any(o["name"] == topic for o in e.get("outputs", []))]
    assert len({e["run"]["runId"] for e in writes}) == 2
    outputs = [o for e in writes for o in e["outputs"] if o["name"] == topic]
    for output in outputs:
        value = next(f for f in output["facets"]["schema"]["fields"] if f["name"] == "value")
        assert [f["name"] for f in value["fields"]] == [name for name, _, _ in _ORDER_FIELDS]
