"""Column lineage inside the SQL of a JDBC query read: titled SQL -> expected pairs, and
the JDBC family's read visitor on a recorded relation (no JVM).

Each expected column maps ``table.column`` to the ``type:subtype`` kinds reaching it;
``ROWS`` is what decides which rows come back (filters, joins, groupings, orderings).
"""

from __future__ import annotations

from typing import Any

import pytest

from headwater.agent.sources.jdbc_sql import sql_lineage, table_parts

D, T, A = "DIRECT:IDENTITY", "DIRECT:TRANSFORMATION", "DIRECT:AGGREGATION"

CASES: list[tuple[str, str, str | None, list[str], dict[str, Any]]] = [
    (
        "join of two tables, with a computed column",
        "select js1.k, CONCAT(js1.j1, js2.j2) as j from jdbc_source1 js1 join jdbc_source2 js2 on js1.k = js2.k",
        "postgres",
        ["k", "j"],
        {
            "tables": ["jdbc_source1", "jdbc_source2"],
            "k": {"jdbc_source1.k": [D]},
            "j": {"jdbc_source1.j1": [T], "jdbc_source2.j2": [T]},
            "ROWS": {"jdbc_source1.k": ["INDIRECT:JOIN"], "jdbc_source2.k": ["INDIRECT:JOIN"]},
        },
    ),
    (
        "a star over one table is expanded with the output names",
        "select * from public.orders where amount > 10",
        "postgres",
        ["id", "amount"],
        {
            "tables": ["public.orders"],
            "id": {"public.orders.id": [D]},
            "amount": {"public.orders.amount": [D]},
            "ROWS": {"public.orders.amount": ["INDIRECT:FILTER"]},
        },
    ),
    (
        "a qualified star next to other columns",
        "select o.*, c.name from orders o join customers c on o.cid = c.id",
        "postgres",
        ["id", "cid", "name"],
        {
            "id": {"orders.id": [D]},
            "cid": {"orders.cid": [D]},
            "name": {"customers.name": [D]},
        },
    ),
    (
        "a CTE with an aggregate, a union branch",
        "with c as (select k, sum(v) n from t group by k) select c.k, c.n * 2 as m from c union all select a, b from u",
        "postgres",
        ["k", "m"],
        {
            "tables": ["t", "u"],
            "k": {"t.k": [D], "u.a": [D]},
            "m": {"t.v": [A], "u.b": [D]},
            "ROWS": {"t.k": ["INDIRECT:GROUP_BY"]},
        },
    ),
    (
        "USING join keys belong to both sides; other bare columns of a join stay unknown",
        "select k, j1 || j2 as j from s1 join s2 using (k)",
        "postgres",
        ["k", "j"],
        {"k": {"s1.k": [D], "s2.k": [D]}, "j": {}},
    ),
    (
        "CASE conditions, masking, windows and scalar subqueries",
        "select case when x > 0 then y else z end as v, md5(s) h, "
        "sum(a) over (partition by b order by c) w, (select max(q) from t3) mq, count(r) n from t2",
        "postgres",
        ["v", "h", "w", "mq", "n"],
        {
            "v": {"t2.x": ["INDIRECT:CONDITIONAL"], "t2.y": [T], "t2.z": [T]},
            "h": {"t2.s": ["DIRECT:TRANSFORMATION:masking"]},
            "w": {"t2.a": [A], "t2.b": ["INDIRECT:WINDOW"], "t2.c": ["INDIRECT:WINDOW"]},
            "mq": {"t3.q": [A]},
            "n": {"t2.r": ["DIRECT:AGGREGATION:masking"]},
        },
    ),
    (
        "derived tables with renamed columns",
        "select * from (select a as b from t) x(c)",
        "postgres",
        ["c"],
        {"c": {"t.a": [D]}},
    ),
    (
        "a star over a join of tables cannot be split without their schemas",
        "select * from a join b on a.k = b.k",
        "postgres",
        ["k", "x"],
        {"k": {}, "x": {}},
    ),
    (
        "a star over a join of subqueries can",
        "select * from (select k, v from a) x join (select k2, w from b) y on x.k = y.k2",
        "postgres",
        ["k", "v", "k2", "w"],
        {"k": {"a.k": [D]}, "v": {"a.v": [D]}, "k2": {"b.k2": [D]}, "w": {"b.w": [D]}},
    ),
    (
        "IN subqueries filter",
        "select x.k from t1 x where x.k in (select k from t2 where flag)",
        "postgres",
        ["k"],
        {
            "k": {"t1.k": [D]},
            "ROWS": {"t1.k": ["INDIRECT:FILTER"], "t2.k": ["INDIRECT:FILTER"], "t2.flag": ["INDIRECT:FILTER"]},
        },
    ),
    (
        "PostgreSQL folds unquoted names to lower case and keeps quoted ones",
        'select "Id", Amount from "Sales"."Orders" order by Amount',
        "postgres",
        ["Id", "amount"],
        {
            "tables": ["Sales.Orders"],
            "Id": {"Sales.Orders.Id": [D]},
            "amount": {"Sales.Orders.amount": [D]},
            "ROWS": {"Sales.Orders.amount": ["INDIRECT:SORT"]},
        },
    ),
    (
        "Snowflake folds them to upper case",
        "select id from raw.orders",
        "snowflake",
        ["ID"],
        {"tables": ["RAW.ORDERS"], "ID": {"RAW.ORDERS.ID": [D]}},
    ),
    (
        "SQL Server keeps them as written",
        "select o.Id from dbo.[Order Lines] o",
        "tsql",
        ["Id"],
        {"tables": ["dbo.Order Lines"], "Id": {"dbo.Order Lines.Id": [D]}},
    ),
    (
        "ORDER BY an output alias reaches the columns behind it",
        "select a + b as total from t order by total",
        "mysql",
        ["total"],
        {"total": {"t.a": [T], "t.b": [T]}, "ROWS": {"t.a": ["INDIRECT:SORT"], "t.b": ["INDIRECT:SORT"]}},
    ),
]


