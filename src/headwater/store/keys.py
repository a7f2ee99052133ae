"""How the store names things: node ids, natural keys and name-based version ids.

Every step of the write path (facts, writer, derive) spells them through
these functions, so a node id or version id is the same wherever it is made.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from headwater.errors import EventError

__all__ = [
    "NO_FACETS", "DatasetKey", "dataset_key", "dataset_node", "dataset_version_uuid",
    "facets_of", "field_node", "job_node", "name_uuid", "run_node", "text_or_none",
]

# Fixed namespace for headwater's name-based (uuid5) version ids.
_VERSION_NS = uuid.UUID("6f1c2b1e-7a52-4d2e-9a3b-5b0f3c2a9e10")

DatasetKey = tuple[str, str]

NO_FACETS: Mapping[str, Any] = {}


def dataset_node(namespace: str, name: str) -> str:
    return f"dataset:{namespace}:{name}"


def job_node(namespace: str, name: str) -> str:
    return f"job:{namespace}:{name}"


def run_node(run_uuid: str) -> str:
    return f"run:{run_uuid}"


def field_node(namespace: str, name: str, field_name: str) -> str:
    return f"datasetField:{namespace}:{name}:{field_name}"


def name_uuid(namespace: uuid.UUID, name: str) -> str:
    """The name-based (version 5) UUID of ``name`` in ``namespace``, as text."""
    return str(uuid.uuid5(namespace, name))


def dataset_version_uuid(namespace: str, name: str, producer: str) -> str:
    """Deterministic version id: the same (dataset, producing run/event) -> the same uuid."""
    return name_uuid(_VERSION_NS, f"{namespace}\x00{name}\x00{producer}")


def dataset_key(dataset: Any, where: str) -> DatasetKey:
    """(namespace, name) of a dataset reference; EventError if it names none."""
    if not isinstance(dataset, dict):
        raise EventError(f"{where} must be an object", field=where)
    for part in ("namespace", "name"):
        if not isinstance(dataset.get(part), str):
            raise EventError(f"{where}.{part} must be a string", field=f"{where}.{part}")
    return (dataset["namespace"], dataset["name"])


def facets_of(container: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = container.get(key)
    return value if isinstance(value, dict) else NO_FACETS


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
