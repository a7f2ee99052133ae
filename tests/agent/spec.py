"""Validate events against the OpenLineage 2-0-2 spec files in ../shared/conformance.

Each event is validated as a RunEvent, and every facet that names a standard
facet schema (by its ``_schemaURL``) is validated against that schema. Each
event also goes through the server's own check (``headwater.events.parse_event``),
so the agent never emits what headwater's server would refuse.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from headwater.events import parse_event

SPEC_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "openlineage-spec"


@cache
def _registry() -> tuple[Registry, dict[str, Any]]:
    resources = []
    by_file: dict[str, Any] = {}
    core = json.loads((SPEC_DIR / "OpenLineage.json").read_text())
    resources.append((core["$id"], Resource.from_contents(core)))
    for path in sorted((SPEC_DIR / "facets").glob("*.json")):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
        by_file[path.name] = schema
    return Registry().with_resources(resources), {"core": core, **by_file}


def validate_event(event: dict[str, Any]) -> None:
    """Raise if ``event`` or one of its facets is invalid, or headwater's server would refuse it.

    ``jsonschema.ValidationError`` for the spec, :class:`~headwater.errors.EventError`
    for the server's check (run on a copy: it normalises names in place).
    """
    parse_event(copy.deepcopy(event))
    registry, schemas = _registry()
    core = schemas["core"]
    run_event = {"$ref": core["$id"] + "#/$defs/RunEvent"}
    jsonschema.Draft202012Validator(
        run_event, registry=registry, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    ).validate(event)
    for facet in _facets(event):
        url = facet.get("_schemaURL", "")
        file_name = url.split("#", 1)[0].rsplit("/", 1)[-1]
        if file_name == "OpenLineage.json":
            file_name = "core"  # a custom facet declared as a base RunFacet / DatasetFacet
        if file_name not in schemas:
            raise AssertionError(f"facet with unknown schema {url!r}")
        schema_id = schemas[file_name]["$id"]
        pointer = url.split("#", 1)[1] if "#" in url else ""
        validator = jsonschema.Draft202012Validator(
            {"$ref": schema_id + "#" + pointer},
            registry=registry,
            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
        )
        validator.validate(facet)


def _facets(event: dict[str, Any]) -> list[dict[str, Any]]:
    found = list(event["run"].get("facets", {}).values()) + list(event["job"].get("facets", {}).values())
    for dataset in event.get("inputs", []) + event.get("outputs", []):
        for key in ("facets", "inputFacets", "outputFacets"):
            found.extend(dataset.get(key, {}).values())
    return found
