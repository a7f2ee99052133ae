"""Following each output column of one SQL statement down through its scopes.

:class:`ScopeResolver` walks the scopes sqlglot finds in a statement (the
statement, its CTEs, derived tables, subqueries and set-operation branches) to
the ``(table, column)`` pairs each output column is computed from, and to the
columns the clauses that shape every row read; :mod:`.jdbc_sql` parses the SQL
and says which transformations and which unknowns come out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from headwater.agent.columns import Transformation, compose

if TYPE_CHECKING:
    from sqlglot import exp
    from sqlglot.optimizer.scope import Scope

__all__ = ["ScopeResolver", "SourceField", "Sources", "TableParts", "table_name_parts"]

#: A table as the SQL names it, identifiers unquoted (``("public", "orders")``).
TableParts = tuple[str, ...]
#: One column of one table.
SourceField = tuple[TableParts, str]
#: Per table column, how a value is computed from it.
Sources = dict[SourceField, set[Transformation]]

_IDENTITY = Transformation("DIRECT", "IDENTITY")
_MASKING = frozenset(
    {"md5", "sha", "sha1", "sha2", "sha256", "sha512", "crc32", "hash", "xxhash64", "murmur3"}
)
_MASKING_AGGREGATES = frozenset({"count", "countif", "approxdistinct", "approx_count_distinct"})
#: Clause of a SELECT -> the INDIRECT subtype of the columns it reads.
_CLAUSES = (
    ("where", "FILTER"),
    ("having", "FILTER"),
    ("qualify", "FILTER"),
    ("group", "GROUP_BY"),
    ("order", "SORT"),
)


def table_name_parts(table: exp.Table) -> TableParts:
    """A table of the statement as its parts (catalog, schema, name), unquoted."""
    return tuple(part.name for part in table.parts)


def _merge(into: Sources, found: Sources, outer: Transformation | None = None) -> None:
    for source, kinds in found.items():
        bucket = into.setdefault(source, set())
        bucket.update(kinds if outer is None else {compose(outer, kind) for kind in kinds})


class ScopeResolver:
    """Follows output columns through the scopes of one statement (memoised per scope)."""

    def __init__(self, root: Scope, dialect: str | None) -> None:
        from sqlglot import exp

        self.exp = exp
        self.root = root
        self.dialect = dialect
        self.scopes = list(root.traverse())
        # A subquery expression (the SELECT inside its parentheses) -> its scope.
        self.by_expression = {id(scope.expression): scope for scope in self.scopes}
        self.table_sources = {
            id(source)
            for scope in self.scopes
            for source in scope.sources.values()
            if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier)
        }
        self._named: dict[tuple[int, str], Sources] = {}

    # -- tables ------------------------------------------------------------------------

    def tables(self) -> tuple[TableParts, ...]:
        """Every table read, scope by scope (CTEs and subqueries before the statement)."""
        seen: dict[TableParts, None] = {}
        for scope in self.scopes:
            for source in scope.sources.values():
                if id(source) in self.table_sources:
                    seen.setdefault(table_name_parts(source), None)
        return tuple(seen)

    # -- outputs of a scope ------------------------------------------------------------

    def output_names(self, scope: Scope | exp.Table) -> list[str] | None:
        """A scope's output column names; ``None`` for a table (its schema is not
        known) and behind a ``*`` that cannot be expanded."""
        if isinstance(scope, self.exp.Table):
            return None
        if scope.outer_columns:
            return list(scope.outer_columns)
        if self._is_set_operation(scope):
            return self.output_names(scope.set_operation_scopes[0])
        names: list[str] = []
        for projection in getattr(scope.expression, "selects", []):
            if self._is_star(projection):
                widths = [self.output_names(s) for s in self._star_sources(scope, projection)]
                if len(widths) != 1 or widths[0] is None:
                    return None
                names.extend(widths[0])
            else:
                names.append(projection.alias_or_name)
        return names

    def positional(self, scope: Scope, index: int, names: list[str] | None = None) -> Sources:
        """Sources of output column ``index``; ``names`` (the output's column names)
        expand a ``*`` in this scope."""
        if self._is_set_operation(scope):
            found: Sources = {}
            for branch_index, branch in enumerate(scope.set_operation_scopes):
                _merge(found, self.positional(branch, index, names if branch_index == 0 else None))
            return found
        entries = self._expanded(scope, names)
        if entries is None or index >= len(entries):
            return {}
        projection, star_name = entries[index]
        if star_name is not None:
            return self._through_star(scope, projection, star_name)
        return self._projection(scope, projection)

    def named(self, scope: Scope, name: str) -> Sources:
        """Sources of the output column called ``name``."""
        key = (id(scope), name)
        if key not in self._named:
            self._named[key] = {}  # a recursive CTE refers to itself
            self._named[key] = self._named_uncached(scope, name)
        return self._named[key]

    def _named_uncached(self, scope: Scope, name: str) -> Sources:
        names = self.output_names(scope)
        if scope.outer_columns or self._is_set_operation(scope):
            return self.positional(scope, names.index(name)) if names and name in names else {}
        stars = []
        for projection in getattr(scope.expression, "selects", []):
            if self._is_star(projection):
                stars.append(projection)
            elif projection.alias_or_name == name:
                return self._projection(scope, projection)
        for star in stars:
            found = self._through_star(scope, star, name)
            if found:
                return found
        return {}

    def _expanded(
        self, scope: Scope, names: list[str] | None
    ) -> list[tuple[Any, str | None]] | None:
        """The projections of a SELECT, one per output column: ``(projection, None)``,
        or ``(star, column name)`` for each column a ``*`` stands for."""
        selects = list(getattr(scope.expression, "selects", []))
        stars = [p for p in selects if self._is_star(p)]
        if not stars:
            return [(p, None) for p in selects]
        widths: dict[int, int | None] = {}
        for star in stars:
            sources = self._star_sources(scope, star)
            known = [self.output_names(s) for s in sources]
            counts = [len(k) for k in known if k is not None]
            widths[id(star)] = sum(counts) if known and len(counts) == len(known) else None
        unknown = [s for s in stars if widths[id(s)] is None]
        if unknown:
            if names is None or len(unknown) > 1:
                return None
            rest = len(names) - (len(selects) - len(stars)) - sum(w or 0 for w in widths.values())
            widths[id(unknown[0])] = max(rest, 0)
        entries: list[tuple[Any, str | None]] = []
        for projection in selects:
            if not self._is_star(projection):
                entries.append((projection, None))
                continue
            for _ in range(widths[id(projection)] or 0):
                position = len(entries)
                label = names[position] if names is not None and position < len(names) else None
                entries.append((projection, label))
        return entries

    # -- stars -------------------------------------------------------------------------

    def _is_set_operation(self, scope: Scope) -> bool:
        """A UNION / INTERSECT / EXCEPT, whose branches are its two child scopes."""
        return (
            isinstance(scope.expression, self.exp.SetOperation)
            and len(scope.set_operation_scopes) == 2
        )

    def _is_star(self, projection: exp.Expr) -> bool:
        exp = self.exp
        return isinstance(projection, exp.Star) or (
            isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
        )

    def _star_sources(self, scope: Scope, star: exp.Expr) -> list[Any]:
        qualifier = star.table if isinstance(star, self.exp.Column) else ""
        if qualifier:
            source = scope.sources.get(qualifier)
            return [source] if source is not None else []
        return [source for _, source in scope.selected_sources.values()]

    def _through_star(self, scope: Scope, star: exp.Expr, name: str | None) -> Sources:
        if name is None:
            return {}
        sources = self._star_sources(scope, star)
        if len(sources) != 1:
            # SELECT * over a join: which table a column comes from needs their schemas.
            scoped = [s for s in sources if not isinstance(s, self.exp.Table)]
            owners = [s for s in scoped if name in (self.output_names(s) or [])]
            if len(owners) == 1 and len(scoped) == len(sources):
                return self.named(owners[0], name)
            return {}
        return self._from_source(sources[0], name)

    def _from_source(self, source: Any, name: str) -> Sources:
        if isinstance(source, self.exp.Table):
            if id(source) not in self.table_sources:
                return {}
            return {(table_name_parts(source), name): {_IDENTITY}}
        return self.named(source, name)

    # -- expressions -------------------------------------------------------------------

    def column(self, scope: Scope, column: exp.Column) -> Sources:
        """Sources of one column reference in ``scope`` (outer scopes for correlated ones)."""
        name, qualifier = column.name, column.table
        current: Scope | None = scope
        while current is not None:
            if qualifier:
                if qualifier in current.sources:
                    return self._from_source(current.sources[qualifier], name)
            else:
                selected = [source for _, source in current.selected_sources.values()]
                if len(selected) == 1:
                    return self._from_source(selected[0], name)
                if name in self._using(current):
                    # JOIN ... USING (k): an unqualified k is the join key of every side.
                    found: Sources = {}
                    for source in selected:
                        _merge(found, self._from_source(source, name))
                    return found
                owners = [
                    s
                    for s in selected
                    if not isinstance(s, self.exp.Table) and name in (self.output_names(s) or [])
                ]
                if len(owners) == 1:
                    return self.named(owners[0], name)
                if selected:
                    return {}  # ambiguous without the tables' schemas
            current = current.parent
        return {}

    def _using(self, scope: Scope) -> set[str]:
        if not isinstance(scope.expression, self.exp.Select):
            return set()
        joins = scope.expression.args.get("joins") or []
        return {ident.name for join in joins for ident in join.args.get("using") or []}

    def _projection(self, scope: Scope, projection: exp.Expr) -> Sources:
        exp = self.exp
        body = projection.unalias() if isinstance(projection, exp.Alias) else projection
        if isinstance(body, exp.Column) and not isinstance(body.this, exp.Star):
            return self.column(scope, body)
        kind = self._kind(body, projection.sql(dialect=self.dialect))
        found: Sources = {}
        conditions, window_keys = self._indirect_parts(body)
        for node in self._in_scope(body):
            if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                if id(node) in conditions:
                    outer = Transformation("INDIRECT", "CONDITIONAL", False, kind.description)
                elif id(node) in window_keys:
                    outer = Transformation("INDIRECT", "WINDOW", False, kind.description)
                else:
                    outer = kind
                _merge(found, self.column(scope, node), outer)
            elif isinstance(node, exp.Subquery) or node is not body and isinstance(node, exp.Query):
                _merge(found, self._subquery(node), kind)
        return found

    def _kind(self, body: exp.Expr, description: str) -> Transformation:
        exp = self.exp
        names = {type(node).__name__.lower() for node in body.walk()}
        names |= {str(node.name).lower() for node in body.find_all(exp.Anonymous)}
        if any(isinstance(node, exp.AggFunc) for node in body.walk()):
            masking = bool(names & _MASKING_AGGREGATES) or bool(names & _MASKING)
            return Transformation("DIRECT", "AGGREGATION", masking, description)
        return Transformation("DIRECT", "TRANSFORMATION", bool(names & _MASKING), description)

    def _indirect_parts(self, body: exp.Expr) -> tuple[set[int], set[int]]:
        """ids of the columns in CASE/IF conditions and in window keys of ``body``."""
        exp = self.exp
        conditions: set[int] = set()
        window_keys: set[int] = set()
        for node in self._in_scope(body):
            if isinstance(node, exp.If) and node.this is not None:
                conditions |= self._column_ids(node.this)
            elif isinstance(node, exp.Window):
                for key in [*(node.args.get("partition_by") or []), node.args.get("order")]:
                    if key is not None:
                        window_keys |= self._column_ids(key)
        return conditions, window_keys

    def _column_ids(self, expression: exp.Expr) -> set[int]:
        return {id(c) for c in self._in_scope(expression) if isinstance(c, self.exp.Column)}

    def _in_scope(self, expression: exp.Expr) -> Iterable[exp.Expr]:
        """``expression`` and what is below it, not descending into subqueries."""
        exp = self.exp
        return expression.walk(
            prune=lambda node: (
                node is not expression and isinstance(node, (exp.Subquery, exp.Query))
            )
        )

    def _subquery(self, node: exp.Expr) -> Sources:
        query = node.this if isinstance(node, self.exp.Subquery) else node
        scope = self.by_expression.get(id(query))
        return self.positional(scope, 0) if scope is not None else {}

    # -- clauses that shape every row --------------------------------------------------

    def indirect(self) -> Sources:
        """INDIRECT sources of every scope's filters, joins, groupings and orderings."""
        exp = self.exp
        found: Sources = {}
        for scope in self.scopes:
            select = scope.expression
            if not isinstance(select, exp.Select):
                continue
            for clause, subtype in _CLAUSES:
                expression = select.args.get(clause)
                if expression is not None:
                    self._clause(scope, expression, subtype, found)
            for join in select.args.get("joins") or []:
                if join.args.get("on") is not None:
                    self._clause(scope, join.args["on"], "JOIN", found)
                for ident in join.args.get("using") or []:
                    kind = Transformation("INDIRECT", "JOIN", False, f"USING ({ident.name})")
                    for _, source in scope.selected_sources.values():
                        _merge(found, self._from_source(source, ident.name), kind)
        return found

    def _clause(self, scope: Scope, expression: exp.Expr, subtype: str, found: Sources) -> None:
        exp = self.exp
        kind = Transformation("INDIRECT", subtype, False, expression.sql(dialect=self.dialect))
        aliases = {
            p.alias: p for p in scope.expression.selects if isinstance(p, exp.Alias) and p.alias
        }
        for node in self._in_scope(expression):
            if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                if not node.table and node.name in aliases and subtype != "FILTER":
                    # GROUP BY / ORDER BY an output alias
                    _merge(found, self._projection(scope, aliases[node.name]), kind)
                else:
                    _merge(found, self.column(scope, node), kind)
            elif node is not expression and isinstance(node, (exp.Subquery, exp.Query)):
                _merge(found, self._subquery(node), kind)
