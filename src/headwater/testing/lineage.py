"""A captured job's lineage as small frozen objects, and questions asked of it.

:func:`~headwater.testing.events.lineage_from_events` folds OpenLineage run
events (the agent's, or any producer's) into runs, each with the datasets it
read and the outputs it wrote; an output carries its schema and its column
edges. The query methods answer in
the words of a test::

    lineage.output("gold.revenue_daily").column("total_revenue").comes_from(
        "silver.orders.total", via="AGGREGATION")

A dataset is named by its full name, by its path relative to the capture's
root (``lake/gold/revenue_daily``), by a catalog table name from its
``symlinks`` facet (``gold.customer_ltv``), or by the last segments of its path
joined with dots (``gold.revenue_daily``, ``revenue_daily``). A question that
finds nothing raises :class:`LineageAssertionError` naming the nearest
candidates, so a failing test says what is there instead.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Column",
    "ColumnEdge",
    "Dataset",
    "Field",
    "Lineage",
    "LineageAssertionError",
    "Output",
    "Roots",
    "Run",
    "label_for",
    "normalise_roots",
]

#: Where relative dataset labels start: ``{prefix: directory}``; ``""`` is the main root.
Roots = Mapping[str, str]


class LineageAssertionError(AssertionError):
    """A lineage question found nothing; the message names the nearest candidates."""


def normalise_roots(root: str | os.PathLike[str] | Mapping[str, Any] | None) -> dict[str, str]:
    """``{prefix: absolute directory}`` from one directory or a mapping of them."""
    if root is None:
        return {}
    if isinstance(root, Mapping):
        items = [(str(prefix), value) for prefix, value in root.items()]
    else:
        items = [("", root)]
    return {prefix: os.path.realpath(os.fspath(value)) for prefix, value in items}


def label_for(namespace: str, name: str, roots: Roots) -> str:
    """A dataset's name in snapshots and messages: relative to a root when under one."""
    if namespace != "file" or not name.startswith("/"):
        return f"{namespace}:{name}" if namespace != "file" else name
    real = os.path.realpath(name)
    # The longest root wins, so a warehouse root inside a data root labels its tables.
    for prefix, root in sorted(roots.items(), key=lambda item: -len(item[1])):
        for path in (name, real):
            if path == root or path.startswith(root.rstrip("/") + "/"):
                rest = path[len(root) :].lstrip("/")
                return "/".join(part for part in (prefix, rest) if part) or "."
    return name


@dataclass(frozen=True)
class Field:
    """One column of a dataset's schema."""

    name: str
    type: str


@dataclass(frozen=True)
class Dataset:
    """A dataset as a run saw it: identity, display label, catalog names, schema."""

    namespace: str
    name: str
    label: str
    tables: tuple[str, ...] = ()
    schema: tuple[Field, ...] = ()

    def aliases(self) -> tuple[str, ...]:
        """Every exact name a test may use for this dataset."""
        return (self.label, self.name, f"{self.namespace}:{self.name}", *self.tables)

    def field(self, name: str) -> Field | None:
        return next((f for f in self.schema if f.name == name), None)


@dataclass(frozen=True)
class ColumnEdge:
    """``source.field`` feeds ``target`` of an output (``target`` None: the whole dataset)."""

    target: str | None
    source: str  # the source dataset's label
    source_field: str
    type: str
    subtype: str | None
    masking: bool = False

    @property
    def via(self) -> str:
        """``TYPE/SUBTYPE`` (``TYPE`` alone when the producer named no subtype)."""
        return f"{self.type}/{self.subtype}" if self.subtype else self.type

    def describe(self) -> str:
        """``source.field TYPE/SUBTYPE`` (``masked`` when the transformation masks)."""
        text = f"{self.source}.{self.source_field} {self.via}"
        return text + " masked" if self.masking else text

    def is_via(self, via: str | None) -> bool:
        if via is None:
            return True
        wanted = via.upper()
        return wanted in (self.type.upper(), (self.subtype or "").upper(), self.via.upper())


