"""The Kafka family without a JVM: namespaces, consumer strategies, options, literal topics."""

from __future__ import annotations

from typing import Any

import pytest

from headwater.agent.plan import parse_plan
from headwater.agent.sources.kafka import (
    kafka_namespace,
    literal_topics,
    strategy_topics,
    topics_from_options,
)

_EXPR = "org.apache.spark.sql.catalyst.expressions."
_PLAN = "org.apache.spark.sql.catalyst.plans.logical."


@pytest.mark.parametrize(
    ("servers", "namespace"),
    [
        ("kafka-host:9092", "kafka://kafka-host:9092"),
        ("b1:9092, b2:9092", "kafka://b1:9092"),
        ("SASL_SSL://b1:9093,SASL_SSL://b2:9093", "kafka://b1:9093"),
        ("", None),
        (None, None),
    ],
)
def test_namespace_is_the_first_bootstrap_server(servers: str | None, namespace: str | None) -> None:
    assert kafka_namespace(servers) == namespace


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("Subscribe[topic1]", ("Subscribe", ["topic1"])),
        ("Subscribe[a, b.c, a]", ("Subscribe", ["a", "b.c"])),
        ("Assign[t-a-0, t-a-1, tb-0]", ("Assign", ["t-a", "tb"])),
        ("SubscribePattern[orders-.*]", ("SubscribePattern", ["orders-.*"])),
        ("Subscribe[]", ("Subscribe", [])),
        ("Something[x]", None),
        (None, None),
    ],
)
def test_strategy_topics(strategy: str | None, expected: Any) -> None:
    assert strategy_topics(strategy) == expected


def test_topics_from_options() -> None:
    assert topics_from_options({"Topic": "out"}) == ["out"]
    assert topics_from_options({"subscribe": "a, b,,a"}) == ["a", "b"]
    assert topics_from_options({"assign": '{"a": [0, 1], "b": [2]}'}) == ["a", "b"]
    assert topics_from_options({"subscribePattern": "a.*"}) == ["a.*"]
    assert topics_from_options({"assign": "not json"}) == []


def _attr(name: str, ident: int) -> list[dict[str, Any]]:
    return [{"class": _EXPR + "AttributeReference", "num-children": 0, "name": name,
             "dataType": "string", "exprId": {"id": ident}}]


def _alias(name: str, ident: int, child: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"class": _EXPR + "Alias", "num-children": 1, "child": 0, "name": name,
             "exprId": {"id": ident}}, *child]


def _literal(value: str) -> list[dict[str, Any]]:
    return [{"class": _EXPR + "Literal", "num-children": 0, "value": value, "dataType": "string"}]


def _project(columns: list[list[dict[str, Any]]]) -> dict[str, Any]:
    return {"class": _PLAN + "Project", "num-children": 1, "projectList": columns, "child": 0}


def _leaf(*names_ids: tuple[str, int]) -> dict[str, Any]:
    return {"class": _PLAN + "LocalRelation", "num-children": 0,
            "output": [_attr(n, i) for n, i in names_ids]}


def test_literal_topics_through_union_filter_and_renames() -> None:
    plan = parse_plan(
        [
            {"class": _PLAN + "Union", "num-children": 3, "byName": False},
            # 'a' AS topic
            _project([_alias("topic", 10, _literal("a")), _attr("value", 1)]),
            _leaf(("value", 1)),
            # a filter over a projection that renames a literal column
            _project([_attr("t", 20), _attr("value", 2)]),
            {"class": _PLAN + "Filter", "num-children": 1, "condition": _literal("true"), "child": 0},
            _project([_alias("t", 20, [{"class": _EXPR + "Cast", "num-children": 1, "child": 0},
                                       *_literal("b")]), _attr("value", 2)]),
            _leaf(("value", 2)),
            # the topic comes from the data: no name
            _project([_attr("topic", 3), _attr("value", 4)]),
            _leaf(("topic", 3), ("value", 4)),
        ]
    )
    assert literal_topics(plan) == ["a", "b"]


def test_no_topic_column_or_no_query_names_nothing() -> None:
    assert literal_topics(None) == []
    assert literal_topics(parse_plan([_leaf(("value", 1))])) == []
