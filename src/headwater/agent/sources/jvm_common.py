"""py4j helpers every source family's look-ups share: Scala ``Option``, a
catalog table's location, the schema a write command writes."""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["option", "query_schema", "table_location"]

logger = logging.getLogger(__name__)


def option(value: Any) -> Any:
    """Unwrap a Scala Option (``None`` when empty)."""
    if value is None:
        return None
    try:
        return value.get() if value.isDefined() else None
    except Exception:  # not an Option
        return value


def table_location(table: Any) -> str | None:
    """A ``CatalogTable``'s location URI as text."""
    try:
        return str(table.location().toString()) or None
    except Exception:
        return None


def query_schema(node: Any) -> dict[str, Any]:
    """The schema of the rows a write command writes (names and types JSON lacks)."""
    try:
        return {"query_schema": json.loads(node.query().schema().json())}
    except Exception:
        logger.debug("no query schema", exc_info=True)
        return {}