def _nearest(wanted: str, candidates: Iterable[str]) -> str:
    options = sorted(set(candidates))
    close = difflib.get_close_matches(wanted, options, n=3, cutoff=0.3)
    listed = ", ".join(options[:20]) + (
        f", ... ({len(options)} in all)" if len(options) > 20 else ""
    )
    text = f"\n  nearest: {', '.join(close)}" if close else ""
    return text + f"\n  present: {listed or '(none)'}"


def _resolve(ref: str, datasets: Iterable[Dataset], what: str) -> list[Dataset]:
    """The datasets ``ref`` names (exact alias first, then dotted path suffix); raises if none."""
    pool = list({(d.namespace, d.name): d for d in datasets}.values())
    exact = [d for d in pool if ref in d.aliases()]
    if exact:
        return exact
    parts = ref.split(".")
    suffix = [
        d
        for d in pool
        if d.name.rstrip("/").split("/")[-len(parts) :] == parts
        or d.label.split("/")[-len(parts) :] == parts
    ]
    if suffix:
        return suffix
    raise LineageAssertionError(f"no {what} {ref!r}" + _nearest(ref, (d.label for d in pool)))


@dataclass(frozen=True)
class Column:
    """One column of an output, with the edges that feed it."""

    output: Output
    name: str
    type: str | None
    edges: tuple[ColumnEdge, ...]

    @property
    def sources(self) -> tuple[str, ...]:
        """``dataset.field`` of every direct source, sorted."""
        return tuple(sorted({f"{e.source}.{e.source_field}" for e in self.edges}))

    def _split(self, source: str) -> tuple[list[Dataset], str]:
        dataset_ref, _, field = source.rpartition(".")
        if not dataset_ref:
            raise LineageAssertionError(f"name the source as DATASET.FIELD, not {source!r}")
        datasets = [d for d in self.output.inputs] or [
            Dataset("file", e.source, e.source) for e in self.edges
        ]
        return _resolve(dataset_ref, datasets, f"input of {self.output.dataset.label}"), field

    def comes_from(self, source: str, via: str | None = None) -> bool:
        """True if ``source`` (``DATASET.FIELD``) feeds this column, through ``via`` when
        given (a type, ``DIRECT``/``INDIRECT``, or a subtype such as ``AGGREGATION``)."""
        datasets, field = self._split(source)
        labels = {d.label for d in datasets}
        found = [e for e in self.edges if e.source in labels and e.source_field == field]
        if any(e.is_via(via) for e in found):
            return True
        how = f" via {via}" if via else ""
        if found:
            message = (
                f"column {self.name!r} of {self.output.dataset.label} comes from "
                f"{source} only via {', '.join(sorted({e.via for e in found}))}, not{how}"
            )
        else:
            message = (
                f"column {self.name!r} of {self.output.dataset.label} does not come from "
                f"{source}{how}"
            )
        fed_by = "\n    ".join(sorted(e.describe() for e in self.edges)) or "(nothing)"
        wanted = f"{next(iter(labels))}.{field}"
        raise LineageAssertionError(
            message + f"\n  it comes from:\n    {fed_by}" + _nearest(wanted, self.sources)
        )

    def does_not_come_from(self, source: str) -> bool:
        """True if no edge from ``source`` (``DATASET.FIELD``) feeds this column."""
        datasets, field = self._split(source)
        labels = {d.label for d in datasets}
        found = [e for e in self.edges if e.source in labels and e.source_field == field]
        if found:
            edges = ", ".join(e.describe() for e in found)
            raise LineageAssertionError(
                f"column {self.name!r} of {self.output.dataset.label} comes from {edges}"
            )
        return True


