"""docs/ui.md documents every URL parameter the lineage explorer reads and every page route."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "docs" / "ui.md").read_text()
VIEWS = REPO / "frontend" / "src" / "views"
# The explorer reads its state in lineage-state.ts and a few drawing overrides in lineage.ts.
LINEAGE_VIEW = "".join((VIEWS / name).read_text() for name in ("lineage-state.ts", "lineage.ts"))
MAIN = (REPO / "frontend" / "src" / "main.ts").read_text()

PARAMETERS = sorted(
    set(re.findall(r"""(?:\bp|url\.searchParams)\.(?:get|getAll)\("([A-Za-z]+)"\)""", LINEAGE_VIEW))
)
ROUTE_PREFIXES = sorted(set(re.findall(r"route\(/\^\\/([a-z]*)", MAIN)))


def test_the_parameters_were_found() -> None:
    assert {
        "nodeId", "direction", "depth", "x", "from", "to", "collapse", "open", "limit", "level",
        "layout",
    } <= set(PARAMETERS)
    assert {"", "lineage", "datasets", "jobs", "runs", "search"} <= set(ROUTE_PREFIXES)


@pytest.mark.parametrize("name", PARAMETERS)
def test_every_lineage_parameter_is_documented(name: str) -> None:
    assert f"| `{name}`" in DOCS, f"lineage URL parameter {name!r} is not in docs/ui.md"


@pytest.mark.parametrize("prefix", ROUTE_PREFIXES)
def test_every_page_route_is_documented(prefix: str) -> None:
    assert f"| `/{prefix}" in DOCS, f"page /{prefix} is not in docs/ui.md"
