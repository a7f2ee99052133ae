"""Which namespaces a read may show: the reads' side of a namespace-limited token.

A :class:`NamespaceScope` is passed down to the read queries, which answer as if
the store held only the scope's namespaces:

- lists, search and the event log select only rows in those namespaces (in SQL, so
  a page of ``limit`` items holds ``limit`` visible ones when there are that many,
  and counts count only those);
- a lineage walk drops every edge that touches a node outside them, or that came
  through a job outside them, so it stops at the boundary and names nothing
  beyond it;
- a record (dataset, job, run, version, event) keeps only the inputs, outputs,
  column-lineage inputs, parents and facet references inside them.

Jobs are in job namespaces and datasets in dataset namespaces; one scope applies
to both. A run belongs to its job's namespace.

Facets are filtered by their structure (:meth:`NamespaceScope.facets`): any object
carrying a ``namespace`` outside the scope -- a ``symlinks`` identifier, a
``columnLineage`` input field, a ``parent`` facet's job -- is taken out of the
list holding it, or, when no list holds it, the facet holding it is left out
whole. Free text (SQL, Spark properties, descriptions) of an object inside the
scope is its own and is shown as sent.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

__all__ = ["EVERYTHING", "NamespaceScope"]


class _Gone:
    """Marks a value that holds a reference outside the scope."""


_GONE = _Gone()


@dataclass(frozen=True)
class NamespaceScope:
    """The namespaces a read may show; ``namespaces`` None means every one."""

    namespaces: frozenset[str] | None = None

    @classmethod
    def of(cls, namespaces: Iterable[str] | None) -> NamespaceScope:
        return cls(None if namespaces is None else frozenset(namespaces))

    @property
    def limited(self) -> bool:
        return self.namespaces is not None

    def sees(self, namespace: str | None) -> bool:
        """Whether ``namespace`` is inside the scope (None, no namespace: only when unlimited)."""
        if self.namespaces is None:
            return True
        return namespace is not None and namespace in self.namespaces

    def sees_node(self, node_id: str) -> bool:
        """Whether a ``dataset``, ``datasetField`` or ``job`` node id is inside the scope.

        Run ids carry no namespace (callers decide those by the run's job), and an id
        the parser refuses names no namespace: both are outside a limited scope.
        """
        if self.namespaces is None:
            return True
        from headwater.graph.model import NodeId, NodeType

        try:
            node = NodeId.parse(node_id)
        except ValueError:
            return False
        return node.type is not NodeType.RUN and node.namespace in self.namespaces

    def where(self, namespace_name: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """SQL: the namespace name ``namespace_name`` is inside the scope."""
        if self.namespaces is None:
            return sa.true()
        return namespace_name.in_(sorted(self.namespaces))

    def names(self, namespaces: Collection[str]) -> list[str]:
        """The ones of ``namespaces`` inside the scope."""
        return [n for n in namespaces if self.sees(n)]

    def facets(self, facets: dict[str, Any]) -> dict[str, Any]:
        """``facets`` (name -> payload) without the references outside the scope."""
        if self.namespaces is None:
            return facets
        kept = {}
        for name, payload in facets.items():
            scrubbed = self._scrub(payload)
            if scrubbed is not _GONE:
                kept[name] = scrubbed
        return kept

    def payload(self, value: Any) -> Any:
        """An event (or any JSON) without the references outside the scope; None when
        the value itself is outside."""
        if self.namespaces is None:
            return value
        scrubbed = self._scrub(value)
        return None if scrubbed is _GONE else scrubbed

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, dict):
            namespace = value.get("namespace")
            if isinstance(namespace, str) and not self.sees(namespace):
                return _GONE
            kept: dict[str, Any] = {}
            for key, item in value.items():
                if isinstance(item, dict) and (key == "facets" or key.endswith("Facets")):
                    kept[key] = self.facets(item)
                    continue
                scrubbed = self._scrub(item)
                if scrubbed is _GONE:
                    return _GONE  # a reference that no list holds takes its holder with it
                kept[key] = scrubbed
            return kept
        if isinstance(value, list):
            return [s for s in (self._scrub(item) for item in value) if s is not _GONE]
        return value


#: The scope of a token without namespaces (and of the CLI and other in-process readers).
EVERYTHING = NamespaceScope()
