"""Record statements run through the driver for every reader who sees everything.

A record (a dataset's, a job's, a run's) is built by a few batched statements
with a list parameter. Through SQLAlchemy each execution builds the statement,
looks it up in the compiled cache and renders the list into its text; for the
one or two records an answer rebuilds after a write, that fixed work cost more
than the database's (``docs/server.md``, "Record revisions"). A
:class:`ScopedSelect` compiles its statement once (a
:class:`~headwater.store.driver.listselect.ListSelect`) for the unlimited scope,
the one nearly every request reads with; a namespace-limited scope's statement
carries that scope's namespaces as literals, so it is built and run through
SQLAlchemy. Both give rows with the same columns and values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from headwater.store.driver.listselect import ListSelect
from headwater.store.reads.scope import EVERYTHING, NamespaceScope

__all__ = ["ScopedSelect"]


class ScopedSelect:
    """``build(scope)``: a SELECT with expanding list parameters (``sa.bindparam(name,
    expanding=True)``) answering for a reader limited to ``scope``."""

    def __init__(self, build: Callable[[NamespaceScope], sa.Select[Any]]) -> None:
        self.build = build
        self.everything = ListSelect(build(EVERYTHING))

    def rows(
        self, conn: sa.Connection, scope: NamespaceScope, params: Mapping[str, Any]
    ) -> list[Any]:
        """The rows for ``params`` (every list non-empty), as ``scope``'s reader sees them."""
        if not scope.limited:
            return self.everything.rows(conn, params)
        return list(conn.execute(self.build(scope), dict(params)).all())
