"""Soft deletes, read side: which namespaces, datasets and jobs are hidden.

A row is hidden while ``deleted_at`` is set and not older than ``updated_at`` (its
latest event time): :func:`headwater.store.admin.hide_dataset` and friends set
``deleted_at``, and an event about the object with a later time shows it again
(Marquez "undeletes" on the next event). Hidden objects are left out of lists,
search and lineage walks, and are 404 to single-object reads.

:class:`HiddenNodes` also hides what a :class:`~headwater.store.reads.scope.NamespaceScope`
leaves out, so a walk for a namespace-limited token stops at its boundary.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

import sqlalchemy as sa

from headwater.graph.model import Edge, NodeId, NodeType
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from headwater.store.reads.common import chunks, named_in_namespace
from headwater.store.reads.scope import EVERYTHING, NamespaceScope

__all__ = ["HiddenNodes", "hidden", "run_namespaces", "visible"]


def visible(table: sa.Table | sa.FromClause) -> sa.ColumnElement[bool]:
    """SQL: the row of ``table`` (namespaces, datasets or jobs) is not soft-deleted."""
    return sa.or_(table.c.deleted_at.is_(None), table.c.updated_at > table.c.deleted_at)


def hidden(table: sa.Table | sa.FromClause) -> sa.ColumnElement[bool]:
    """SQL: the row of ``table`` is soft-deleted (the negation of :func:`visible`)."""
    return sa.and_(table.c.deleted_at.is_not(None), table.c.updated_at <= table.c.deleted_at)


def _hidden_statement(table: sa.Table) -> ListSelect:
    return ListSelect(sa.select(table.c.name).where(named_in_namespace(table), hidden(table)))


# Built once (see reads.common._ids_statement).
_HIDDEN = {NodeType.DATASET: _hidden_statement(t.datasets), NodeType.JOB: _hidden_statement(t.jobs)}
_KINDS = (NodeType.DATASET, NodeType.JOB)
# One round trip for both indexed probes (a walk asks it once): each a LIMIT 1
# scalar subquery, which SQLite answers from the deleted_at index (an EXISTS made it
# scan the whole table: 27 ms at 100k datasets).
_ANY_DELETED = sa.select(
    *(
        sa.select(table.c.id)
        .where(table.c.deleted_at.is_not(None))
        .limit(1)
        .scalar_subquery()
        .label(kind.value)
        for kind, table in zip(_KINDS, (t.datasets, t.jobs), strict=True)
    )
)


class HiddenNodes:
    """Drops edges to hidden datasets and jobs from a lineage walk's answers.

    Asks the database once (an indexed probe) whether anything was ever deleted; a
    store without deletes pays nothing more. A ``datasetField`` node is hidden with
    its dataset. With a limited ``scope``, a node outside it is hidden too (a run by
    its job's namespace), and so is an edge that came through a job outside it.
    """

    def __init__(self, conn: sa.Connection, scope: NamespaceScope = EVERYTHING) -> None:
        self.conn = conn
        self.scope = scope
        self._any: dict[NodeType, bool] | None = None

    def _deleted_kinds(self) -> dict[NodeType, bool]:
        if self._any is None:
            flags = self.conn.execute(_ANY_DELETED).one()
            self._any = {
                kind: flag is not None for kind, flag in zip(_KINDS, flags, strict=True)
            }
        return self._any

    def among(self, node_ids: Collection[str]) -> set[str]:
        """The hidden ones among ``node_ids``."""
        outside = self._outside(node_ids)
        kinds = self._deleted_kinds()
        if not any(kinds.values()):
            return outside
        wanted: dict[tuple[NodeType, str], dict[str, list[str]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for node_id in node_ids:
            node = NodeId.parse(node_id)
            kind = NodeType.DATASET if node.type is NodeType.DATASET_FIELD else node.type
            if kinds.get(kind):
                wanted[(kind, node.namespace)][node.name].append(node_id)
        result: set[str] = outside
        for kind in _KINDS:
            keys = [(namespace, name) for (k, namespace), names in wanted.items() if k is kind
                    for name in names]
            for namespace, (name,) in _HIDDEN[kind].rows_by_name(self.conn, keys):
                result.update(wanted[(kind, namespace)][name])
        return result

    def _outside(self, node_ids: Collection[str]) -> set[str]:
        """The ones of ``node_ids`` outside the scope (runs by their job's namespace)."""
        if not self.scope.limited:
            return set()
        runs = {n for n in node_ids if n.startswith("run:")}
        outside = {n for n in node_ids if n not in runs and not self.scope.sees_node(n)}
        if runs:
            seen = run_namespaces(self.conn, [n[len("run:"):] for n in runs])
            outside.update(n for n in runs if not self.scope.sees(seen.get(n[len("run:"):])))
        return outside

    def cut_at_scope(self, edges: list[Edge]) -> list[Edge]:
        """``edges`` without those touching a node outside the scope or coming through one."""
        if not self.scope.limited or not edges:
            return edges
        gone = self._outside({e.via for e in edges if e.via})
        edges = [e for e in edges if e.via not in gone]
        outside = self._outside({e.upstream for e in edges} | {e.downstream for e in edges})
        return [e for e in edges if e.upstream not in outside and e.downstream not in outside]

    def filter(self, edges: list[Edge]) -> list[Edge]:
        """``edges`` without those touching a hidden node or coming through one."""
        edges = self.cut_at_scope(edges)
        if not edges or not any(self._deleted_kinds().values()):
            return edges
        gone = self.among({e.upstream for e in edges} | {e.downstream for e in edges})
        if not gone:
            return edges
        return [e for e in edges if e.upstream not in gone and e.downstream not in gone]


def run_namespaces(conn: sa.Connection, run_uuids: Collection[str]) -> dict[str, str]:
    """The namespace of each stored run's job, by run id (unknown runs are absent)."""
    r, j, ns = t.runs, t.jobs, t.namespaces
    result: dict[str, str] = {}
    for batch in chunks(sorted(set(run_uuids))):
        for run_uuid, namespace in conn.execute(
            sa.select(r.c.uuid, ns.c.name)
            .join(j, j.c.id == r.c.job_id)
            .join(ns, ns.c.id == j.c.namespace_id)
            .where(r.c.uuid.in_(batch))
        ):
            result[run_uuid] = namespace
    return result
