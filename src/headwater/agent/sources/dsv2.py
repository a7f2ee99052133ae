"""Data Source V2 tables, any table format: reads of ``DataSourceV2Relation`` and
``DataSourceV2ScanRelation`` leaves, v2 writes (append, overwrite, the row-level
rewrites of DELETE/UPDATE/MERGE), CTAS/RTAS and v2 DDL.

The plan JSON leaves a v2 relation's ``table``, ``catalog`` and ``identifier``
``null``; the look-ups (:mod:`.dsv2_jvm`) ask the JVM for the table's name, class and
properties, the catalog's name and the identifier, then hand the ``Table`` to
its format's look-up (``SourceFamily.v2_table_lookups``, keyed by the table's
short class name), which may return ``location``, ``version``,
``storage_layer``, ``file_format``, ``catalog_type`` and ``warehouse`` — and
``previous_version``, the version before the one a write committed, which its
reads of the table it wrote (a MERGE's target) saw.

A table is a dataset at its location, with ``symlinks`` naming it by its
catalog identifier. The version a write made and the schema a create or an
ALTER left are catalog state the job's next statement may change: a write's,
a create's or an ALTER's table state is pinned on the listener thread
(:mod:`.dsv2_pins`) and the rest captured later.
"""

from __future__ import annotations

import re
from typing import Any

from headwater import naming
from headwater.agent.columns import Transformation, node_output
from headwater.agent.plan import Expr, PlanNode, parse_exprs, parse_plan, short_class
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    dataset_at,
    schema_from_attributes,
    schema_from_struct,
)
from headwater.agent.sources.dsv2_jvm import (
    NESTED_WRITE,
    TABLE_ALTERS,
    TABLE_CREATES,
    TABLE_WRITES,
    V2_DROP,
    alter_facts,
    create_facts,
    dropped_table_facts,
    rdd_scan_tables,
    scan_relation_facts,
    streaming_relation_facts,
    table_facts,
    table_write_facts,
    v2_relation_facts,
)
from headwater.agent.sources.dsv2_pins import PINNED, pin_table, pinned_root_facts
from headwater.agent.sources import formats
from headwater.agent.sources.family import SourceFamily

__all__ = [
    "FAMILY",
    "NESTED_WRITE",
    "PINNED",
    "V2_DROP",
    "dropped_table_facts",
    "is_v2_drop",
    "pin_table",
    "pinned_root_facts",
    "rdd_scan_datasets",
    "rdd_scan_tables",
    "scan_filter_sources",
    "table_facts",
    "v2_relation_facts",
    "write_drop",
]


def _table_ident(facts: Any) -> str | None:
    """``namespace.table``; ``None`` for a table named by its path (``delta.`/p```)."""
    if "name" not in facts or "/" in str(facts["name"]):
        return None
    return ".".join([*facts.get("namespace", []), facts["name"]])


def _warehouse_uri(warehouse: str) -> str:
    return f"file:{warehouse}" if warehouse.startswith("/") else warehouse


def _location(facts: Any) -> str | None:
    location = facts.get("location") or facts.get("table_location")
    return str(location) if location else None


def _decorate(ds: CapturedDataset, facts: Any, ctx: VisitContext) -> None:
    """Symlink, catalog, version and storage of a v2 table dataset."""
    ds.is_table = True
    ident = _table_ident(facts)
    warehouse = facts.get("warehouse")
    if ident is not None:
        namespace = _warehouse_uri(str(warehouse)) if warehouse else (
            ctx.table_namespace or ctx.warehouse_uri or facts.get("catalog") or "spark_catalog"
        )
        link = (namespace, ident, "TABLE")
        if link not in ds.symlinks:
            ds.symlinks.append(link)
    if facts.get("version") is not None:
        ds.version = str(facts["version"])
    layer = facts.get("storage_layer") or facts.get("table_provider")
    if facts.get("storage_layer"):
        ds.storage = (str(facts["storage_layer"]), facts.get("file_format"))
    if facts.get("catalog"):
        ds.catalog = {
            "name": str(facts["catalog"]),
            "framework": str(layer or "spark"),
            "type_": str(facts.get("catalog_type") or "unknown"),
            "warehouse_uri": str(warehouse) if warehouse else None,
        }


