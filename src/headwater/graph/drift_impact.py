"""What a schema drift reaches downstream (pure: no SQL, no HTTP).

A drift's impact is the impact walk (:mod:`headwater.graph.impact`) started at
the columns its changes are in, over the lineage known when the change happened:

* a change's ``path`` names a field, dotted for nested fields (``value.amount``);
  column lineage may name the nested field or only its top-level column (Spark
  reports ``value`` for a ``from_json(value)``), so the walk starts at the field
  and at every enclosing one (``value.amount`` and ``value``). A possible rename
  starts at the old name: that is the column its readers read;
* a **contract** drift is seen by one consumer, the job that declares the schema:
  the first step goes through that job only, and what lies beyond it is reached
  by any path;
* a job that reads the dataset but reports no column lineage from it may use
  any of its columns: the table lineage from the dataset is walked through such
  readers only (direct, as :func:`headwater.graph.impact.impact` counts what
  only table lineage reaches), never through readers whose column lineage says
  which columns they use.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headwater.graph.impact import ImpactAnswer, ImpactSource, Start, impact_from
from headwater.graph.model import Direction, NodeId, NodeType
from headwater.graph.traverse import NeighbourSource

__all__ = [
    "DRIFT_CSV_COLUMNS",
    "DriftSubject",
    "answer_nodes",
    "changed_columns",
    "drift_impact",
    "drift_start",
    "to_csv",
]

#: The CSV form of a drift feed: one row per (drift, impacted node); a drift that
#: reaches nothing (or carries no impact) has one row with the node columns empty.
DRIFT_CSV_COLUMNS = (
    "driftId",
    "kind",
    "datasetId",
    "changedAt",
    "breaking",
    "consumer",
    "id",
    "type",
    "depth",
    "impact",
    "path",
    "pathEdges",
)


@dataclass(frozen=True, slots=True)
class DriftSubject:
    """The part of a drift the walk needs: its dataset, the changed paths, its consumer."""

    dataset_id: str
    paths: tuple[str, ...]
    consumer: str | None = None

    @classmethod
    def of(cls, drift: Mapping[str, Any]) -> DriftSubject:
        """From an ``/api/v2/drift`` item (``datasetId``, ``changes``, ``consumer``)."""
        consumer = drift.get("consumer")
        return cls(
            drift["datasetId"],
            tuple(change["path"] for change in drift["changes"]),
            consumer["jobId"] if consumer else None,
        )


def changed_columns(dataset_id: str, paths: Iterable[str]) -> list[str]:
    """The ``datasetField`` ids a change to each of ``paths`` is in: the field itself
    and each field enclosing it, sorted."""
    node = NodeId.parse(dataset_id)
    if node.type is not NodeType.DATASET:
        raise ValueError(f"a drift's dataset must be a dataset id, not {dataset_id!r}")
    columns: set[str] = set()
    for path in paths:
        parts = path.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix:
                columns.add(f"datasetField:{node.namespace}:{node.name}:{prefix}")
    return sorted(columns)


def drift_start(subject: DriftSubject, source: ImpactSource) -> Start:
    """The walk's :class:`Start` for ``subject``: its changed columns, its consumer as the
    only first step of a contract drift, and the readers whose column lineage from the
    dataset is known (one look at the dataset's column edges), kept out of the table walk."""
    columns = tuple(changed_columns(subject.dataset_id, subject.paths))
    through = None if subject.consumer is None else frozenset({subject.consumer})
    every_field = source.fields_of([subject.dataset_id])
    with_columns = {
        edge.via
        for edge in source.edges_from(every_field, Direction.DOWNSTREAM)
        if edge.via is not None
    }
    return Start(subject.dataset_id, columns, through, frozenset(with_columns))


def drift_impact(
    subject: DriftSubject,
    source: ImpactSource,
    tables: NeighbourSource | None,
    depth: int,
    max_nodes: int,
) -> ImpactAnswer:
    """What ``subject``'s changes reach within ``depth`` jobs, at most ``max_nodes``
    impacted nodes (the answer says when it cut some)."""
    return impact_from(source, drift_start(subject, source), depth, max_nodes, None, tables)


def answer_nodes(answer: ImpactAnswer) -> Sequence[dict[str, Any]]:
    """The impacted nodes as ``/api/v2/impact`` spells them."""
    return [
        {
            "id": n.id,
            "type": n.type.value,
            "depth": n.depth,
            "impact": n.impact.value,
            "path": n.path,
            "pathEdges": n.path_edges,
        }
        for n in answer.nodes
    ]


def to_csv(answer: Mapping[str, Any]) -> str:
    """The CSV form of an ``/api/v2/drift`` JSON answer (see :data:`DRIFT_CSV_COLUMNS`),
    paths joined by ``" > "``. It reads the JSON form so that the server and a CLI
    talking to it write the same rows."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(DRIFT_CSV_COLUMNS)
    for drift in answer["drifts"]:
        consumer = (drift.get("consumer") or {}).get("jobId", "")
        head = [
            drift["id"],
            drift["kind"],
            drift["datasetId"],
            str(drift["changedAt"]),
            "true" if drift["breaking"] else "false",
            consumer,
        ]
        nodes = (drift.get("impact") or {}).get("nodes") or []
        if not nodes:
            writer.writerow(head + [""] * 6)
        for node in nodes:
            writer.writerow(
                head
                + [
                    node["id"],
                    node["type"],
                    node["depth"],
                    node["impact"],
                    " > ".join(node["path"]),
                    " > ".join(node["pathEdges"]),
                ]
            )
    return out.getvalue()
