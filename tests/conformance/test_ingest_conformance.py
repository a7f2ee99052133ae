"""Other projects' OpenLineage events ingest through POST /api/v1/lineage.

Sources (read-only data in ../shared/conformance, never read by the product):

- ``marquez-events/``: Marquez's test events. Not events, and so excluded here:
  ``lineage__node.json`` and ``column_lineage__node.json`` (Marquez lineage-graph
  response nodes), ``mappers__*.json`` (Marquez API response shapes) and
  ``facets__*.json`` (bare facet maps, not events). ``docker__metadata.template.json``
  is a 26-event seed whose ``{{...}}`` time placeholders are filled first.
- ``openlineage-spec/examples/<Facet>/*.json``: valid facet payloads, not
  events; each is placed where its facet type lives (run, job, dataset, input
  or output facets) in an otherwise minimal RunEvent.
- ``openlineage-flink/``: the Flink integration's expected events. They are
  templates for subset matching, so ``${json-unit.*}`` placeholders are filled
  with concrete values, and ``producer``/``eventTime`` (and one file's
  ``job.name``), which the templates do not pin, are added.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
MARQUEZ = CONFORMANCE / "marquez-events"
SPEC_EXAMPLES = CONFORMANCE / "openlineage-spec" / "examples"
FLINK = CONFORMANCE / "openlineage-flink"

NOT_EVENTS = re.compile(r"^(lineage__node|column_lineage__node|mappers__.*|facets__.*)\.json$")
TEMPLATE = "docker__metadata.template.json"
FLINK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.0.0/integration/flink"


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(), store)) as test_client:
        yield test_client


def post(client: TestClient, event: dict[str, Any]) -> None:
    response = client.post(
        "/api/v1/lineage",
        content=json.dumps(event).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 200, response.text


# --- Marquez ---------------------------------------------------------------------------


def marquez_event_files() -> list[Path]:
    return sorted(
        p for p in MARQUEZ.glob("*.json") if not NOT_EVENTS.match(p.name) and p.name != TEMPLATE
    )


def test_the_exclusions_are_exactly_the_response_shapes() -> None:
    excluded = sorted(p.name for p in MARQUEZ.glob("*.json") if NOT_EVENTS.match(p.name))
    for name in excluded:
        data = json.loads((MARQUEZ / name).read_text())
        assert "eventTime" not in data and "producer" not in data, name
    assert len(marquez_event_files()) >= 20


@pytest.mark.parametrize("path", marquez_event_files(), ids=lambda p: p.name)
def test_marquez_event_ingests(client: TestClient, store: Store, path: Path) -> None:
    post(client, json.loads(path.read_text()))
    assert store.counts()["events"] == 1


def fill_marquez_template(text: str, start: datetime) -> list[dict[str, Any]]:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "RUN_START_TIME":
            return start.isoformat()
        after = re.fullmatch(r"RUN_END_TIME_AFTER_(\d+)_MINUTES", name)
        assert after is not None, name
        minutes = int(after.group(1))
        return (start + timedelta(minutes=minutes)).isoformat()

    filled = re.sub(r"\{\{(\w+)\}\}", replace, text)
    assert "{{" not in filled
    events: list[dict[str, Any]] = json.loads(filled)
    return events


def test_marquez_demo_seed_ingests_as_a_batch(client: TestClient, store: Store) -> None:
    events = fill_marquez_template((MARQUEZ / TEMPLATE).read_text(), datetime.now(UTC))
    assert len(events) == 26
    response = client.post("/api/v1/lineage/batch", json=events)
    assert response.status_code == 200, response.text
    assert response.json()["summary"]["successful"] == 26
    assert store.counts()["events"] == 26


# --- OpenLineage spec facet examples ---------------------------------------------------


def spec_examples() -> list[Path]:
    return sorted(SPEC_EXAMPLES.glob("*/*.json"))


def facet_kind(facet_dir: str, facet: dict[str, Any]) -> str:
    """Where a facet belongs, from its schema's $defs name or its folder name."""
    definition = str(facet.get("_schemaURL", "")).rpartition("/")[2].removesuffix(".json")
    name = definition if "Facet" in definition else facet_dir
    for suffix in ("InputDatasetFacet", "OutputDatasetFacet", "DatasetFacet", "RunFacet",
                   "JobFacet"):
        if name.endswith(suffix):
            return suffix
    if "Input" in name:
        return "InputDatasetFacet"
    if "Output" in name:
        return "OutputDatasetFacet"
    raise AssertionError(f"cannot place facet {facet_dir}/{definition}")


def event_with_facets(facet_dir: str, facets: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-01T00:00:00Z",
        "run": {"runId": str(uuid.uuid4()), "facets": {}},
        "job": {"namespace": "spec-examples", "name": facet_dir, "facets": {}},
        "inputs": [{"namespace": "file", "name": "/in", "facets": {}, "inputFacets": {}}],
        "outputs": [{"namespace": "file", "name": "/out", "facets": {}, "outputFacets": {}}],
        "producer": "https://github.com/headwater/headwater/tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    for name, facet in facets.items():
        kind = facet_kind(facet_dir, facet)
        target = {
            "RunFacet": event["run"]["facets"],
            "JobFacet": event["job"]["facets"],
            "DatasetFacet": event["outputs"][0]["facets"],
            "InputDatasetFacet": event["inputs"][0]["inputFacets"],
            "OutputDatasetFacet": event["outputs"][0]["outputFacets"],
        }[kind]
        target[name] = facet
    return event


@pytest.mark.parametrize("path", spec_examples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_spec_facet_example_ingests(client: TestClient, store: Store, path: Path) -> None:
    facets = json.loads(path.read_text())
    post(client, event_with_facets(path.parent.name, facets))
    assert store.counts()["events"] == 1


# --- Flink -----------------------------------------------------------------------------


def fill_json_unit(value: Any, key: str = "") -> Any:
    """Replace json-unit placeholders with concrete values of the right kind."""
    if isinstance(value, dict):
        return {k: fill_json_unit(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_json_unit(v, key) for v in value]
    if isinstance(value, str) and value.startswith("${json-unit."):
        if key == "runId":
            return str(uuid.uuid4())
        if key == "eventTime":
            return "2026-11-01T00:00:00Z"
        if value == "${json-unit.any-number}":
            return 1
        if value.startswith("${json-unit.regex}"):
            return "1.19.0" if key == "version" else "matched"
        return f"filled-{key or 'value'}"
    return value


def flink_events() -> list[Path]:
    return sorted(FLINK.glob("*.json"))


@pytest.mark.parametrize("path", flink_events(), ids=lambda p: p.name)
def test_flink_event_ingests(client: TestClient, store: Store, path: Path) -> None:
    event = fill_json_unit(json.loads(path.read_text()))
    event.setdefault("eventTime", "2026-11-01T00:00:00Z")
    event["job"].setdefault("name", path.stem)  # flink2__expected_kafka_topic_pattern omits it
    event.setdefault("producer", FLINK_PRODUCER)
    post(client, event)
    assert store.counts()["events"] == 1
