"""Where a JDBC connection points: :class:`JdbcLocation`, the answer every URL rule gives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["JdbcLocation", "Parser"]


@dataclass(frozen=True)
class JdbcLocation:
    """Where a JDBC connection points: a namespace, and how it names tables."""

    #: The dataset namespace (``postgres://host:5432``).
    namespace: str
    #: Leading name parts the connection supplies (``("db",)``, ``("catalog", "schema")``).
    defaults: tuple[str, ...] = ()
    #: How many parts a fully qualified table name has in this system.
    levels: int = 3
    #: The sqlglot dialect of its SQL, when sqlglot has one.
    dialect: str | None = None

    def table_name(self, parts: Sequence[str]) -> str:
        """The dataset name of a table the SQL names with ``parts`` (``("schema", "t")``).

        Levels the SQL leaves out are taken from the connection, from the left:
        ``("t",)`` on a connection to database ``db`` is ``db.t``.
        """
        missing = max(self.levels - len(parts), 0)
        return ".".join([*self.defaults[:missing], *parts])


#: A URL without ``jdbc:`` and its lowercased options -> its location, or None.
Parser = Callable[[str, dict[str, str]], JdbcLocation | None]