@dataclass(frozen=True)
class Output:
    """A dataset a run wrote: its schema, the datasets the run read, and the column edges."""

    dataset: Dataset
    inputs: tuple[Dataset, ...]
    edges: tuple[ColumnEdge, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        """The output's column names: its schema's, else those its edges name."""
        if self.dataset.schema:
            return tuple(f.name for f in self.dataset.schema)
        return tuple(sorted({e.target for e in self.edges if e.target is not None}))

    @property
    def dataset_edges(self) -> tuple[ColumnEdge, ...]:
        """Edges into the whole dataset (filters, joins, groupings): ``target`` is None."""
        return tuple(e for e in self.edges if e.target is None)

    def column(self, name: str) -> Column:
        """The column ``name``; raises naming the nearest columns if there is none."""
        if name not in self.columns:
            raise LineageAssertionError(
                f"no column {name!r} in {self.dataset.label}" + _nearest(name, self.columns)
            )
        field = self.dataset.field(name)
        edges = tuple(e for e in self.edges if e.target == name)
        return Column(self, name, field.type if field else None, edges)

    def reads(self, ref: str) -> bool:
        """True if the run writing this output read ``ref``."""
        _resolve(ref, self.inputs, f"input of {self.dataset.label}")
        return True


@dataclass(frozen=True)
class Run:
    """One run (a Spark action): its job, the datasets it read and the outputs it wrote."""

    run_id: str
    job_namespace: str
    job: str
    state: str
    parent_run_id: str | None
    inputs: tuple[Dataset, ...]
    outputs: tuple[Output, ...]


@dataclass(frozen=True)
class Lineage:
    """What one captured job read and wrote: its runs, in the order they started."""

    runs: tuple[Run, ...]
    application: str | None = None
    spark_version: str | None = None
    roots: tuple[tuple[str, str], ...] = ()

    @property
    def inputs(self) -> tuple[Dataset, ...]:
        """Every dataset any run read (first sighting of each), in run order."""
        seen: dict[tuple[str, str], Dataset] = {}
        for run in self.runs:
            for dataset in run.inputs:
                seen.setdefault((dataset.namespace, dataset.name), dataset)
        return tuple(seen.values())

    @property
    def outputs(self) -> tuple[Output, ...]:
        """Every output of every run, in run order."""
        return tuple(output for run in self.runs for output in run.outputs)

    def output(self, ref: str) -> Output:
        """The output ``ref`` names; several runs writing it give one merged output."""
        targets = {
            (d.namespace, d.name)
            for d in _resolve(ref, (o.dataset for o in self.outputs), "output")
        }
        if len(targets) > 1:
            names = ", ".join(sorted(f"{ns}:{n}" for ns, n in targets))
            raise LineageAssertionError(f"output {ref!r} is ambiguous: {names}")
        matching = [o for o in self.outputs if (o.dataset.namespace, o.dataset.name) in targets]
        if len(matching) == 1:
            return matching[0]
        inputs = {(d.namespace, d.name): d for o in matching for d in o.inputs}
        edges = dict.fromkeys(e for o in matching for e in o.edges)
        return Output(matching[-1].dataset, tuple(inputs.values()), tuple(edges))

    def input(self, ref: str) -> Dataset:
        """The input dataset ``ref`` names."""
        found = _resolve(ref, self.inputs, "input")
        if len(found) > 1:
            names = ", ".join(sorted(d.label for d in found))
            raise LineageAssertionError(f"input {ref!r} is ambiguous: {names}")
        return found[0]

    def reads(self, ref: str) -> bool:
        """True if some run read ``ref``; raises naming the nearest inputs otherwise."""
        self.input(ref)
        return True

    def writes(self, ref: str) -> bool:
        """True if some run wrote ``ref``; raises naming the nearest outputs otherwise."""
        self.output(ref)
        return True

    def run(self, job: str) -> Run:
        """The run of the job named ``job`` (or ending in ``.job``)."""
        found = [r for r in self.runs if r.job == job or r.job.endswith("." + job)]
        if len(found) != 1:
            what = "ambiguous" if found else "no run of"
            raise LineageAssertionError(
                f"{what} job {job!r}" + _nearest(job, (r.job for r in self.runs))
            )
        return found[0]

    def root_path(self) -> Path | None:
        """The main root, if one was given."""
        main = dict(self.roots).get("")
        return Path(main) if main else None
