"""The client has a method for every operation of ``/openapi.json``, and each method
sends that operation's method and path; it imports nothing of the server stack."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from headwater.client import AsyncClient, Client
from headwater.client.surface import Operation, Operations, Pages
from headwater.config import Settings
from headwater.server.app import create_app

NODE = "dataset:ns:a"
RUN = "00000000-0000-4000-8000-000000000001"

# (method, path in /openapi.json) -> (client method, sample arguments). A route the
# server gains without a client method here fails test_every_operation_has_a_method.
METHODS: dict[tuple[str, str], tuple[str, tuple[Any, ...], dict[str, Any]]] = {
    ("GET", "/api/v1/column-lineage"): ("column_lineage", (NODE,), {}),
    ("GET", "/api/v1/events/lineage"): ("events", (), {}),
    ("GET", "/api/v1/health"): ("health", (), {}),
    ("GET", "/api/v1/jobs/runs/{id}"): ("run", (RUN,), {}),
    ("POST", "/api/v1/jobs/runs/{id}/abort"): ("abort_run", (RUN,), {}),
    ("GET", "/api/v1/jobs/runs/{id}/children"): ("child_runs", (RUN,), {}),
    ("POST", "/api/v1/jobs/runs/{id}/complete"): ("complete_run", (RUN,), {}),
    ("GET", "/api/v1/jobs/runs/{id}/facets"): ("run_facets", (RUN,), {}),
    ("POST", "/api/v1/jobs/runs/{id}/fail"): ("fail_run", (RUN,), {}),
    ("POST", "/api/v1/jobs/runs/{id}/start"): ("start_run", (RUN,), {}),
    ("GET", "/api/v1/lineage"): ("lineage_graph", (NODE,), {}),
    ("POST", "/api/v1/lineage"): ("ingest", ({},), {}),
    ("POST", "/api/v1/lineage/batch"): ("ingest_batch", ([],), {}),
    ("GET", "/api/v1/namespaces"): ("namespaces", (), {}),
    ("GET", "/api/v1/namespaces/{namespace}"): ("namespace", ("s3://b",), {}),
    ("PUT", "/api/v1/namespaces/{namespace}"): ("put_namespace", ("n",), {"owner_name": "o"}),
    ("DELETE", "/api/v1/namespaces/{namespace}"): ("delete_namespace", ("n",), {}),
    ("GET", "/api/v1/namespaces/{namespace}/datasets"): ("datasets", ("n",), {}),
    ("GET", "/api/v1/namespaces/{namespace}/datasets/{dataset}"): ("dataset", ("n", "/a/b"), {}),
    ("PUT", "/api/v1/namespaces/{namespace}/datasets/{dataset}"): (
        "put_dataset",
        ("n", "d"),
        {"type": "DB_TABLE", "physical_name": "d", "source_name": "s"},
    ),
    ("DELETE", "/api/v1/namespaces/{namespace}/datasets/{dataset}"): (
        "delete_dataset",
        ("n", "d"),
        {},
    ),
    ("POST", "/api/v1/namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}"): (
        "tag_field",
        ("n", "d", "f", "t"),
        {},
    ),
    ("DELETE", "/api/v1/namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}"): (
        "untag_field",
        ("n", "d", "f", "t"),
        {},
    ),
    ("POST", "/api/v1/namespaces/{namespace}/datasets/{dataset}/tags/{tag}"): (
        "tag_dataset",
        ("n", "d", "t"),
        {},
    ),
    ("DELETE", "/api/v1/namespaces/{namespace}/datasets/{dataset}/tags/{tag}"): (
        "untag_dataset",
        ("n", "d", "t"),
        {},
    ),
    ("GET", "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions"): (
        "dataset_versions",
        ("n", "d"),
        {},
    ),
    ("GET", "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions/{version}"): (
        "dataset_version",
        ("n", "d", "v"),
        {},
    ),
    ("GET", "/api/v1/namespaces/{namespace}/jobs"): ("jobs", ("n",), {}),
    ("GET", "/api/v1/namespaces/{namespace}/jobs/{job}"): ("job", ("n", "j"), {}),
    ("PUT", "/api/v1/namespaces/{namespace}/jobs/{job}"): (
        "put_job",
        ("n", "j"),
        {"type": "BATCH"},
    ),
    ("DELETE", "/api/v1/namespaces/{namespace}/jobs/{job}"): ("delete_job", ("n", "j"), {}),
    ("GET", "/api/v1/namespaces/{namespace}/jobs/{job}/runs"): ("job_runs", ("n", "j"), {}),
    ("POST", "/api/v1/namespaces/{namespace}/jobs/{job}/runs"): ("create_run", ("n", "j"), {}),
    ("POST", "/api/v1/namespaces/{namespace}/jobs/{job}/tags/{tag}"): (
        "tag_job",
        ("n", "j", "t"),
        {},
    ),
    ("DELETE", "/api/v1/namespaces/{namespace}/jobs/{job}/tags/{tag}"): (
        "untag_job",
        ("n", "j", "t"),
        {},
    ),
    ("GET", "/api/v1/namespaces/{namespace}/jobs/{job}/versions"): ("job_versions", ("n", "j"), {}),
    ("GET", "/api/v1/namespaces/{namespace}/jobs/{job}/versions/{version}"): (
        "job_version",
        ("n", "j", "v"),
        {},
    ),
    ("GET", "/api/v1/runlineage/upstream"): ("run_lineage_upstream", (RUN,), {}),
    ("GET", "/api/v1/search"): ("search", ("x",), {}),
    ("GET", "/api/v1/sources"): ("sources", (), {}),
    ("GET", "/api/v1/sources/{source}"): ("source", ("s",), {}),
    ("PUT", "/api/v1/sources/{source}"): (
        "put_source",
        ("s",),
        {"type": "T", "connection_url": "u"},
    ),
    ("GET", "/api/v1/tags"): ("tags", (), {}),
    ("PUT", "/api/v1/tags/{tag}"): ("put_tag", ("t",), {}),
    ("GET", "/api/v2/audit"): ("audit", (), {}),
    ("GET", "/api/v2/classification"): ("classification", (NODE,), {}),
    ("GET", "/api/v2/classification/datasets"): ("dataset_badges", (), {}),
    ("GET", "/api/v2/compliance"): ("compliance", (), {}),
    ("GET", "/api/v2/datasets/{nodeId}/quality"): ("quality", (NODE,), {}),
    ("GET", "/api/v2/datasets/{nodeId}/readers"): ("readers", (NODE,), {}),
    ("GET", "/api/v2/datasets/{nodeId}/root-cause"): ("root_cause", (NODE,), {}),
    ("GET", "/api/v2/duplicates"): ("duplicates", (), {}),
    ("GET", "/api/v2/drift"): ("drift", (), {}),
    ("GET", "/api/v2/drift/{driftId}"): ("drift_item", ("version:" + RUN,), {}),
    ("GET", "/api/v2/impact"): ("impact", (NODE,), {}),
    ("GET", "/api/v2/lineage"): ("lineage", (NODE,), {}),
    ("GET", "/api/v2/owners"): ("owners", (NODE,), {}),
    ("GET", "/api/v2/runs/{id}"): ("run_liveness", (RUN,), {}),
    ("PUT", "/api/v2/owners"): ("add_owner", (NODE, "me"), {}),
    ("DELETE", "/api/v2/owners"): ("remove_owner", (NODE, "me"), {}),
    ("GET", "/api/v2/producers"): ("producers", (), {}),
    ("GET", "/api/v2/namespaces/check"): ("namespace_check", (), {}),
    ("GET", "/api/v2/propagation-blocks"): ("blocks", (), {}),
    ("POST", "/api/v2/propagation-blocks"): ("add_block", ("job:n:j",), {}),
    ("DELETE", "/api/v2/propagation-blocks/{block_id}"): ("remove_block", (1,), {}),
    ("GET", "/api/v2/quarantine"): ("quarantine", (), {}),
    ("GET", "/api/v2/tag-definitions"): ("tag_definitions", (), {}),
    ("PUT", "/api/v2/tag-definitions/{tag}"): ("put_tag_definition", ("t",), {"propagates": True}),
    ("DELETE", "/api/v2/tag-definitions/{tag}"): ("delete_tag_definition", ("t",), {}),
    ("GET", "/api/v2/tokens"): ("tokens", (), {}),
    ("POST", "/api/v2/tokens"): ("create_token", ("t",), {"scopes": ["read"]}),
    ("DELETE", "/api/v2/tokens/{name}"): ("revoke_token", ("t",), {}),
    ("GET", "/metrics"): ("metrics", (), {}),
}


def _operations() -> set[tuple[str, str]]:
    spec = create_app(Settings(db_url="sqlite:///:memory:")).openapi()
    return {(method.upper(), path) for path, item in spec["paths"].items() for method in item}


def test_every_operation_has_a_method() -> None:
    operations = _operations()
    assert operations - METHODS.keys() == set(), "operations without a client method"
    assert METHODS.keys() - operations == set(), "client methods of no operation"


def _pattern(template: str) -> re.Pattern[str]:
    # A path parameter is one segment: the client percent-encodes slashes inside it.
    return re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")


@pytest.mark.parametrize(("operation", "method"), sorted(METHODS.items()), ids=str)
def test_each_method_sends_its_operation(
    operation: tuple[str, str], method: tuple[str, tuple[Any, ...], dict[str, Any]]
) -> None:
    name, args, kwargs = method
    described = vars(Operations)[name]
    assert isinstance(described, Operation)
    call = described.build(*args, **kwargs)
    assert (call.method, bool(_pattern(operation[1]).match(call.path))) == (operation[0], True)
    assert getattr(Client, name) is described and getattr(AsyncClient, name) is described


def _fields(
    kind: Any, schema: dict[str, Any], schemas: dict[str, Any], path: str, problems: list[str]
) -> None:
    """Compare a model with a JSON schema: the same property names, all the way down."""
    if "$ref" in schema:
        schema = schemas[schema["$ref"].rsplit("/", 1)[1]]
    arms = [a for a in schema.get("anyOf", [schema]) if a.get("type") != "null"]
    schema = arms[0] if len(arms) == 1 else schema
    if "$ref" in schema:
        schema = schemas[schema["$ref"].rsplit("/", 1)[1]]
    kind = (
        next((a for a in typing.get_args(kind) if a is not type(None)), kind)
        if (typing.get_origin(kind) in (typing.Union, types.UnionType))
        else kind
    )
    if schema.get("type") == "array" and typing.get_origin(kind) is tuple:
        _fields(typing.get_args(kind)[0], schema.get("items", {}), schemas, f"{path}[]", problems)
    elif "properties" in schema and dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        declared = set(schema["properties"])
        if declared != set(hints):
            problems.append(
                f"{path} ({kind.__name__}): server {sorted(declared - set(hints))}"
                f" client {sorted(set(hints) - declared)}"
            )
        for name in declared & set(hints):
            _fields(hints[name], schema["properties"][name], schemas, f"{path}.{name}", problems)


def test_every_model_has_the_fields_the_server_declares() -> None:
    spec = create_app(Settings(db_url="sqlite:///:memory:")).openapi()
    problems: list[str] = []
    compared = 0
    for (method, path), (name, args, kwargs) in METHODS.items():
        answers = spec["paths"][path][method.lower()]["responses"]
        ok = next(answers[code] for code in answers if code.startswith("2"))
        schema = ok.get("content", {}).get("application/json", {}).get("schema", {})
        kind = getattr(vars(Operations)[name].build(*args, **kwargs).read, "kind", None)
        if kind is not None and "$ref" in schema:
            compared += 1
            _fields(kind, schema, spec["components"]["schemas"], f"{method} {path}", problems)
    assert problems == []
    assert compared > 50


def test_every_paged_list_has_an_iterator() -> None:
    spec = create_app(Settings(db_url="sqlite:///:memory:")).openapi()
    paged = {
        (method.upper(), path)
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if {"limit", "offset"} <= (names := {p["name"] for p in operation.get("parameters", [])})
        or {"limit", "cursor"} <= names
    }
    iterated = {
        described.build.__name__
        for described in vars(Operations).values()
        if isinstance(described, Pages)
    }
    assert {METHODS[operation][0] for operation in paged} == iterated


def test_every_method_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "python-api.md").read_text()
    methods = [
        name for name, value in vars(Operations).items() if isinstance(value, Operation | Pages)
    ]
    assert [name for name in methods if f"`{name}" not in docs and f" {name}(" not in docs] == []


def test_the_client_imports_no_server_dependency() -> None:
    server_side = [
        "fastapi",
        "starlette",
        "sqlalchemy",
        "alembic",
        "pydantic",
        "uvicorn",
        "headwater.server",
        "headwater.store",
    ]
    code = (
        "import sys, headwater.client\n"
        "import headwater.client.models, headwater.client.errors\n"
        f"print([m for m in {server_side!r} if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_pages_follow_the_cursor_else_the_offset() -> None:
    from headwater.client.models import DatasetList, SearchResultList, TagList
    from headwater.client.operations import marquez
    from headwater.client.session import next_page

    full = DatasetList(datasets=("a", "b"), totalCount=5, nextCursor="c1")  # type: ignore[arg-type]
    after = next_page(marquez.datasets("ns", limit=2, offset=1), full)
    assert after is not None and dict(after.params) == {"limit": 2, "offset": 0, "cursor": "c1"}
    # A server that sends no cursor (older, or a list without one) pages by offset...
    old = DatasetList(datasets=("a", "b"), totalCount=5)  # type: ignore[arg-type]
    after = next_page(marquez.datasets("ns", limit=2, offset=1), old)
    assert after is not None and dict(after.params) == {"limit": 2, "offset": 3}
    assert next_page(marquez.datasets("ns", limit=2, offset=3), old) is None  # totalCount
    tags = TagList(tags=("a",))  # type: ignore[arg-type]
    assert next_page(marquez.tags(limit=2), tags) is None  # a short page
    # ...and a list with neither offset nor cursor ends where its cursor does.
    found = SearchResultList(totalCount=9, results=("a", "b"))  # type: ignore[arg-type]
    assert next_page(marquez.search("x", limit=2), found) is None
    assert next_page(marquez.search("x", limit=2, cursor="c1"), found) is None
