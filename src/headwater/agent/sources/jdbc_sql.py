"""Which table columns each output column of a JDBC read's SQL comes from.

A JDBC read with ``query`` (or a ``dbtable`` that is a subquery or a join)
hands the database a SQL statement; Spark sees only the columns it returns.
:func:`sql_lineage` parses that SQL with sqlglot, splits it into scopes (the
statement, its CTEs, derived tables, subqueries and set-operation branches)
and follows every output column down through them (:mod:`.jdbc_sql_scopes`)
to ``(table, column)`` pairs, with the transformation on the way — the same
kinds the plan's column lineage uses (:mod:`headwater.agent.columns`):

* DIRECT IDENTITY / TRANSFORMATION / AGGREGATION (``masking`` for hashes and
  counts) along the projections;
* INDIRECT CONDITIONAL for the conditions of ``CASE`` and ``IF``, WINDOW for a
  window's partition and order keys;
* INDIRECT FILTER / JOIN / GROUP_BY / SORT for the columns ``WHERE``,
  ``HAVING``, ``QUALIFY``, ``JOIN ... ON | USING``, ``GROUP BY`` and ``ORDER BY``
  read, in any scope: they decide which rows come back, so they stand apart
  (:attr:`SqlLineage.rows`), as a plan's filters do.

Without the tables' schemas, two things stay unknown, and are left out rather
than guessed: an unqualified column when its scope reads several tables, and
a ``*`` over several tables (one ``*`` or ``t.*`` over one table is expanded
with the output column names Spark reports).

Identifiers are normalised as the dialect does (PostgreSQL folds unquoted
names to lower case, Snowflake and Oracle to upper case), so a table is the
same dataset however the SQL spells it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from headwater.agent.columns import Transformation
from headwater.agent.sources.jdbc_sql_scopes import (
    ScopeResolver,
    SourceField,
    TableParts,
    table_name_parts,
)

__all__ = ["SourceField", "SqlLineage", "sql_lineage", "table_parts"]

logger = logging.getLogger(__name__)

E = TypeVar("E")


@dataclass(frozen=True)
class SqlLineage:
    """The tables a statement reads, and where each of its output columns comes from."""

    #: Every table read, those of CTEs and subqueries first.
    tables: tuple[TableParts, ...]
    #: Per output column, in order: the table columns it is computed from.
    columns: tuple[Mapping[SourceField, frozenset[Transformation]], ...]
    #: The columns that decide which rows the statement returns (INDIRECT FILTER,
    #: JOIN, GROUP_BY, SORT): they shape every output column.
    rows: Mapping[SourceField, frozenset[Transformation]]


def table_parts(name: str, dialect: str | None) -> TableParts:
    """A ``dbtable`` option that names one table -> its parts, normalised as the dialect does."""
    import sqlglot
    from sqlglot import exp

    try:
        return table_name_parts(
            _normalized(sqlglot.parse_one(name, read=dialect, into=exp.Table), dialect)
        )
    except Exception:
        logger.debug("dbtable %r is not a table name sqlglot reads", name, exc_info=True)
        return tuple(part.strip('"`[]') for part in name.split("."))


def sql_lineage(sql: str, dialect: str | None, output_names: Sequence[str]) -> SqlLineage | None:
    """Lineage of ``sql`` whose result has the columns ``output_names``; ``None``
    when sqlglot cannot read it. When the tables are known and their columns
    cannot be followed, the columns come back empty."""
    import sqlglot
    from sqlglot.optimizer.scope import build_scope

    try:
        root = build_scope(_normalized(sqlglot.parse_one(sql, read=dialect), dialect))
        if root is None:  # not a query (a CALL, a DDL statement)
            return None
        resolver = ScopeResolver(root, dialect)
        tables = resolver.tables()
    except Exception:
        logger.debug("cannot parse JDBC query SQL", exc_info=True)
        return None
    try:
        names = list(output_names)
        columns = tuple(
            {source: frozenset(how) for source, how in resolver.positional(root, i, names).items()}
            for i in range(len(names))
        )
        rows = {source: frozenset(kinds) for source, kinds in resolver.indirect().items()}
    except Exception:
        logger.debug("cannot follow the columns of JDBC query SQL", exc_info=True)
        columns, rows = tuple({} for _ in output_names), {}
    return SqlLineage(tables, columns, rows)


def _normalized(tree: E, dialect: str | None) -> E:
    """Unquoted identifiers folded as the database folds them, where it does (to
    lower case in PostgreSQL, upper in Snowflake and Oracle); left as written
    where the database matches names without regard to case (SQL Server)."""
    from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

    if dialect is None:
        return tree
    strategy = Dialect.get_or_raise(dialect).NORMALIZATION_STRATEGY
    if strategy in (NormalizationStrategy.LOWERCASE, NormalizationStrategy.UPPERCASE):
        return normalize_identifiers(tree, dialect=dialect)
    return tree