def _flat(sources: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for (parts, column), kinds in sources.items():
        out[".".join((*parts, column))] = sorted(
            f"{k.type}:{k.subtype}" + (":masking" if k.masking else "") for k in kinds
        )
    return out


@pytest.mark.parametrize(("title", "sql", "dialect", "names", "expected"), CASES, ids=[c[0] for c in CASES])
def test_sql_lineage(title: str, sql: str, dialect: str | None, names: list[str], expected: dict[str, Any]) -> None:
    lineage = sql_lineage(sql, dialect, names)
    assert lineage is not None
    if "tables" in expected:
        assert [".".join(t) for t in lineage.tables] == expected["tables"]
    for name, column in zip(names, lineage.columns, strict=True):
        if name in expected:
            assert _flat(column) == expected[name], name
    if "ROWS" in expected:
        assert _flat(lineage.rows) == expected["ROWS"]


def test_unreadable_sql_gives_none() -> None:
    assert sql_lineage("select from where", "postgres", ["a"]) is None


@pytest.mark.parametrize(
    ("dbtable", "dialect", "parts"),
    [
        ("orders", "postgres", ("orders",)),
        ('"Sales".Orders', "postgres", ("Sales", "orders")),
        ("dbo.[Order Lines]", "tsql", ("dbo", "Order Lines")),
        ("`shop`.`orders`", "mysql", ("shop", "orders")),
        ("hr.employees", "oracle", ("HR", "EMPLOYEES")),
        ("a.b.c", None, ("a", "b", "c")),
    ],
)
def test_table_parts(dbtable: str, dialect: str | None, parts: tuple[str, ...]) -> None:
    assert table_parts(dbtable, dialect) == parts


# -- the JDBC family's visitors on a recorded relation (no JVM) ---------------------------


def _relation(*columns: tuple[str, str, int]) -> Any:
    from headwater.agent.plan import parse_plan

    output = [
        [
            {
                "class": "org.apache.spark.sql.catalyst.expressions.AttributeReference",
                "num-children": 0,
                "name": name,
                "dataType": type_,
                "nullable": True,
                "metadata": {},
                "exprId": {"product-class": "org.apache.spark.sql.catalyst.expressions.ExprId", "id": ident},
                "qualifier": [],
            }
        ]
        for name, type_, ident in columns
    ]
    return parse_plan(
        [
            {
                "class": "org.apache.spark.sql.execution.datasources.LogicalRelation",
                "num-children": 0,
                "relation": None,
                "output": output,
                "isStreaming": False,
            }
        ]
    )


def _read(table_or_query: str, url: str = "jdbc:postgresql://pg:5432/sales") -> list[Any]:
    from headwater.agent.sources import VisitContext
    from headwater.agent.sources.registry import read_datasets

    node = _relation(("k", "integer", 7), ("v", "string", 8))
    facts = {
        "relation_class": "org.apache.spark.sql.execution.datasources.jdbc.JDBCRelation",
        "jdbc_url": url,
        "jdbc_table": table_or_query,
        "jdbc_options": {},
    }
    return read_datasets(node, VisitContext(tree=node, node_facts={node.key: facts}))


def test_a_generated_subquery_is_read_as_its_sql() -> None:
    (read,) = _read("(SELECT id AS k, upper(name) AS v FROM public.users) SPARK_GEN_SUBQ_12")
    assert (read.namespace, read.name) == ("postgres://pg:5432", "sales.public.users")
    assert read.fields == [("id", "integer", []), ("name", "string", [])]
    assert {i: [(c, t.subtype) for c, t in s] for i, s in read.derived_attributes.items()} == {
        7: [("id", "IDENTITY")],
        8: [("name", "TRANSFORMATION")],
    }


@pytest.mark.parametrize(
    ("dbtable", "names"),
    [
        ("users", ["sales.users"]),
        ('"Sales Data"."Users"', ["sales.Sales Data.Users"]),
        ("users u JOIN groups g ON u.gid = g.id", ["sales.users", "sales.groups"]),
        ("(SELECT k, v FROM a UNION ALL SELECT k, v FROM b) AS ab", ["sales.a", "sales.b"]),
    ],
)
def test_dbtable_names_a_table_or_a_from_clause(dbtable: str, names: list[str]) -> None:
    assert [d.name for d in _read(dbtable)] == names


def test_unreadable_query_reads_nothing() -> None:
    assert _read("(SELEKT nonsense FROM) SPARK_GEN_SUBQ_1") == []
