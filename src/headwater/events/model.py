"""OpenLineage 2-0-2 run events as frozen dataclasses.

Field names are the spec's own (``eventTime``, ``runId``, ``schemaURL``) so a
reader can hold the spec next to this file. Facets stay plain mappings: each
facet is already a JSON object with ``_producer`` and ``_schemaURL`` (built by
:mod:`headwater.events.facets`), and keeping them as dicts lets unknown facets
from other producers pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from headwater import __version__

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
]

#: The ``producer`` URI of every event and facet headwater writes.
PRODUCER = f"https://github.com/headwater-lineage/headwater/tree/{__version__}/agent"
#: The RunEvent schema this model follows.
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"

EventType = Literal["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"]

Facets = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Run:
    """A run: its id and run facets (parent, processing_engine, errorMessage...)."""

    runId: str
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    """A job: namespace + name, with job facets (jobType, sql...)."""

    namespace: str
    name: str
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True)
class Dataset:
    """A dataset named by the OpenLineage naming rules (see ``headwater.naming``)."""

    namespace: str
    name: str
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True)
class InputDataset(Dataset):
    """A dataset the run read."""

    inputFacets: Facets = field(default_factory=dict)


@dataclass(frozen=True)
class OutputDataset(Dataset):
    """A dataset the run wrote."""

    outputFacets: Facets = field(default_factory=dict)


@dataclass(frozen=True)
class RunEvent:
    """One OpenLineage RunEvent."""

    eventType: EventType
    eventTime: str
    run: Run
    job: Job
    inputs: tuple[InputDataset, ...] = ()
    outputs: tuple[OutputDataset, ...] = ()
    producer: str = PRODUCER
    schemaURL: str = SCHEMA_URL
