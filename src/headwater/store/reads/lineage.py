"""Neighbour queries that feed :func:`headwater.graph.traverse.walk`.

Three sources, one per kind of graph, each answering ``edges_from(node_ids,
direction)`` for a whole frontier in a fixed number of queries:

- :class:`TableLineage` — ``dataset`` and ``job`` nodes. A job's edges are its
  *version's* inputs and outputs: the current version, or with ``as_of`` the
  version of its latest run created at or before that time.
- :class:`RunLineage` — ``run`` nodes and *versioned* dataset nodes
  (``dataset:ns:name#<version>``): a run's upstream is the versions it read, a
  version's upstream is the run that wrote it. Upstream of a run is therefore
  "which run produced what this run read".
- :class:`ColumnLineage` — ``datasetField`` nodes, edges from the ``column_lineage``
  table with the job they came through and their transformations.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.graph.model import Direction, Edge, NodeId, NodeType, Transformation
from headwater.store import current_io
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.queries import LATEST_RUN, latest_run_of_job
from headwater.store.reads.common import (
    AsOfSelect,
    chunks,
    dataset_ids,
    naive,
    named_in_namespace,
)
from headwater.store.reads.runs import run_input_versions
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["ColumnLineage", "RunLineage", "TableLineage", "job_version_column", "job_versions_at"]

_ds, _ns, _j, _jv, _r = t.datasets, t.namespaces, t.jobs, t.job_versions, t.runs


def _parse_all(node_ids: Collection[str]) -> list[NodeId]:
    return [NodeId.parse(node_id) for node_id in node_ids]


def job_version_column(until: bool) -> sa.ColumnElement[Any]:
    """A job's version uuid (correlated to ``jobs``): current, or of its latest run
    created at or before the bound parameter ``as_of``.

    As of a time, the version is a correlated ``LIMIT 1`` per job, which both databases
    answer by seeking ``ix_runs_job_id_created_at`` backwards from ``as_of`` (a window
    over every run of every asked job was most of an asOf walk at a million runs).
    """
    if not until:
        return _j.c.current_version_uuid
    # The same run the store picks a job's current version from, up to as_of.
    return latest_run_of_job(
        LATEST_RUN.c.job_version_uuid,
        LATEST_RUN.c.created_at <= sa.bindparam("as_of"),
        LATEST_RUN.c.job_version_uuid.is_not(None),
    )


def _job_versions_statement(until: bool) -> sa.Select[Any]:
    """(job name, version uuid) of the jobs ``names`` in ``namespace``: current, or of
    each job's latest run created at or before ``as_of``."""
    return (
        sa.select(_j.c.name, job_version_column(until)).where(named_in_namespace(_j))
    )


_JOB_VERSIONS = AsOfSelect(_job_versions_statement)


def job_versions_at(
    conn: sa.Connection, keys: Sequence[tuple[str, str]], as_of: datetime | None
) -> dict[tuple[str, str], str]:
    """The version uuid of each job (namespace, name): current, or current at ``as_of``."""
    return {
        (namespace, name): version
        for namespace, (name, version) in _JOB_VERSIONS.rows_by_name(conn, keys, as_of)
        if version is not None
    }


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


