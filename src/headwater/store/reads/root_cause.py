"""Root cause, read side: what happened in a time window to the nodes upstream of a
dataset (``GET /api/v2/datasets/{nodeId}/root-cause``).

The walk and the order are :mod:`headwater.graph.root_cause`'s. The walk goes
over :class:`WindowLineage`: the table lineage of the jobs' current versions, plus
every dataset a run in the window read or wrote. A failed run often writes
nothing, so its job's current version may list no outputs; the writes of its
earlier runs in the window still connect it to the dataset it feeds.

This module reads the findings of the walked nodes, each kind from the rows that
already hold it:

* drifts of the walked datasets from ``dataset_drifts`` and ``schema_contracts``
  (:mod:`headwater.store.reads.drift`), in one query;
* failed runs of the walked jobs: ``runs`` whose state is ``FAIL``, at the time of
  that terminal state, through ``ix_runs_job_id_created_at`` (a run's terminal
  state comes after its creation, so the window's end bounds the index range);
* quality failures of the walked datasets: every ``dataQualityAssertions`` facet a
  run (or dataset event) sent in the window with an assertion whose ``success`` is
  false (:mod:`headwater.store.reads.quality` reads them per dataset; a run going on
  at the window's end counts with what its events had sent before then).

Each kind is read up to :data:`PER_KIND` rows; the answer says when a kind was cut.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.graph.model import Direction, Edge, NodeId, NodeType
from headwater.store import tables as t
from headwater.store.reads.common import Page, aware, dataset_ids, job_ids, naive, split_node_key
from headwater.store.reads.drift import DriftFilter, drifts
from headwater.store.reads.quality import quality_facets
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.table_lineage import TableLineage
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["PER_KIND", "WindowLineage", "upstream_findings"]

#: A finding as :class:`headwater.graph.root_cause.Finding` takes it: kind (its value:
#: versionDrift, contractDrift, failedRun, qualityFailure), time, subject, key, via, detail.
Finding = tuple[str, datetime, str, str, str | None, dict[str, Any]]

#: The most findings of one kind read for one answer.
PER_KIND = 5_000
_r, _ri, _ro, _d, _j, _ns = t.runs, t.run_inputs, t.run_outputs, t.datasets, t.jobs, t.namespaces


class WindowLineage:
    """Upstream table edges: the jobs' current versions', and the reads and writes of
    the runs in [``since``, ``until``) (by the time a run first listed the dataset)."""

    def __init__(
        self, conn: sa.Connection, since: datetime, until: datetime, hidden: HiddenNodes
    ) -> None:
        self.conn = conn
        self.window = (naive(since), naive(until))
        self.hidden = hidden
        self.current = TableLineage(conn, None, hidden)

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        if direction is not Direction.UPSTREAM:
            raise ValueError("WindowLineage is walked upstream only")
        edges = set(self.current.edges_from(node_ids, direction))
        parsed = [NodeId.parse(n) for n in node_ids]
        datasets = dataset_ids(
            self.conn, [(n.namespace, n.name) for n in parsed if n.type is NodeType.DATASET]
        )
        jobs = job_ids(self.conn, [(n.namespace, n.name) for n in parsed if n.type is NodeType.JOB])
        start, end = self.window
        if datasets:
            writers = (
                sa.select(_ro.c.dataset_id, _ns.c.name, _j.c.name)
                .distinct()
                .select_from(
                    _ro.join(_r, _r.c.uuid == _ro.c.run_uuid)
                    .join(_j, _j.c.id == _r.c.job_id)
                    .join(_ns, _ns.c.id == _j.c.namespace_id)
                )
                .where(
                    _ro.c.dataset_id.in_(sorted(datasets.values())),
                    _ro.c.created_at >= start,
                    _ro.c.created_at < end,
                )
            )
            node_of = {i: f"dataset:{ns}:{name}" for (ns, name), i in datasets.items()}
            for dataset_id, job_ns, job_name in self.conn.execute(writers):
                edges.add(Edge(f"job:{job_ns}:{job_name}", node_of[dataset_id]))
        if jobs:
            reads = (
                sa.select(_r.c.job_id, _ns.c.name, _d.c.name)
                .distinct()
                .select_from(
                    _r.join(_ri, _ri.c.run_uuid == _r.c.uuid)
                    .join(_d, _d.c.id == _ri.c.dataset_id)
                    .join(_ns, _ns.c.id == _d.c.namespace_id)
                )
                .where(
                    _r.c.job_id.in_(sorted(jobs.values())),
                    _r.c.created_at < end,
                    _ri.c.created_at >= start,
                    _ri.c.created_at < end,
                )
            )
            node_of = {i: f"job:{ns}:{name}" for (ns, name), i in jobs.items()}
            for job_id, ds_ns, ds_name in self.conn.execute(reads):
                edges.add(Edge(f"dataset:{ds_ns}:{ds_name}", node_of[job_id]))
        return self.hidden.filter(sorted(edges, key=lambda e: (e.upstream, e.downstream)))


def upstream_findings(
    conn: sa.Connection,
    dataset_nodes: Sequence[str],
    job_nodes: Sequence[str],
    since: datetime | None,
    until: datetime | None,
    scope: NamespaceScope = EVERYTHING,
) -> tuple[list[Finding], bool]:
    """The findings about these datasets and jobs (node ids) in [``since``, ``until``),
    and whether a kind had more than :data:`PER_KIND` of them."""
    datasets = dataset_ids(conn, [split_node_key(d) for d in dataset_nodes])
    jobs = job_ids(conn, [split_node_key(j) for j in job_nodes])
    found: list[Finding] = []
    cut = False
    for read in (_drifts, _failed_runs):
        more, over = read(conn, datasets, jobs, since, until, scope)
        found += more
        cut |= over
    more, over = _quality_failures(conn, datasets, since, until, scope)
    return found + more, cut | over


def _drifts(
    conn: sa.Connection,
    datasets: dict[tuple[str, str], int],
    jobs: dict[tuple[str, str], int],
    since: datetime | None,
    until: datetime | None,
    scope: NamespaceScope,
) -> tuple[list[Finding], bool]:
    if not datasets:
        return [], False
    where = DriftFilter(since, until, scope=scope, dataset_ids=tuple(sorted(datasets.values())))
    rows, total = drifts(conn, where, Page(limit=PER_KIND))
    found = []
    for row in rows:
        contract = row["kind"] == "contract"
        detail = {
            "version": row["version"],
            "previousVersion": row["previousVersion"],
            "breaking": row["breaking"],
            "changes": row["changes"],
        }
        if contract:
            detail["consumerRun"] = row["consumer"]["run"]
        found.append(
            (
                "contractDrift" if contract else "versionDrift",
                row["changedAt"],
                row["datasetId"],
                row["version"],
                row["consumer"]["jobId"] if contract else None,
                detail,
            )
        )
    return found, total > len(rows)


def _failed_runs(
    conn: sa.Connection,
    datasets: dict[tuple[str, str], int],
    jobs: dict[tuple[str, str], int],
    since: datetime | None,
    until: datetime | None,
    scope: NamespaceScope,
) -> tuple[list[Finding], bool]:
    visible = {key: job_id for key, job_id in jobs.items() if scope.sees(key[0])}
    if not visible:
        return [], False
    node_of = {job_id: f"job:{ns}:{name}" for (ns, name), job_id in visible.items()}
    query = sa.select(
        _r.c.uuid, _r.c.job_id, _r.c.state_time, _r.c.started_at, _r.c.ended_at
    ).where(_r.c.job_id.in_(sorted(node_of)), _r.c.state == "FAIL")
    if since is not None:
        query = query.where(_r.c.state_time >= naive(since))
    if until is not None:
        query = query.where(_r.c.state_time < naive(until), _r.c.created_at < naive(until))
    rows = conn.execute(query.order_by(_r.c.state_time.desc()).limit(PER_KIND + 1)).all()
    found: list[Finding] = [
        (
            "failedRun",
            _utc(row.state_time),
            node_of[row.job_id],
            row.uuid,
            None,
            {
                "runId": row.uuid,
                "startedAt": aware(row.started_at),
                "endedAt": aware(row.ended_at),
            },
        )
        for row in rows[:PER_KIND]
    ]
    return found, len(rows) > PER_KIND


def _quality_failures(
    conn: sa.Connection,
    datasets: dict[tuple[str, str], int],
    since: datetime | None,
    until: datetime | None,
    scope: NamespaceScope,
) -> tuple[list[Finding], bool]:
    found: list[Finding] = []
    for (namespace, name), dataset_id in sorted(datasets.items()):
        node_id = f"dataset:{namespace}:{name}"
        groups = quality_facets(
            conn, dataset_id, node_id, ("dataQualityAssertions",), since, until, scope
        )
        for group in groups:
            failed = _failed(group["facets"].get("dataQualityAssertions"))
            if not failed:
                continue
            key = group["runId"] or group["version"] or _utc(group["time"]).isoformat()
            detail = {"runId": group["runId"], "job": group["job"], "failed": failed}
            found.append(("qualityFailure", _utc(group["time"]), node_id, key, None, detail))
            if len(found) > PER_KIND:
                return found[:PER_KIND], True
    return found, False


def _failed(facet: Any) -> list[dict[str, Any]]:
    """The assertions of a ``dataQualityAssertions`` payload whose ``success`` is false."""
    items: Sequence[Any] = facet.get("assertions", ()) if isinstance(facet, dict) else ()
    if not isinstance(items, list):
        return []
    return [
        {
            "assertion": item.get("assertion") or item.get("name"),
            "column": item.get("column"),
        }
        for item in items
        if isinstance(item, dict) and item.get("success") is False
    ]


def _utc(value: datetime) -> datetime:
    result = aware(value)
    assert result is not None
    return result