def _named(facts: Any, ctx: VisitContext) -> tuple[str, str] | None:
    location = _location(facts)
    if location:
        return dataset_at(location, ctx)
    ident = _table_ident(facts)
    if ident is not None:
        return str(facts.get("catalog") or "spark_catalog"), ident
    return None


def _option_datasets(facts: Any, attributes: list[Expr]) -> list[CapturedDataset] | None:
    """The datasets a table named by its options names (``None`` for other tables)."""
    named = formats.OPTION_DATASETS.get(short_class(str(facts.get("table_class", ""))))
    if named is None or "options" not in facts:
        return None
    return named(dict(facts["options"]), attributes)


def read_v2_relation(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    """A v2 relation leaf: the table at its location, its columns as lineage leaves."""
    facts = ctx.facts(node)
    by_options = _option_datasets(facts, node.output())
    if by_options is not None:
        return by_options
    named = _named(facts, ctx)
    if named is None:
        return []
    attributes = node.output()
    ds = CapturedDataset(
        *named,
        fields=schema_from_attributes(attributes),
        attributes={a.expr_id: a.name or "" for a in attributes if a.expr_id is not None},
    )
    _decorate(ds, facts, ctx)
    ds.row_sources = scan_filter_sources(facts, [name for name, _, _ in ds.fields])
    # A write's read of the table it writes (a MERGE's target) read the snapshot
    # before the one the write committed.
    written = ctx.facts(ctx.tree)
    if (
        ctx.tree.cls in TABLE_WRITES
        and written.get("previous_version") is not None
        and _location(written) == _location(facts)
        and not facts.get("time_travel")
    ):
        ds.version = str(written["previous_version"])
    return [ds]


#: The filters in a scan's description: Iceberg's ``[filters=..., groupedBy=...]``,
#: Spark's file scans' ``PushedFilters: [...]``.
_SCAN_FILTERS = (re.compile(r"\[filters=(.*), groupedBy="), re.compile(r"PushedFilters: \[(.*?)\]"))
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'")


def scan_filter_sources(facts: Any, columns: list[str]) -> list[tuple[str, Transformation]]:
    """The table's columns the filters its scan applies read, as INDIRECT FILTER
    sources of every column written from its rows (found by name in the filters'
    text, quoted values left out; the table's columns, not only those read)."""
    text = str(facts.get("scan_description") or "")
    found = next((m.group(1) for p in _SCAN_FILTERS if (m := p.search(text))), "")
    if not found:
        return []
    unquoted = _QUOTED.sub("''", found)
    names = [str(f.get("name")) for f in (facts.get("schema") or {}).get("fields", [])] or columns
    how = Transformation("INDIRECT", "FILTER", False, found)
    return [
        (name, how)
        for name in names
        if re.search(rf"(?<![\w.`]){re.escape(name)}(?![\w`])", unquoted)
    ]


def rdd_scan_datasets(tables: list[Any], ctx: VisitContext) -> list[CapturedDataset]:
    """The tables :func:`rdd_scan_tables` found, with the schema each table has
    (the RDD's own columns are not theirs)."""
    datasets = []
    for facts in tables:
        named = _named(facts, ctx)
        if named is None:
            continue
        ds = CapturedDataset(*named, fields=schema_from_struct(facts.get("schema")))
        _decorate(ds, facts, ctx)
        datasets.append(ds)
    return datasets


def _relation_in(root: PlanNode, field: str) -> PlanNode | None:
    raw = root.fields.get(field)
    if not isinstance(raw, list) or not raw:
        return None
    try:
        return parse_plan(raw, (("field", field),), subqueries=False)
    except ValueError:
        return None


_ATTRIBUTE = "org.apache.spark.sql.catalyst.expressions.AttributeReference"


def _aligned_query(query: PlanNode, columns: list[str]) -> PlanNode:
    """``query`` under a projection of its columns named ``columns``, in that order.

    A row-level rewrite's query also carries the operation and the row's file and
    position; column lineage pairs written columns with the query's output by
    position, so the table's own columns are picked out by name.
    """
    by_id: dict[int, Expr] = {}
    for node in query.walk():
        for key in ("output", "projectList"):
            for expr in node.exprs(key):
                if expr.expr_id is not None and expr.expr_id not in by_id:
                    by_id[expr.expr_id] = expr
    by_name: dict[str, Expr] = {}
    for ident in node_output(query):
        expr = by_id.get(ident)
        if expr is not None and expr.name and expr.name not in by_name:
            by_name[expr.name] = expr
    projection = []
    for column in columns:
        expr = by_name.get(column)
        if expr is None:
            return query
        projection.append(
            [{"class": _ATTRIBUTE, "num-children": 0, "name": column, "exprId": expr.fields["exprId"]}]
        )
    return PlanNode("Project", {"projectList": projection}, children=[query], path=query.path)


def _suffix(facts: Any, dataset_name: str, use_table_name: bool) -> str:
    # The listener names a write into a table by the table's name
    # (catalog.namespace.table), a created or altered table by its identifier, and
    # a table known by its path only by the path's last two parts.
    table_name = str(facts.get("table_name") or "")
    if use_table_name and table_name and "/" not in table_name:
        return table_name
    return _table_ident(facts) or naming.trim_path_suffix(dataset_name)


def _write_table(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    field, lifecycle = TABLE_WRITES[root.cls]
    relation = _relation_in(root, field)
    query = root.children[0] if root.children else None
    by_options = _option_datasets(facts, relation.output() if relation is not None else [])
    if by_options is not None:
        for ds in by_options:
            ds.query, ds.attributes = query, {}
            visited.outputs.append(ds)
            visited.job_suffix = naming.trim_path_suffix(ds.name)
        return
    named = _named(facts, ctx)
    if named is None:
        return
    fields = schema_from_attributes(relation.output()) if relation is not None else []
    fields = fields or schema_from_struct(facts.get("schema"))
    if query is not None and root.cls in ("ReplaceData", "WriteDelta"):
        query = _aligned_query(query, [name for name, _, _ in fields])
    ds = CapturedDataset(*named, fields=fields, query=query, lifecycle=lifecycle)
    _decorate(ds, facts, ctx)
    visited.outputs.append(ds)
    visited.job_suffix = _suffix(facts, ds.name, use_table_name=True)


def _write_create(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    named = _named(facts, ctx)
    if named is None:
        return
    query = root.inner.get("query")
    fields = schema_from_struct(facts.get("schema"))
    if not fields and query is not None:
        fields = schema_from_attributes(_query_output(query))
    ds = CapturedDataset(*named, fields=fields, query=query, lifecycle=TABLE_CREATES[root.cls])
    _decorate(ds, facts, ctx)
    visited.outputs.append(ds)
    visited.job_suffix = _suffix(facts, ds.name, use_table_name=False)


def _query_output(query: PlanNode) -> list[Expr]:
    wanted = node_output(query)
    found: dict[int, Expr] = {}
    for node in query.walk():
        for key in ("output", "projectList", "aggregateExpressions"):
            for expr in node.exprs(key):
                if expr.expr_id in wanted and expr.expr_id not in found:
                    found[expr.expr_id] = expr
    return [found[i] for i in wanted if i in found]


def _altered_schema(root: PlanNode, facts: Any) -> list | None:
    """The schema an ADD COLUMNS or a top-level RENAME COLUMN left, from the table as
    the command resolved it (its ``ResolvedTable`` child) and the change it names,
    not from the catalog: by the time Spark reports the command, the job's next
    statement may have changed the table again. ``None`` for other changes."""
    before = root.children[0] if root.children else None
    if before is None or before.cls != "ResolvedTable":
        return None
    fields = schema_from_attributes(parse_exprs(before.fields.get("outputAttributes") or []))
    if root.cls == "AddColumns" and "added_columns" in facts:
        added = [column for column in facts["added_columns"] if "." not in column["name"]]
        if len(added) != len(facts["added_columns"]):
            return None  # a nested field: the catalog's schema says it
        return fields + schema_from_struct({"fields": added})
    if root.cls == "RenameColumn":
        column = (root.fields.get("column") or [{}])[0]
        old, new = (column.get("field") or {}).get("name"), root.fields.get("newName")
        if column.get("path") or not old or not isinstance(new, str):
            return None
        return [(new if name == old else name, type_, children) for name, type_, children in fields]
    return None


def _write_alter(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    named = _named(facts, ctx)
    if named is None:
        return
    altered = _altered_schema(root, facts)
    fields = altered if altered is not None else schema_from_struct(facts.get("schema"))
    ds = CapturedDataset(*named, fields=fields)
    _decorate(ds, facts, ctx)
    visited.outputs.append(ds)
    visited.job_suffix = _suffix(facts, ds.name, use_table_name=False)


def is_v2_drop(root: PlanNode, ctx: VisitContext) -> bool:
    """Whether a ``DropTable`` root dropped a table of a v2 catalog (see :func:`dropped_table_facts`)."""
    return bool(ctx.facts(root).get(V2_DROP))


def write_drop(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    """The table a v2 ``DROP TABLE`` dropped."""
    facts = ctx.facts(root)
    named = _named(facts, ctx)
    if named is None:
        return
    ds = CapturedDataset(*named, lifecycle="DROP")
    _decorate(ds, facts, ctx)
    ds.catalog = None  # a dropped table's catalog facts are gone with it
    visited.outputs.append(ds)
    visited.job_suffix = _suffix(facts, ds.name, use_table_name=False)


#: The data source a streaming query's v2 table sink is visited as (see
#: :func:`stream_table_facts`).
STREAM_TABLE = "V2TableStreamSink"


def stream_table_facts(sink: Any, options: Any) -> dict[str, Any]:
    """A stream written into a v2 table with ``toTable`` (Iceberg's ``SparkTable``):
    the table's facts, its catalog and identifier read from its name
    (``catalog.namespace.table``), named as a batch write to it is."""
    facts = table_facts(sink)
    name = str(facts.get("table_name", ""))
    parts = name.split(".")
    if len(parts) >= 3 and "/" not in name:
        facts.update(catalog=parts[0], namespace=parts[1:-1], name=parts[-1])
    return {**facts, "data_source": STREAM_TABLE}


def _write_stream_table(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    named = _named(facts, ctx)
    if named is None:
        return
    query = root.children[0] if root.children else None
    fields = schema_from_struct(facts.get("schema")) or schema_from_struct(facts.get("query_schema"))
    ds = CapturedDataset(*named, fields=fields, query=query)
    _decorate(ds, facts, ctx)
    # The table's version when the query starts is no version the stream wrote.
    ds.version = None
    visited.outputs.append(ds)
    visited.job_suffix = _suffix(facts, ds.name, use_table_name=True)


FAMILY = SourceFamily(
    name="DSv2 tables",
    lookups={
        "DataSourceV2Relation": v2_relation_facts,
        "DataSourceV2ScanRelation": scan_relation_facts,
        "StreamingRelationV2": streaming_relation_facts,
        "DropTable": dropped_table_facts,
        **dict.fromkeys(TABLE_WRITES, table_write_facts),
        **dict.fromkeys(TABLE_CREATES, create_facts),
        **dict.fromkeys(TABLE_ALTERS, alter_facts),
    },
    reads={
        "DataSourceV2Relation": read_v2_relation,
        "DataSourceV2ScanRelation": read_v2_relation,
        # A stream read of a v2 table (a Kafka topic, an Iceberg table) names it alike.
        "StreamingRelationV2": read_v2_relation,
    },
    writes={
        **dict.fromkeys(TABLE_WRITES, _write_table),
        **dict.fromkeys(TABLE_CREATES, _write_create),
        **dict.fromkeys(TABLE_ALTERS, _write_alter),
    },
    save_writes={STREAM_TABLE: _write_stream_table},
    stream_sinks={"SparkTable": stream_table_facts},
)
