"""Column lineage from exprIds on plan JSON in Spark's toJSON() shape (no JVM).

The builders below write entries exactly as ``LogicalPlan.toJSON()`` does
(pre-order arrays, child positions as integers); recorded real plans are
covered in test_plan_fixtures.py.
"""

from __future__ import annotations

from typing import Any

from headwater.agent.columns import column_lineage, node_output
from headwater.agent.plan import parse_plan

E = "org.apache.spark.sql.catalyst.expressions."
L = "org.apache.spark.sql.catalyst.plans.logical."


def attr(name: str, ident: int, type_: str = "integer") -> list[dict[str, Any]]:
    return [
        {
            "class": E + "AttributeReference",
            "num-children": 0,
            "name": name,
            "dataType": type_,
            "nullable": True,
            "metadata": {},
            "exprId": {"product-class": E + "ExprId", "id": ident, "jvmId": "x"},
            "qualifier": [],
        }
    ]


def fn(cls: str, *children: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [{"class": E + cls, "num-children": len(children)}]
    for child in children:
        out.extend(child)
    return out


def lit(value: str) -> list[dict[str, Any]]:
    return [{"class": E + "Literal", "num-children": 0, "value": value, "dataType": "string"}]


def alias(name: str, ident: int, child: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = {
        "class": E + "Alias",
        "num-children": 1,
        "child": 0,
        "name": name,
        "exprId": {"product-class": E + "ExprId", "id": ident, "jvmId": "x"},
    }
    return [head, *child]


def agg(function: str, child: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return fn("aggregate.AggregateExpression", fn("aggregate." + function, child))


def relation(*columns: tuple[str, int]) -> list[dict[str, Any]]:
    return [
        {
            "class": "org.apache.spark.sql.execution.datasources.LogicalRelation",
            "num-children": 0,
            "relation": None,
            "output": [attr(name, ident) for name, ident in columns],
        }
    ]


def node(cls: str, children: list[list[dict[str, Any]]], **fields: Any) -> list[dict[str, Any]]:
    out = [{"class": L + cls, "num-children": len(children), **fields}]
    for child in children:
        out.extend(child)
    return out


SRC = {1: ("file", "/src", "k"), 2: ("file", "/src", "v"), 3: ("file", "/src", "g")}
OTHER = {11: ("file", "/other", "k"), 12: ("file", "/other", "w")}


def lineage(plan: list[dict[str, Any]], names: list[str], leaves=SRC, dataset=False):
    return column_lineage(parse_plan(plan), names, leaves, dataset_lineage=dataset)


def kinds(
    fields: dict[str, Any], column: str, source: str, dataset: str = "/src"
) -> set[tuple[str, str, bool]]:
    for item in fields[column]:
        if item["field"] == source and item["name"] == dataset:
            return {(t["type"], t["subtype"], t["masking"]) for t in item["transformations"]}
    raise AssertionError(f"{source} not an input of {column}")


def test_identity_transformation_masking_and_filter() -> None:
    plan = node(
        "Project",
        [
            node(
                "Filter",
                [relation(("k", 1), ("v", 2))],
                condition=fn("GreaterThan", attr("k", 1), lit("1")),
            )
        ],
        projectList=[attr("k", 1), alias("u", 20, fn("Upper", attr("v", 2))), alias("h", 21, fn("Md5", attr("v", 2)))],
    )
    fields, dataset = lineage(plan, ["k", "u", "h"])
    assert dataset == []
    assert kinds(fields, "k", "k") == {("DIRECT", "IDENTITY", False), ("INDIRECT", "FILTER", False)}
    assert kinds(fields, "u", "v") == {("DIRECT", "TRANSFORMATION", False)}
    assert kinds(fields, "h", "v") == {("DIRECT", "TRANSFORMATION", True)}
    # The filter's column affects every written column.
    assert kinds(fields, "u", "k") == {("INDIRECT", "FILTER", False)}


def test_aggregation_group_by_and_count_masks() -> None:
    plan = node(
        "Aggregate",
        [relation(("k", 1), ("v", 2), ("g", 3))],
        groupingExpressions=[attr("g", 3)],
        aggregateExpressions=[
            attr("g", 3),
            alias("total", 30, agg("Sum", attr("k", 1))),
            alias("n", 31, agg("Count", attr("v", 2))),
        ],
    )
    fields, _ = lineage(plan, ["g", "total", "n"])
    assert kinds(fields, "total", "k") == {("DIRECT", "AGGREGATION", False)}
    assert ("DIRECT", "AGGREGATION", True) in kinds(fields, "n", "v")
    assert kinds(fields, "total", "g") == {("INDIRECT", "GROUP_BY", False)}
    assert kinds(fields, "g", "g") == {("DIRECT", "IDENTITY", False), ("INDIRECT", "GROUP_BY", False)}


def test_join_sort_window_and_conditional() -> None:
    join = node(
        "Join",
        [relation(("k", 1), ("v", 2)), relation(("k", 11), ("w", 12))],
        joinType={"object": "org.apache.spark.sql.catalyst.plans.Inner$"},
        condition=fn("EqualTo", attr("k", 1), attr("k", 11)),
    )
    window = node(
        "Window",
        [join],
        windowExpressions=[alias("rn", 40, fn("RowNumber"))],
        partitionSpec=[attr("v", 2)],
        orderSpec=fn("SortOrder", attr("w", 12)),
    )
    project = node(
        "Project",
        [window],
        projectList=[
            alias("pick", 41, fn("If", fn("GreaterThan", attr("k", 1), lit("1")), attr("v", 2), attr("w", 12))),
            attr("rn", 40),
        ],
    )
    plan = node("Sort", [project], order=fn("SortOrder", attr("pick", 41)), **{"global": True})
    fields, _ = lineage(plan, ["pick", "rn"], {**SRC, **OTHER})
    assert ("DIRECT", "TRANSFORMATION", False) in kinds(fields, "pick", "v")
    assert ("INDIRECT", "CONDITIONAL", False) in kinds(fields, "pick", "k")
    assert ("INDIRECT", "JOIN", False) in kinds(fields, "rn", "k")
    assert ("INDIRECT", "WINDOW", False) in kinds(fields, "rn", "v")
    # Sorting by pick sorts by what pick is computed from.
    assert ("INDIRECT", "SORT", False) in kinds(fields, "rn", "w", "/other")
    assert ("INDIRECT", "JOIN", False) in kinds(fields, "rn", "k", "/other")


def test_union_columns_come_from_every_branch_and_dataset_lineage() -> None:
    plan = node(
        "Union",
        [
            relation(("k", 1), ("v", 2)),
            node("Filter", [relation(("k", 11), ("w", 12))], condition=fn("IsNotNull", attr("w", 12))),
        ],
    )
    assert node_output(parse_plan(plan)) == [1, 2]
    fields, dataset = lineage(plan, ["k", "v"], {**SRC, **OTHER}, dataset=True)
    assert {(i["name"], i["field"]) for i in fields["v"]} == {("/src", "v"), ("/other", "w")}
    # With datasetLineageEnabled, indirect lineage goes to the dataset, not each field.
    assert [(i["field"], i["transformations"][0]["subtype"]) for i in dataset] == [("w", "FILTER")]
    assert all(t["type"] == "DIRECT" for i in fields["v"] for t in i["transformations"])


def test_descriptions_are_spark_sql_text() -> None:
    t1a = attr("a", 1)
    t1a[0]["qualifier"] = "[t1]"
    t1b = attr("b", 2, "string")
    t1b[0]["qualifier"] = ["t1"]
    src2 = attr("a", 11)
    src2[0]["qualifier"] = "[spark_catalog, default, cll_source2]"
    t2a = attr("a", 11)
    t2a[0]["qualifier"] = "[t2]"
    join = node(
        "Join",
        [
            relation(("a", 1), ("b", 2)),
            node(
                "Filter",
                [relation(("a", 11), ("c", 12))],
                condition=fn("And", fn("IsNotNull", src2), fn("GreaterThan", src2, [{**lit("1")[0], "dataType": "integer"}])),
            ),
        ],
        joinType={"object": "org.apache.spark.sql.catalyst.plans.Inner$"},
        condition=fn("EqualTo", t1a, t2a),
    )
    plan = node(
        "Aggregate",
        [join],
        groupingExpressions=[t1a, t1b],
        aggregateExpressions=[alias("ident", 30, t1a), alias("trans", 31, fn("Concat", t1b, lit("test")))],
    )
    fields, _ = lineage(plan, ["ident", "trans"], {1: ("file", "/s1", "a"), 2: ("file", "/s1", "b"), 11: ("file", "/s2", "a")})
    ident_a = next(i for i in fields["ident"] if i["name"] == "/s1" and i["field"] == "a")
    descriptions = {t["subtype"]: t.get("description") for t in ident_a["transformations"]}
    assert descriptions["IDENTITY"] == "t1.a AS ident"
    assert descriptions["GROUP_BY"] == "GROUP BY t1.a, t1.b"
    assert descriptions["JOIN"] == "INNER JOIN ON (t1.a = t2.a)"
    trans_b = next(i for i in fields["trans"] if i["field"] == "b")
    assert {"type": "DIRECT", "subtype": "TRANSFORMATION", "description": "concat(t1.b, 'test') AS trans", "masking": False} in trans_b["transformations"]
    s2 = next(i for i in fields["trans"] if i["name"] == "/s2")
    assert {t.get("description") for t in s2["transformations"]} == {
        "INNER JOIN ON (t1.a = t2.a)",
        "WHERE ((spark_catalog.default.cll_source2.a IS NOT NULL) AND (spark_catalog.default.cll_source2.a > 1))",
    }


def test_generate_columns_come_from_the_generator_input() -> None:
    generate = node(
        "Generate",
        [relation(("v", 2))],
        generator=fn("Explode", fn("StringSplit", attr("v", 2), lit(" "), lit("-1"))),
        generatorOutput=[attr("word", 50, "string")],
    )
    plan = node(
        "Aggregate",
        [generate],
        groupingExpressions=[attr("word", 50, "string")],
        aggregateExpressions=[attr("word", 50, "string"), alias("count", 51, agg("Count", lit("1")))],
    )
    fields, _ = lineage(plan, ["word", "count"])
    assert ("DIRECT", "TRANSFORMATION", False) in kinds(fields, "word", "v")
    assert kinds(fields, "count", "v") == {("INDIRECT", "GROUP_BY", False)}


def scalar_subquery(plan: list[dict[str, Any]], ident: int) -> list[dict[str, Any]]:
    """A ``ScalarSubquery`` entry: its plan is held inline, it has no children."""
    return [
        {
            "class": E + "ScalarSubquery",
            "num-children": 0,
            "plan": plan,
            "outerAttrs": [],
            "exprId": {"product-class": E + "ExprId", "id": ident, "jvmId": "x"},
            "joinCond": [],
        }
    ]


def test_scalar_subquery_in_a_projection_is_direct_and_in_a_filter_indirect() -> None:
    # SELECT k, (SELECT max(w) FROM other) AS m FROM src WHERE v > (SELECT max(k) FROM other WHERE w > 1)
    max_w = node("Aggregate", [relation(("k", 11), ("w", 12))], groupingExpressions=[],
                 aggregateExpressions=[alias("max(w)", 60, agg("Max", attr("w", 12)))])
    max_k = node(
        "Aggregate",
        [node("Filter", [relation(("k", 11), ("w", 12))], condition=fn("GreaterThan", attr("w", 12), lit("1")))],
        groupingExpressions=[],
        aggregateExpressions=[alias("max(k)", 61, agg("Max", attr("k", 11)))],
    )
    plan = node(
        "Project",
        [node("Filter", [relation(("k", 1), ("v", 2))],
              condition=fn("GreaterThan", attr("v", 2), scalar_subquery(max_k, 71)))],
        projectList=[attr("k", 1), alias("m", 62, scalar_subquery(max_w, 70))],
    )
    tree = parse_plan(plan)
    assert {key for n in tree.walk() for key in n.inner} == {"subquery:0"}
    assert {n.path for n in tree.walk() if n.cls == "Aggregate"} == {
        (("subquery", 0),),
        (("child", 0), ("subquery", 0)),
    }
    fields, _ = lineage(plan, ["k", "m"], {**SRC, **OTHER})
    assert kinds(fields, "m", "w", "/other") == {("DIRECT", "AGGREGATION", False), ("INDIRECT", "FILTER", False)}
    # The filter compares with the subquery's max(k), filtered on w: both INDIRECT for every column.
    assert kinds(fields, "k", "k", "/other") == {("INDIRECT", "FILTER", False)}
    assert ("INDIRECT", "FILTER", False) in kinds(fields, "k", "w", "/other")
    assert kinds(fields, "k", "v") == {("INDIRECT", "FILTER", False)}
    assert kinds(fields, "k", "k") == {("DIRECT", "IDENTITY", False)}


def test_merged_scalar_subqueries_pick_their_struct_field() -> None:
    # Spark merges (SELECT max(k) ...) and (SELECT max(w) ...) over one relation into
    # one plan returning named_struct(...); each use reads one field of it.
    merged = node(
        "Project",
        [node("Aggregate", [relation(("k", 11), ("w", 12))], groupingExpressions=[],
              aggregateExpressions=[alias("max(k)", 60, agg("Max", attr("k", 11))),
                                    alias("max(w)", 61, agg("Max", attr("w", 12)))])],
        projectList=[alias("mergedValue", 63, fn("CreateNamedStruct", lit("max(k)"), attr("max(k)", 60),
                                                 lit("max(w)"), attr("max(w)", 61)))],
    )

    def field(ordinal: int) -> list[dict[str, Any]]:
        return [{"class": E + "GetStructField", "num-children": 1, "child": 0, "ordinal": ordinal},
                *scalar_subquery(merged, 70)]

    plan = node("Project", [relation(("k", 1))],
                projectList=[alias("mk", 64, field(0)), alias("mw", 65, field(1))])
    fields, _ = lineage(plan, ["mk", "mw"], {**SRC, **OTHER})
    assert {(i["name"], i["field"]) for i in fields["mk"]} == {("/other", "k")}
    assert {(i["name"], i["field"]) for i in fields["mw"]} == {("/other", "w")}
    assert kinds(fields, "mw", "w", "/other") == {("DIRECT", "AGGREGATION", False)}