def _declared_side_statement() -> sa.Select[Any]:
    """(job name, dataset node id) of the datasets that JobEvents declare on the
    ``direction`` side of the jobs ``names`` in ``namespace`` (``job_declared_io``)."""
    io, ds_ns = t.job_declared_io, _ns.alias("ds_ns")
    dataset_id = sa.literal("dataset:") + ds_ns.c.name + sa.literal(":") + _ds.c.name
    return (
        sa.select(_j.c.name, dataset_id)
        .select_from(
            _j.join(io, sa.and_(io.c.job_id == _j.c.id,
                                io.c.direction == sa.bindparam("direction")))
            .join(_ds, _ds.c.id == io.c.dataset_id)
            .join(ds_ns, ds_ns.c.id == _ds.c.namespace_id)
        )
        .where(named_in_namespace(_j))
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
_DECLARED = ListSelect(_declared_side_statement())
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
        parsed = _parse_all(node_ids)
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
            return {
                key: inputs if upstream else outputs
                for key, (inputs, outputs) in self._job_io_at(jobs).items()
            }
        statement = _JOB_INPUTS if upstream else _JOB_OUTPUTS
        sides = {
            (namespace, name): list(side or ())
            for namespace, (name, side) in statement.rows_by_name(self.conn, jobs)
        }
        for key, datasets in self._declared(jobs, upstream).items():
            sides[key] = sorted(set(sides.get(key, ())) | set(datasets))
        return sides

    def _declared(
        self, jobs: list[tuple[str, str]], upstream: bool
    ) -> dict[tuple[str, str], list[str]]:
        """The datasets JobEvents declare on each job's side (``store.declared_io``):
        asked only of a store holding a declaration, checked once per walk."""
        if self._has_declarations is None:
            self._has_declarations = (
                self.conn.execute(sa.select(t.job_declarations.c.job_id).limit(1)).first()
                is not None
            )
        if not self._has_declarations:
            return {}
        direction = current_io.INPUT if upstream else current_io.OUTPUT
        found: dict[tuple[str, str], list[str]] = defaultdict(list)
        for namespace, (name, dataset) in _DECLARED.rows_by_name(
            self.conn, jobs, {"direction": direction}
        ):
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
            pairs = self._current_at(pairs, direction)
        edges = []
        for dataset_node, job_ns, job_name in sorted(pairs):
            job_node = f"job:{job_ns}:{job_name}"
            if upstream:
                edges.append(Edge(job_node, dataset_node))
            else:
                edges.append(Edge(dataset_node, job_node))
        return edges

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


class RunLineage:
    """Run-level lineage over runs and the dataset versions they read and wrote."""

    def __init__(self, conn: sa.Connection, hidden: HiddenNodes | None = None) -> None:
        self.conn = conn
        self.hidden = hidden or HiddenNodes(conn)

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        parsed = _parse_all(node_ids)
        runs = [n.name for n in parsed if n.type is NodeType.RUN]
        versions = [n.version for n in parsed if n.type is NodeType.DATASET and n.version]
        if direction is Direction.UPSTREAM:
            edges = self._run_inputs(runs) + self._version_producers(versions)
        else:
            edges = self._run_outputs(runs) + self._version_readers(versions)
        return self.hidden.cut_at_scope(edges)

    def _run_inputs(self, runs: list[str]) -> list[Edge]:
        edges = []
        for item in run_input_versions(self.conn, runs):
            node = f"dataset:{item.namespace}:{item.name}"
            if item.version is not None:
                node += f"#{item.version}"
            edges.append(Edge(node, f"run:{item.run_uuid}"))
        return edges

    def _run_outputs(self, runs: list[str]) -> list[Edge]:
        ro = t.run_outputs
        edges = []
        for batch in chunks(runs):
            query = (
                sa.select(ro.c.run_uuid, ro.c.dataset_version_uuid, _ns.c.name, _ds.c.name)
                .join(_ds, _ds.c.id == ro.c.dataset_id)
                .join(_ns, _ns.c.id == _ds.c.namespace_id)
                .where(ro.c.run_uuid.in_(batch))
            )
            for run_uuid, version, namespace, name in self.conn.execute(query):
                edges.append(Edge(f"run:{run_uuid}", f"dataset:{namespace}:{name}#{version}"))
        return edges

    def _versions(self, versions: list[str]) -> list[sa.Row[Any]]:
        dv = t.dataset_versions
        rows: list[sa.Row[Any]] = []
        for batch in chunks(versions):
            rows += self.conn.execute(
                sa.select(dv, _ns.c.name.label("namespace"), _ds.c.name.label("name"))
                .join(_ds, _ds.c.id == dv.c.dataset_id)
                .join(_ns, _ns.c.id == _ds.c.namespace_id)
                .where(dv.c.uuid.in_(batch))
            ).all()
        return rows

    def _version_producers(self, versions: list[str]) -> list[Edge]:
        return [
            Edge(f"run:{row.run_uuid}", f"dataset:{row.namespace}:{row.name}#{row.uuid}")
            for row in self._versions(versions)
            if row.run_uuid
        ]

    def _version_readers(self, versions: list[str]) -> list[Edge]:
        # A reader of version v read the dataset after v was written and no later than
        # the second-next version (one run writes one version per dataset, so at most
        # one of the next two can be the reader's own output); each candidate is then
        # checked with the same rule the run record uses.
        dv, ri = t.dataset_versions, t.run_inputs
        edges = []
        for row in self._versions(versions):
            later = (
                self.conn.execute(
                    sa.select(dv.c.updated_at)
                    .where(dv.c.dataset_id == row.dataset_id, dv.c.updated_at > row.updated_at)
                    .order_by(dv.c.updated_at)
                    .limit(2)
                )
                .scalars()
                .all()
            )
            query = sa.select(ri.c.run_uuid).where(
                ri.c.dataset_id == row.dataset_id, ri.c.created_at > row.updated_at
            )
            if len(later) == 2:
                query = query.where(ri.c.created_at <= later[1])
            candidates = self.conn.execute(query).scalars().all()
            node = f"dataset:{row.namespace}:{row.name}#{row.uuid}"
            for item in run_input_versions(self.conn, candidates):
                if item.dataset_id == row.dataset_id and item.version == row.uuid:
                    edges.append(Edge(node, f"run:{item.run_uuid}"))
        return edges


class ColumnLineage:
    """Column edges between ``datasetField`` nodes, with their job and transformations.

    With ``dataset_level``, a downstream walk also meets the ``columnLineage`` facet's
    dataset-level entries, as edges from the field to the target's ``dataset`` node:
    such an entry affects every field of its target (the impact walk fans it out).
    """

    def __init__(
        self,
        conn: sa.Connection,
        as_of: datetime | None = None,
        hidden: HiddenNodes | None = None,
        dataset_level: bool = False,
    ) -> None:
        self.conn = conn
        self.as_of = as_of
        self.hidden = hidden or HiddenNodes(conn)
        self.dataset_level = dataset_level

    def fields_of(self, dataset_node_ids: Collection[str]) -> list[str]:
        keys = [(n.namespace, n.name) for n in _parse_all(dataset_node_ids)]
        ids = dataset_ids(self.conn, keys)
        key_of = {i: k for k, i in ids.items()}
        result = []
        for batch in chunks(list(key_of)):
            for dataset_id, name in self.conn.execute(
                sa.select(t.fields.c.dataset_id, t.fields.c.name).where(
                    t.fields.c.dataset_id.in_(batch)
                )
            ):
                namespace, dataset = key_of[dataset_id]
                result.append(f"datasetField:{namespace}:{dataset}:{name}")
        return result

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        fields = [n for n in _parse_all(node_ids) if n.type is NodeType.DATASET_FIELD]
        upstream = direction is Direction.UPSTREAM
        dataset_level = self.dataset_level and not upstream
        statement = _COLUMN_STATEMENTS[(upstream, self.as_of is not None, dataset_level)]
        params = {} if self.as_of is None else {"as_of": naive(self.as_of)}
        by_namespace: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for f in fields:
            by_namespace[f.namespace].add((f.name, f.field))
        grouped: dict[tuple[str, str, str | None], list[Transformation]] = defaultdict(list)
        for namespace, wanted in by_namespace.items():
            for batch in chunks(sorted(wanted)):
                values = {
                    **params,
                    "namespace": namespace,
                    "names": sorted({name for name, _ in batch}),
                    "fields": sorted({field for _, field in batch}),
                    "pairs": batch,
                }
                for (
                    near_name,
                    near_field,
                    far_field,
                    far_name,
                    far_namespace,
                    kind,
                    subtype,
                    description,
                    masking,
                    job_name,
                    job_namespace,
                ) in statement.rows(self.conn, values):
                    near = f"datasetField:{namespace}:{near_name}:{near_field}"
                    other = (
                        f"datasetField:{far_namespace}:{far_name}:{far_field}"
                        if far_field
                        else f"dataset:{far_namespace}:{far_name}"
                    )
                    via = f"job:{job_namespace}:{job_name}" if job_name else None
                    up, down = (other, near) if upstream else (near, other)
                    grouped[(up, down, via)].append(
                        _transformation(kind, subtype, description, masking)
                    )
        return self.hidden.filter(
            [
                Edge(up, down, via, tuple(trs) if len(trs) == 1 else _in_order(trs))
                for (up, down, via), trs in grouped.items()
            ]
        )


@functools.lru_cache(maxsize=4_096)
def _transformation(
    kind: str | None, subtype: str | None, description: str | None, masking: bool | None
) -> Transformation:
    # A large walk meets the same few (type, subtype) pairs on thousands of edges.
    return Transformation(kind or "", subtype or None, description, bool(masking))


def _in_order(trs: list[Transformation]) -> tuple[Transformation, ...]:
    return tuple(sorted(trs, key=lambda tr: (tr.type, tr.subtype or "")))


def _column_statement(upstream: bool, until: bool, dataset_level: bool) -> sa.Select[Any]:
    """Column edges next to fields ``names`` x ``fields`` of datasets in ``namespace``;
    with ``dataset_level`` (downstream only) also the dataset-level entries."""
    cl = t.column_lineage
    near_ds, near_field, far_ds, far_field = (
        (cl.c.target_dataset_id, cl.c.target_field, cl.c.source_dataset_id, cl.c.source_field)
        if upstream
        else (cl.c.source_dataset_id, cl.c.source_field, cl.c.target_dataset_id, cl.c.target_field)
    )
    near = _ds.alias("near")
    far, far_ns = _ds.alias("far"), _ns.alias("far_ns")
    job_ns = _ns.alias("job_ns")
    query = (
        sa.select(
            near.c.name.label("near_name"),
            near_field.label("near_field"),
            far_field.label("far_field"),
            far.c.name.label("far_name"),
            far_ns.c.name.label("far_namespace"),
            cl.c.transformation_type,
            cl.c.transformation_subtype,
            cl.c.description,
            cl.c.masking,
            _j.c.name.label("job_name"),
            job_ns.c.name.label("job_namespace"),
        )
        .select_from(cl)
        .join(near, near.c.id == near_ds)
        .join(far, far.c.id == far_ds)
        .join(far_ns, far_ns.c.id == far.c.namespace_id)
        .outerjoin(_r, _r.c.uuid == cl.c.run_uuid)
        .outerjoin(_j, _j.c.id == _r.c.job_id)
        .outerjoin(job_ns, job_ns.c.id == _j.c.namespace_id)
        .where(
            named_in_namespace(near),
            near_field.in_(sa.bindparam("fields", expanding=True)),
            # The two lists find the edges through an index; their cross product is
            # then cut to the asked pairs before anything else is joined (most of
            # the cross product is not asked for: 3 rows in 4 at full scale).
            sa.tuple_(near.c.name, near_field).in_(sa.bindparam("pairs", expanding=True)),
        )
    )
    if not dataset_level:
        # Dataset-level entries (no target field) are not column edges.
        query = query.where(cl.c.target_field != "")
    if until:
        query = query.where(cl.c.created_at <= sa.bindparam("as_of"))
    return query


# Built once: (upstream?, as of a time?, with dataset-level entries?) -> statement.
_COLUMN_STATEMENTS = {
    (upstream, until, dataset_level): ListSelect(
        _column_statement(upstream, until, dataset_level)
    )
    for upstream in (True, False)
    for until in (True, False)
    for dataset_level in ((False,) if upstream else (False, True))
}
