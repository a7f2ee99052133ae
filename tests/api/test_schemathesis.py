"""Schemathesis against a live ``headwater serve``: every answer is one the OpenAPI document lists.

The server runs on a SQLite file seeded with the retail events (through the batch
ingestion API), so generated reads and writes meet real namespaces, datasets, jobs
and runs. Each operation gets at least :data:`EXAMPLES` generated requests, valid and
invalid, plus schemathesis's boundary cases; then the stateful test chains the
operations the document links (a list's names into the gets that take them). A
fixed :data:`SEED` makes every run send the same requests.

A failure is any 5xx, a status or content type the operation does not document, or
a body that does not match the documented schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import hypothesis
import pytest
import schemathesis
from schemathesis import Case
from schemathesis.schemas import BaseSchema

from tests.api.retail_events import events
from tests.server.live import running_server

pytestmark = [pytest.mark.live, pytest.mark.slow]

SEED = 20260301
EXAMPLES = 50
STATEFUL_SCENARIOS = 100
STATEFUL_STEPS = 10

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "allow_header_conformance",
    "unsupported_method",
    "use_after_free",
    "ensure_resource_availability",
)


def _config() -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "request-timeout": 30,
            "generation": {"mode": "all", "max-examples": EXAMPLES, "database": "none"},
            "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        }
    )


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db: Path = tmp_path_factory.mktemp("schemathesis") / "headwater.db"
    # Nothing reads the server's output until it stops: at "critical" it logs too little
    # to fill the pipe, whatever the failures.
    with running_server("--db", f"sqlite:///{db}", "--log-level", "critical") as url:
        seeded = httpx.post(f"{url}/api/v1/lineage/batch", json=events(), timeout=60)
        assert seeded.status_code == 200, seeded.text
        yield url


@pytest.fixture(scope="module")
def api_schema(live_url: str) -> BaseSchema:
    return schemathesis.openapi.from_url(f"{live_url}/openapi.json", config=_config())


fuzzed = schemathesis.pytest.from_fixture("api_schema")


@fuzzed.parametrize()
def test_every_operation_answers_as_documented(case: Case) -> None:
    case.call_and_validate()


def test_linked_operations_answer_as_documented(api_schema: BaseSchema) -> None:
    api_schema.as_state_machine().run(
        settings=hypothesis.settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[hypothesis.Phase.generate, hypothesis.Phase.shrink],
            suppress_health_check=list(hypothesis.HealthCheck),
        )
    )
