"""Store fixtures: a migrated Store on each database (via ``db_url``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headwater.store import Store

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
MARQUEZ_EVENTS = CONFORMANCE / "marquez-events"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    try:
        yield opened
    finally:
        opened.close()


def marquez_events() -> list[tuple[str, dict[str, Any]]]:
    """Marquez's fixture files that are single OpenLineage events."""
    found = []
    for path in sorted(MARQUEZ_EVENTS.glob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and str(data.get("eventTime", "")).startswith("20"):
            found.append((path.name, data))
    return found
