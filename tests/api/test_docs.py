"""docs/api.md documents every read-API route and every CLI query option."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from headwater.cli.compliance import compliance
from headwater.cli.drift import drift
from headwater.cli.duplicates import duplicates
from headwater.cli.impact import impact
from headwater.cli.lineage import lineage
from headwater.cli.owners import owners
from headwater.cli.root_cause import root_cause
from headwater.cli.search import search
from headwater.cli.tags import tags
from headwater.server.routes import (
    access,
    classification,
    classification_writes,
    datasets,
    deletes,
    drift as drift_routes,
    events,
    graph_v2,
    impact as impact_routes,
    jobs,
    legacy_writes,
    lineage_read,
    namespaces,
    run_writes,
    runs,
)
from headwater.server.routes import duplicates as duplicate_routes
from headwater.server.routes import producers as producer_routes
from headwater.server.routes import root_cause as root_cause_routes
from headwater.server.routes import search as search_routes
from headwater.server.routes import tags as tag_routes

DOCS = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()


def _normalise(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


ROUTES = [
    (method, route.path)
    for module in (
        namespaces, datasets, jobs, runs, lineage_read, graph_v2, impact_routes, search_routes,
        tag_routes, events, drift_routes,
        legacy_writes, run_writes, deletes, access, classification, classification_writes,
        producer_routes, root_cause_routes, duplicate_routes,
    )
    for route in module.router.routes
    for method in sorted(getattr(route, "methods", ()))
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_is_documented(method: str, path: str) -> None:
    assert _normalise(path) in _normalise(DOCS), f"{method} {path} is not in docs/api.md"


@pytest.mark.parametrize("command", [drift, impact, lineage, search, compliance, root_cause,
                                     duplicates,
                                     *tags.commands.values(), *owners.commands.values()])
def test_every_cli_option_is_documented(command) -> None:  # type: ignore[no-untyped-def]
    for param in command.params:
        for option in getattr(param, "opts", []):
            if option.startswith("--"):
                assert option in DOCS, f"{command.name} {option} is not in docs/api.md"
