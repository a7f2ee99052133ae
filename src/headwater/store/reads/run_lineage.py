"""Run-level edges for :func:`headwater.graph.traverse.walk`: ``run`` nodes and
*versioned* dataset nodes (``dataset:ns:name#<version>``).

A run's upstream is the versions it read, a version's upstream is the run that wrote
it; upstream of a run is therefore "which run produced what this run read".
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import sqlalchemy as sa

from headwater.graph.model import Direction, Edge, NodeId, NodeType
from headwater.store import tables as t
from headwater.store.reads.common import chunks
from headwater.store.reads.runs import run_input_versions
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["RunLineage"]

_ds, _ns = t.datasets, t.namespaces


class RunLineage:
    """Run-level lineage over runs and the dataset versions they read and wrote."""

    def __init__(self, conn: sa.Connection, hidden: HiddenNodes | None = None) -> None:
        self.conn = conn
        self.hidden = hidden or HiddenNodes(conn)

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        parsed = [NodeId.parse(node_id) for node_id in node_ids]
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
