"""Dataset namespace resolvers: parsed from ``spark.openlineage.dataset.namespaceResolvers.*``,
applied to every dataset an action emits."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from headwater.agent.actions import ActionCapture, action_events
from headwater.agent.capture import PlanCapture
from headwater.agent.config import AgentConfig
from headwater.agent.namespace_resolvers import (
    NamespaceResolver,
    parse_namespace_resolvers,
    resolve_namespace,
)
from headwater.agent.plan import parse_plan
from headwater.agent.run_model import RunModel
from headwater.agent.sources import VisitContext
from tests.agent.spec import validate_event

R = "spark.openlineage.dataset.namespaceResolvers."
CLUSTER = {
    f"{R}kafka-cluster-prod.type": "hostList",
    f"{R}kafka-cluster-prod.hosts": "[kafka-host;kafka-host-other]",
}


def test_host_list_replaces_the_host_and_keeps_scheme_and_port() -> None:
    (resolver,) = parse_namespace_resolvers(CLUSTER)
    assert resolver == NamespaceResolver("kafka-cluster-prod", "hostList", hosts=("kafka-host", "kafka-host-other"))
    assert resolver.resolve("kafka://kafka-host:9092") == "kafka://kafka-cluster-prod:9092"
    assert resolver.resolve("kafka://kafka-host-other:9093") == "kafka://kafka-cluster-prod:9093"
    assert resolver.resolve("kafka://KAFKA-HOST:9092") == "kafka://kafka-cluster-prod:9092"
    assert resolver.resolve("kafka://elsewhere:9092") == "kafka://elsewhere:9092"
    # Not only Kafka: the listener resolves every dataset namespace.
    assert resolver.resolve("postgres://kafka-host:5432") == "postgres://kafka-cluster-prod:5432"


def test_host_list_without_brackets_and_with_a_schema() -> None:
    (resolver,) = parse_namespace_resolvers(
        {f"{R}pg.type": "hostList", f"{R}pg.hosts": "db1; db2", f"{R}pg.schema": "postgres"}
    )
    assert resolver.hosts == ("db1", "db2")
    assert resolver.resolve("postgres://db2:5432") == "postgres://pg:5432"
    assert resolver.resolve("mysql://db2:3306") == "mysql://db2:3306"


def test_pattern_and_pattern_group() -> None:
    resolvers = parse_namespace_resolvers(
        {
            f"{R}warehouse.type": "pattern",
            f"{R}warehouse.regex": r"db\d+\.example\.com",
            f"{R}by-group.type": "patternGroup",
            f"{R}by-group.regex": r"(?<cluster>[a-z]+)-\d+\.kafka\.internal",
            f"{R}by-group.matchingGroup": "cluster",
        }
    )
    assert [r.name for r in resolvers] == ["by-group", "warehouse"]
    assert resolve_namespace("postgres://db7.example.com:5432", resolvers) == "postgres://warehouse:5432"
    assert resolve_namespace("kafka://orders-3.kafka.internal:9092", resolvers) == "kafka://orders:9092"
    assert resolve_namespace("file", resolvers) == "file"


def test_the_first_resolver_that_changes_the_namespace_wins() -> None:
    resolvers = parse_namespace_resolvers(
        {**CLUSTER, f"{R}a-first.type": "hostList", f"{R}a-first.hosts": "kafka-host"}
    )
    assert resolve_namespace("kafka://kafka-host:9092", resolvers) == "kafka://a-first:9092"


@pytest.mark.parametrize(
    "conf",
    [
        {f"{R}x.type": "dns"},
        {f"{R}x.type": "hostList"},
        {f"{R}x.type": "pattern", f"{R}x.regex": "("},
        {f"{R}x.hosts": "a;b"},
    ],
)
def test_incomplete_resolvers_are_logged_and_left_out(
    conf: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert parse_namespace_resolvers(conf) == ()
    assert "namespace resolver 'x'" in caplog.text


def test_the_agent_config_carries_the_resolvers() -> None:
    assert AgentConfig.from_sources({}, {}).namespace_resolvers == ()
    config = AgentConfig.from_sources(CLUSTER, {})
    assert [r.name for r in config.namespace_resolvers] == ["kafka-cluster-prod"]


def test_resolvers_from_the_listeners_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "openlineage.yml"
    path.write_text(
        "dataset:\n"
        "  namespaceResolvers:\n"
        "    kafka-cluster-prod:\n"
        "      type: hostList\n"
        "      hosts: [kafka-host, kafka-host-other]\n"
    )
    (resolver,) = AgentConfig.from_sources({}, {"OPENLINEAGE_CONFIG": str(path)}).namespace_resolvers
    assert resolver.hosts == ("kafka-host", "kafka-host-other")
    assert resolver.resolve("kafka://kafka-host-other:9092") == "kafka://kafka-cluster-prod:9092"


def _kafka_write_capture(bootstrap: str) -> PlanCapture:
    tree = parse_plan(
        [
            {
                "class": "org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand",
                "num-children": 0,
                "query": [
                    {
                        "class": "org.apache.spark.sql.catalyst.plans.logical.LocalRelation",
                        "num-children": 0,
                        "output": [
                            [
                                {
                                    "class": "org.apache.spark.sql.catalyst.expressions.AttributeReference",
                                    "num-children": 0,
                                    "name": "value",
                                    "dataType": "string",
                                    "exprId": {"id": 1},
                                }
                            ]
                        ],
                    }
                ],
            }
        ]
    )
    facts = {
        "root": {
            "options": {"kafka.bootstrap.servers": bootstrap, "topic": "orders"},
            "mode": "Append",
            "data_source": "org.apache.spark.sql.kafka010.KafkaSourceProvider",
            "query_schema": {"type": "struct", "fields": [{"name": "value", "type": "string"}]},
        }
    }
    return PlanCapture(tree, facts)


def test_resolvers_apply_to_the_datasets_of_an_action() -> None:
    plan = _kafka_write_capture("kafka-host-other:9092,kafka-host:9092")
    capture = ActionCapture("save", plan, start_time=1_700_000_000.0, end_time=1_700_000_001.0)
    model = RunModel(AgentConfig.from_sources(CLUSTER, {}), "app", "4.0.1", "0.1.0")
    events = action_events(capture, model, VisitContext(tree=plan.tree, node_facts=plan.facts))
    for event in events:
        validate_event(event)
    (output,) = events[-1]["outputs"]
    assert (output["namespace"], output["name"]) == ("kafka://kafka-cluster-prod:9092", "orders")
    assert output["facets"]["dataSource"]["uri"] == "kafka://kafka-cluster-prod:9092"
    assert output["facets"]["datasetType"]["datasetType"] == "TOPIC"
    assert output["facets"]["schema"]["fields"] == [{"name": "value", "type": "string"}]
    # Without resolvers the first bootstrap server names the cluster.
    plain = RunModel(AgentConfig.from_sources({}, {}), "app", "4.0.1", "0.1.0")
    plan = _kafka_write_capture("kafka-host-other:9092,kafka-host:9092")
    (output,) = action_events(capture, plain, VisitContext(tree=plan.tree, node_facts=plan.facts))[-1]["outputs"]
    assert output["namespace"] == "kafka://kafka-host-other:9092"
