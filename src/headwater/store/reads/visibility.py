"""Soft deletes, read side: which namespaces, datasets and jobs are hidden.

A row is hidden while ``deleted_at`` is set and not older than ``updated_at`` (its
latest event time): :func:`headwater.store.admin.hide_dataset` and friends set
``deleted_at``, and an event about the object with a later time shows it again
(Marquez "undeletes" on the next event). Hidden objects are left out of lists,
search and lineage walks, and are 404 to single-object reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from typing import Any

import sqlalchemy as sa

from headwater.graph.model import Edge, NodeId, NodeType
from headwater.store import tables as t
from headwater.store.reads.common import chunks

__all__ = ["HiddenNodes", "hidden", "visible"]


def visible(table: sa.Table | sa.FromClause) -> sa.ColumnElement[bool]:
    """SQL: the row of ``table`` (namespaces, datasets or jobs) is not soft-deleted."""
    return sa.or_(table.c.deleted_at.is_(None), table.c.updated_at > table.c.deleted_at)


def hidden(table: sa.Table | sa.FromClause) -> sa.ColumnElement[bool]:
    """SQL: the row of ``table`` is soft-deleted (the negation of :func:`visible`)."""
    return sa.and_(table.c.deleted_at.is_not(None), table.c.updated_at <= table.c.deleted_at)


def _hidden_statement(table: sa.Table) -> sa.Select[Any]:
    return (
        sa.select(table.c.name)
        .join(t.namespaces, t.namespaces.c.id == table.c.namespace_id)
        .where(
            t.namespaces.c.name == sa.bindparam("namespace"),
            table.c.name.in_(sa.bindparam("names", expanding=True)),
            hidden(table),
        )
    )


# Built once (see reads.common._ids_statement).
_HIDDEN = {NodeType.DATASET: _hidden_statement(t.datasets), NodeType.JOB: _hidden_statement(t.jobs)}
_ANY_DELETED = {
    kind: sa.select(table.c.id).where(table.c.deleted_at.is_not(None)).limit(1)
    for kind, table in ((NodeType.DATASET, t.datasets), (NodeType.JOB, t.jobs))
}


class HiddenNodes:
    """Drops edges to hidden datasets and jobs from a lineage walk's answers.

    Asks the database once (an indexed probe) whether anything was ever deleted; a
    store without deletes pays nothing more. A ``datasetField`` node is hidden with
    its dataset.
    """

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn
        self._any: dict[NodeType, bool] | None = None

    def _deleted_kinds(self) -> dict[NodeType, bool]:
        if self._any is None:
            self._any = {
                kind: self.conn.execute(query).first() is not None
                for kind, query in _ANY_DELETED.items()
            }
        return self._any

    def among(self, node_ids: Collection[str]) -> set[str]:
        """The hidden ones among ``node_ids``."""
        kinds = self._deleted_kinds()
        if not any(kinds.values()):
            return set()
        wanted: dict[tuple[NodeType, str], dict[str, list[str]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for node_id in node_ids:
            node = NodeId.parse(node_id)
            kind = NodeType.DATASET if node.type is NodeType.DATASET_FIELD else node.type
            if kinds.get(kind):
                wanted[(kind, node.namespace)][node.name].append(node_id)
        result: set[str] = set()
        for (kind, namespace), by_name in wanted.items():
            for batch in chunks(sorted(by_name)):
                for (name,) in self.conn.execute(
                    _HIDDEN[kind], {"namespace": namespace, "names": batch}
                ):
                    result.update(by_name[name])
        return result

    def filter(self, edges: list[Edge]) -> list[Edge]:
        """``edges`` without those touching a hidden node."""
        if not edges or not any(self._deleted_kinds().values()):
            return edges
        gone = self.among({e.upstream for e in edges} | {e.downstream for e in edges})
        if not gone:
            return edges
        return [e for e in edges if e.upstream not in gone and e.downstream not in gone]
