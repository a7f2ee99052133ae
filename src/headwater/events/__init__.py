"""The OpenLineage 2-0-2 contract between the headwater agent and server.

``model`` holds frozen dataclasses whose field names are the spec's;
``serde`` is the sole owner of the wire (JSON dict) shape;
``facets`` builds the standard facets headwater emits.
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
from headwater.events.serde import event_from_dict, event_to_dict

__all__ = [
    "Dataset",
    "EventType",
    "InputDataset",
    "Job",
    "OutputDataset",
    "PRODUCER",
    "Run",
    "RunEvent",
    "SCHEMA_URL",
    "event_from_dict",
    "event_to_dict",
]
