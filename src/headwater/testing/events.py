"""Fold OpenLineage run events into :class:`~headwater.testing.lineage.Run` objects.

A run's events (START, RUNNING, COMPLETE/FAIL) each repeat some of its
datasets; the fold keeps every dataset any of them names, with the facets of
the latest event that carries them. A terminal state wins over START and
RUNNING whatever the order, as the server derives it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from headwater.testing.lineage import (
    ColumnEdge,
    Dataset,
    Field,
    Lineage,
    Output,
    Run,
    label_for,
    normalise_roots,
)

__all__ = ["fold_runs", "lineage_from_events"]

Label = Callable[[str, str], str]

_TERMINAL = ("COMPLETE", "FAIL", "ABORT")


def _facet(facets: Any, name: str) -> Mapping[str, Any]:
    value = facets.get(name) if isinstance(facets, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _dataset(raw: Mapping[str, Any], label: Label) -> Dataset:
    namespace, name = str(raw.get("namespace", "")), str(raw.get("name", ""))
    facets = raw.get("facets") or {}
    fields = _facet(facets, "schema").get("fields") or []
    schema = tuple(
        Field(str(f.get("name")), str(f.get("type") or ""))
        for f in fields
        if isinstance(f, Mapping)
    )
    tables = tuple(
        sorted(
            {
                str(s.get("name"))
                for s in _facet(facets, "symlinks").get("identifiers") or []
                if isinstance(s, Mapping) and s.get("name")
            }
        )
    )
    return Dataset(namespace, name, label(namespace, name), tables, schema)


def _edges(target: str | None, sources: Any, label: Label) -> list[ColumnEdge]:
    edges = []
    for source in sources or []:
        if not isinstance(source, Mapping):
            continue
        source_label = label(str(source.get("namespace", "")), str(source.get("name", "")))
        field = str(source.get("field", ""))
        transformations = source.get("transformations")
        if not transformations:
            # Facets before 1-1-0 name one transformation type on the field itself.
            transformations = [{"type": source.get("transformationType") or "UNKNOWN"}]
        for t in transformations:
            if isinstance(t, Mapping):
                edges.append(
                    ColumnEdge(
                        target,
                        source_label,
                        field,
                        str(t.get("type") or "UNKNOWN"),
                        t.get("subtype") or None,
                        bool(t.get("masking", False)),
                    )
                )
    return edges


def _column_edges(facets: Any, label: Label) -> list[ColumnEdge]:
    facet = _facet(facets, "columnLineage")
    edges: list[ColumnEdge] = []
    for target, spec in (facet.get("fields") or {}).items():
        if isinstance(spec, Mapping):
            edges += _edges(str(target), spec.get("inputFields"), label)
    edges += _edges(None, facet.get("dataset"), label)
    return edges


class _RunFold:
    def __init__(self, event: Mapping[str, Any]) -> None:
        job = event.get("job") or {}
        self.run_id = str((event.get("run") or {}).get("runId", ""))
        self.job_namespace = str(job.get("namespace", ""))
        self.job = str(job.get("name", ""))
        self.state = "START"
        self.parent: str | None = None
        self.inputs: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.outputs: dict[tuple[str, str], Mapping[str, Any]] = {}

    def add(self, event: Mapping[str, Any]) -> None:
        kind = str(event.get("eventType") or "OTHER")
        if kind in _TERMINAL or self.state not in _TERMINAL:
            self.state = kind if kind != "OTHER" else self.state
        parent = _facet((event.get("run") or {}).get("facets"), "parent")
        parent_id = (parent.get("run") or {}).get("runId")
        if parent_id:
            self.parent = str(parent_id)
        for side, into in (("inputs", self.inputs), ("outputs", self.outputs)):
            for raw in event.get(side) or []:
                if isinstance(raw, Mapping):
                    key = (str(raw.get("namespace", "")), str(raw.get("name", "")))
                    merged = dict(into.get(key, {}))
                    facets = {**(merged.get("facets") or {}), **(raw.get("facets") or {})}
                    into[key] = {**merged, **raw, "facets": facets}

    def build(self, label: Label) -> Run:
        inputs = tuple(_dataset(raw, label) for raw in self.inputs.values())
        outputs = tuple(
            Output(_dataset(raw, label), inputs, tuple(_column_edges(raw.get("facets"), label)))
            for raw in self.outputs.values()
        )
        return Run(
            self.run_id, self.job_namespace, self.job, self.state, self.parent, inputs, outputs
        )


def fold_runs(
    events: Iterable[Mapping[str, Any]], label: Label
) -> tuple[list[Run], str | None, str | None]:
    """The runs that read or wrote something, the application's job name, the Spark version."""
    folds: dict[str, _RunFold] = {}
    version = None
    ordered = sorted(
        (e for e in events if isinstance(e, Mapping) and (e.get("run") or {}).get("runId")),
        key=lambda e: str(e.get("eventTime") or ""),
    )
    for event in ordered:
        run_id = str(event["run"]["runId"])
        fold = folds.get(run_id)
        if fold is None:
            fold = folds[run_id] = _RunFold(event)
        fold.add(event)
        engine = _facet((event.get("run") or {}).get("facets"), "processing_engine")
        if engine.get("name") == "spark" and engine.get("version"):
            version = str(engine["version"])
    parents = {f.parent for f in folds.values() if f.parent}
    applications = [f.job for f in folds.values() if f.run_id in parents]
    runs = [f.build(label) for f in folds.values() if f.inputs or f.outputs]
    return runs, (applications[0] if applications else None), version


def lineage_from_events(
    events: Iterable[Mapping[str, Any]],
    root: str | os.PathLike[str] | Mapping[str, Any] | None = None,
) -> Lineage:
    """The lineage of ``events``; file paths under ``root`` are labelled relative to it."""
    roots = normalise_roots(root)
    runs, application, version = fold_runs(events, lambda ns, n: label_for(ns, n, roots))
    return Lineage(tuple(runs), application, version, tuple(sorted(roots.items())))
