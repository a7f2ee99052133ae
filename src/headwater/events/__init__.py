"""The OpenLineage 2-0-2 contract between the headwater agent and server.

``model`` holds frozen dataclasses whose field names are the spec's;
``serde`` is the sole owner of the wire (JSON dict) shape;
``facets`` builds the standard facets headwater emits;
``parse`` is the one check of an incoming event (:func:`parse_event`), which
the server runs once at its edge and the agent's tests run on every event the
agent emits; ``canonical`` is the content hash's JSON form.
"""

from __future__ import annotations

from headwater.events.model import (
    PRODUCER,
    SCHEMA_URL,
    Dataset,
    EventType,
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
)
from headwater.events.parse import ParsedEvent, parse_event
from headwater.events.serde import event_from_dict, event_to_dict

__all__ = [
    "Dataset",
    "EventType",
    "InputDataset",
    "Job",
    "OutputDataset",
    "PRODUCER",
    "ParsedEvent",
    "Run",
    "RunEvent",
    "SCHEMA_URL",
    "event_from_dict",
    "event_to_dict",
    "parse_event",
]
