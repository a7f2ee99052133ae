"""Dataset and job edges for :func:`headwater.graph.traverse.walk`, current or as of
a time.

A job's edges are its *version's* inputs and outputs: the current version, or with
``as_of`` the version of its latest run created at or before that time (see
:mod:`~headwater.store.reads.job_version_at`). A dataset's edges are the jobs that
write or read it: from ``job_current_io``, or as of a time through the run outputs and
run inputs up to then, kept where the job's version at that time still has it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.graph.model import Direction, Edge, NodeId, NodeType
from headwater.store import current_io
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.reads.common import chunks, naive, named_in_namespace
from headwater.store.reads.declarations import declared_io_in_force
from headwater.store.reads.job_version_at import job_versions_at
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["TableLineage"]

_ds, _ns, _j, _jv, _r = t.datasets, t.namespaces, t.jobs, t.job_versions, t.runs


def _job_side_statement(side: sa.Column[Any]) -> sa.Select[Any]:
    """(job name, ``side``) of the current versions of the jobs ``names`` in
    ``namespace``; ``side`` is ``job_versions.inputs`` or ``.outputs`` (a walk goes one
    way, so only that list is read and decoded)."""
    return (
        sa.select(_j.c.name, side)
        .join(_jv, _jv.c.uuid == _j.c.current_version_uuid)
        .where(named_in_namespace(_j))
    )


def _dataset_jobs_until_statement(link: sa.Table) -> sa.Select[Any]:
    """(dataset name, job namespace, job name) of jobs with a run created at or before
    ``as_of`` that wrote (``link`` = run_outputs) or read (run_inputs) the datasets
    ``names`` in ``namespace``; ``TableLineage._current_at`` then keeps the jobs whose
    version at that time still has the dataset.

    The runs are reduced to distinct (dataset, job) in a subquery before jobs are
    joined, so each job is looked up once however many runs it has.
    """
    per_run = (
        sa.select(_ds.c.name, _r.c.job_id)
        .distinct()
        .join(link, link.c.dataset_id == _ds.c.id)
        .join(_r, _r.c.uuid == link.c.run_uuid)
        .where(named_in_namespace(_ds), _r.c.created_at <= sa.bindparam("as_of"))
    )
    runs = per_run.subquery("runs_of_datasets")
    job_ns = _ns.alias("job_ns")
    return (
        sa.select(runs.c.name, job_ns.c.name, _j.c.name)
        .select_from(runs)
        .join(_j, _j.c.id == runs.c.job_id)
        .join(job_ns, job_ns.c.id == _j.c.namespace_id)
    )


def _declared_side_statement(until: bool) -> sa.Select[Any]:
    """(job name, dataset node id) of the datasets that JobEvents declare on the
    ``direction`` side of the jobs ``names`` in ``namespace``: the latest declaration
    (``job_declared_io``), or with ``until`` the one in force at ``as_of``."""
    io = t.job_declared_io if not until else declared_io_in_force()
    ds_ns = _ns.alias("ds_ns")
    dataset_id = sa.literal("dataset:") + ds_ns.c.name + sa.literal(":") + _ds.c.name
    joined = (
        _j.join(io, sa.and_(io.c.job_id == _j.c.id, io.c.direction == sa.bindparam("direction")))
        .join(_ds, _ds.c.id == io.c.dataset_id)
        .join(ds_ns, ds_ns.c.id == _ds.c.namespace_id)
    )
    return sa.select(_j.c.name, dataset_id).select_from(joined).where(named_in_namespace(_j))


def _declaring_jobs_until_statement(direction: str) -> sa.Select[Any]:
    """(dataset name, job namespace, job name) of jobs whose declaration in force at
    ``as_of`` has the datasets ``names`` in ``namespace`` as ``direction``."""
    io, job_ns = declared_io_in_force(), _ns.alias("job_ns")
    return (
        sa.select(_ds.c.name, job_ns.c.name, _j.c.name)
        .join(io, sa.and_(io.c.dataset_id == _ds.c.id, io.c.direction == direction))
        .join(_j, _j.c.id == io.c.job_id)
        .join(job_ns, job_ns.c.id == _j.c.namespace_id)
        .where(named_in_namespace(_ds))
    )


def _current_jobs_statement(direction: str) -> sa.Select[Any]:
    """(dataset name, job namespace, job name) of jobs whose current version has the
    datasets ``names`` in ``namespace`` as ``direction`` (``job_current_io``)."""
    io, job_ns = t.job_current_io, _ns.alias("job_ns")
    return (
        sa.select(_ds.c.name, job_ns.c.name, _j.c.name)
        .join(io, sa.and_(io.c.dataset_id == _ds.c.id, io.c.direction == direction))
        .join(_j, _j.c.id == io.c.job_id)
        .join(job_ns, job_ns.c.id == _j.c.namespace_id)
        .where(named_in_namespace(_ds))
    )


# Built once (see common._ids_statement). Current producers and readers of a dataset
# come from job_current_io; as of a time, through run outputs and run inputs up to then.
_JOB_INPUTS = ListSelect(_job_side_statement(_jv.c.inputs))
_JOB_OUTPUTS = ListSelect(_job_side_statement(_jv.c.outputs))
_DECLARED = ListSelect(_declared_side_statement(until=False))
_DECLARED_UNTIL = ListSelect(_declared_side_statement(until=True))
_DECLARED_PRODUCERS_UNTIL = ListSelect(_declaring_jobs_until_statement(current_io.OUTPUT))
_DECLARED_READERS_UNTIL = ListSelect(_declaring_jobs_until_statement(current_io.INPUT))
_PRODUCERS = ListSelect(_current_jobs_statement(current_io.OUTPUT))
_READERS = ListSelect(_current_jobs_statement(current_io.INPUT))
_PRODUCERS_UNTIL = ListSelect(_dataset_jobs_until_statement(t.run_outputs))
_READERS_UNTIL = ListSelect(_dataset_jobs_until_statement(t.run_inputs))


class TableLineage:
    """Dataset/job edges, current or as of a time.

    Per depth level: one query for the jobs of the frontier and one for its
    datasets (per namespace).
    """

    def __init__(
        self, conn: sa.Connection, as_of: datetime | None = None, hidden: HiddenNodes | None = None
    ) -> None:
        self.conn = conn
        self.as_of = as_of
        self.hidden = hidden or HiddenNodes(conn)
        # With as_of: (job namespace, name) -> that version's (inputs, outputs).
        self._io_at: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        # Whether any job declares lineage (JobEvents); looked up on first need.
        self._has_declarations: bool | None = None

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        parsed = [NodeId.parse(node_id) for node_id in node_ids]
        jobs = [(n.namespace, n.name) for n in parsed if n.type is NodeType.JOB]
        datasets = [(n.namespace, n.name) for n in parsed if n.type is NodeType.DATASET]
        edges = self._job_edges(jobs, direction) + self._dataset_edges(datasets, direction)
        return self.hidden.filter(edges)

    def _io(self, versions: Collection[str]) -> dict[str, tuple[list[str], list[str]]]:
        result: dict[str, tuple[list[str], list[str]]] = {}
        for batch in chunks(sorted(set(versions))):
            for uuid, inputs, outputs in self.conn.execute(
                sa.select(_jv.c.uuid, _jv.c.inputs, _jv.c.outputs).where(_jv.c.uuid.in_(batch))
            ):
                result[uuid] = (list(inputs or ()), list(outputs or ()))
        return result

    def _job_io_at(
        self, jobs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[list[str], list[str]]]:
        """(inputs, outputs) of each job's version as of ``self.as_of``."""
        assert self.as_of is not None
        # A job met as a dataset's producer is met again as a node one level on:
        # its version as of the time is looked up once per walk.
        asked = [key for key in set(jobs) if key not in self._io_at]
        versions = job_versions_at(self.conn, asked, self.as_of)
        io = self._io(versions.values())
        for key in asked:
            version = versions.get(key)
            self._io_at[key] = io.get(version, ([], [])) if version else ([], [])
        return {key: self._io_at[key] for key in jobs}

    def _job_side(
        self, jobs: list[tuple[str, str]], direction: Direction
    ) -> dict[tuple[str, str], list[str]]:
        """The datasets on each job's ``direction`` side: its version's inputs
        (upstream) or outputs (downstream)."""
        upstream = direction is Direction.UPSTREAM
        if self.as_of is not None:
            sides = {
                key: inputs if upstream else outputs
                for key, (inputs, outputs) in self._job_io_at(jobs).items()
            }
        else:
            statement = _JOB_INPUTS if upstream else _JOB_OUTPUTS
            sides = {
                (namespace, name): list(side or ())
                for namespace, (name, side) in statement.rows_by_name(self.conn, jobs)
            }
        for key, datasets in self._declared(jobs, upstream).items():
            sides[key] = sorted(set(sides.get(key, ())) | set(datasets))
        return sides

    def _any_declaration(self) -> bool:
        """Whether the store holds any JobEvent declaration, looked up once per walk."""
        if self._has_declarations is None:
            self._has_declarations = (
                self.conn.execute(sa.select(t.job_declarations.c.job_id).limit(1)).first()
                is not None
            )
        return self._has_declarations

    def _declared(
        self, jobs: list[tuple[str, str]], upstream: bool
    ) -> dict[tuple[str, str], list[str]]:
        """The datasets JobEvents declare on each job's side (``store.declared_io``):
        asked only of a store holding a declaration, checked once per walk. With
        ``as_of``, the declaration in force then (``reads.declarations``)."""
        if not self._any_declaration():
            return {}
        direction = current_io.INPUT if upstream else current_io.OUTPUT
        statement, params = _DECLARED, {"direction": direction}
        if self.as_of is not None:
            statement, params = _DECLARED_UNTIL, {**params, "as_of": naive(self.as_of)}
        found: dict[tuple[str, str], list[str]] = defaultdict(list)
        for namespace, (name, dataset) in statement.rows_by_name(self.conn, jobs, params):
            found[(namespace, name)].append(dataset)
        return found

    def _job_edges(self, jobs: list[tuple[str, str]], direction: Direction) -> list[Edge]:
        if not jobs:
            return []
        edges: list[Edge] = []
        upstream = direction is Direction.UPSTREAM
        for (namespace, name), datasets in self._job_side(jobs, direction).items():
            job_node = f"job:{namespace}:{name}"
            if upstream:
                edges += [Edge(dataset, job_node) for dataset in datasets]
            else:
                edges += [Edge(job_node, dataset) for dataset in datasets]
        return edges

    def _dataset_edges(self, datasets: list[tuple[str, str]], direction: Direction) -> list[Edge]:
        if not datasets:
            return []
        upstream = direction is Direction.UPSTREAM
        if self.as_of is None:
            statement, params = (_PRODUCERS if upstream else _READERS), {}
        else:
            statement = _PRODUCERS_UNTIL if upstream else _READERS_UNTIL
            params = {"as_of": naive(self.as_of)}
        # (dataset node id, job namespace, job name)
        pairs: set[tuple[str, str, str]] = {
            (f"dataset:{namespace}:{dataset}", job_ns, job_name)
            for namespace, (dataset, job_ns, job_name) in statement.rows_by_name(
                self.conn, datasets, params
            )
        }
        if self.as_of is not None:
            pairs = self._current_at(pairs, direction) | self._declaring_at(datasets, upstream)
        edges = []
        for dataset_node, job_ns, job_name in sorted(pairs):
            job_node = f"job:{job_ns}:{job_name}"
            if upstream:
                edges.append(Edge(job_node, dataset_node))
            else:
                edges.append(Edge(dataset_node, job_node))
        return edges

    def _declaring_at(
        self, datasets: list[tuple[str, str]], upstream: bool
    ) -> set[tuple[str, str, str]]:
        """(dataset node id, job namespace, job name) of the jobs whose declaration made
        by ``as_of`` writes (``upstream``) or reads the ``datasets``."""
        if not self._any_declaration():
            return set()
        statement = _DECLARED_PRODUCERS_UNTIL if upstream else _DECLARED_READERS_UNTIL
        return {
            (f"dataset:{namespace}:{dataset}", job_ns, job_name)
            for namespace, (dataset, job_ns, job_name) in statement.rows_by_name(
                self.conn, datasets, {"as_of": naive(self.as_of)}
            )
        }

    def _current_at(
        self, pairs: set[tuple[str, str, str]], direction: Direction
    ) -> set[tuple[str, str, str]]:
        """Keep (dataset, job) pairs that the job's version at ``as_of`` still has."""
        io = self._job_io_at([(ns, name) for _, ns, name in pairs])
        kept = set()
        for dataset_node, job_ns, job_name in pairs:
            inputs, outputs = io.get((job_ns, job_name), ([], []))
            members = outputs if direction is Direction.UPSTREAM else inputs
            if dataset_node in members:
                kept.add((dataset_node, job_ns, job_name))
        return kept
