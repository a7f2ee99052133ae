"""The namespace rules as pure functions: reading a rules file, mapping names."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from headwater.errors import ConfigError
from headwater.store.namespace_rules import (
    NamespaceRules,
    Normaliser,
    kafka_brokers,
    load_rules,
    parse_rules,
)

RULES = """
[s3]
aliases = true

[paths]
trim_trailing_slash = true

[[kafka.clusters]]
name = "orders-cluster"
brokers = ["b1.example:9092", "b2.example:9092", "B3.example"]

[[rename]]
namespace = "hive://metastore:9083"
name = "sales.orders"
to_namespace = "s3://lake"
to_name = "warehouse/sales/orders"

[[rename]]
namespace = "legacy"
to_namespace = "file"

[symlinks]
resolve = true
"""


@pytest.fixture(scope="module")
def rules() -> NamespaceRules:
    return parse_rules(RULES, "rules.toml")


@pytest.mark.parametrize(
    "namespace",
    [
        "kafka://b1.example:9092",
        "kafka://b2.example:9092",
        "kafka://b3.example:9092",
        "kafka://B1.EXAMPLE:9092",
        "kafka://b2.example:9092,b1.example:9092",
        "kafka://SASL_SSL://b1.example:9092",
        "kafka://PLAINTEXT://b9.example:9092,b3.example",
        "kafka://orders-cluster",
    ],
)
def test_every_spelling_of_a_cluster_is_its_name(rules: NamespaceRules, namespace: str) -> None:
    assert rules.dataset((namespace, "orders")) == ("kafka://orders-cluster", "orders")


def test_other_clusters_and_other_names_are_left_as_sent(rules: NamespaceRules) -> None:
    assert rules.dataset(("kafka://b9.example:9092", "t")) == ("kafka://b9.example:9092", "t")
    assert rules.dataset(("s3://lake", "a/b")) == ("s3://lake", "a/b")
    assert rules.dataset(("file", "/")) == ("file", "/")


def test_s3_slashes_and_renames(rules: NamespaceRules) -> None:
    assert rules.dataset(("s3a://lake", "raw/orders/")) == ("s3://lake", "raw/orders")
    assert rules.dataset(("s3n://lake", "raw/orders")) == ("s3://lake", "raw/orders")
    assert rules.dataset(("hive://metastore:9083", "sales.orders")) == (
        "s3://lake",
        "warehouse/sales/orders",
    )
    assert rules.dataset(("hive://metastore:9083", "sales.other")) == (
        "hive://metastore:9083",
        "sales.other",
    )
    assert rules.dataset(("legacy", "/data/x/")) == ("file", "/data/x")


def test_no_rule_changes_nothing_and_every_flag_is_off_by_default() -> None:
    empty = parse_rules("")
    for key in [("s3a://b", "k/"), ("kafka://b1:9092,b2:9092", "t"), ("x", "y")]:
        assert empty.dataset(key) == key
    assert empty.fingerprint != parse_rules("[s3]\naliases = true").fingerprint


def test_the_fingerprint_is_of_the_meaning_not_the_layout() -> None:
    one = parse_rules('[[kafka.clusters]]\nname = "c"\nbrokers = ["a:1", "b:2"]\n')
    two = parse_rules('# comment\n[[kafka.clusters]]\nbrokers = ["b:2", "a:1"]\nname = "c"\n')
    assert one.fingerprint == two.fingerprint


def test_kafka_brokers_reads_every_spelling() -> None:
    assert kafka_brokers("kafka://SASL_SSL://B1:9093, b2") == ["b1:9093", "b2:9092"]


def test_symlinks_map_a_catalog_name_to_its_location_whatever_the_order(
    rules: NamespaceRules,
) -> None:
    location = {
        "namespace": "s3a://lake",
        "name": "tables/customers/",
        "facets": {
            "symlinks": {
                "identifiers": [
                    {
                        "namespace": "glue://arn:aws:glue:eu-west-1:1",
                        "name": "db.customers",
                        "type": "TABLE",
                    }
                ]
            }
        },
    }
    table = {"namespace": "glue://arn:aws:glue:eu-west-1:1", "name": "db.customers"}
    events = [{"inputs": [table]}, {"outputs": [location]}]
    for order in itertools.permutations(events):
        names = Normaliser(rules)
        names.learn(order)
        assert names.dataset(("glue://arn:aws:glue:eu-west-1:1", "db.customers")) == (
            "s3://lake",
            "tables/customers",
        )
        # The identifier itself is a name, mapped by the pure rules only.
        assert names.symlink(("glue://arn:aws:glue:eu-west-1:1", "db.customers")) == (
            "glue://arn:aws:glue:eu-west-1:1",
            "db.customers",
        )


def test_two_locations_claiming_one_table_pick_the_same_one_in_any_order(
    rules: NamespaceRules,
) -> None:
    def carrying(name: str) -> dict[str, object]:
        return {
            "outputs": [
                {
                    "namespace": "s3://lake",
                    "name": name,
                    "facets": {
                        "symlinks": {
                            "identifiers": [{"namespace": "hive", "name": "db.t", "type": "TABLE"}]
                        }
                    },
                }
            ]
        }

    answers = set()
    for order in itertools.permutations([carrying("b"), carrying("a")]):
        names = Normaliser(rules)
        names.learn(order)
        answers.add(names.dataset(("hive", "db.t")))
    assert answers == {("s3://lake", "a")}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[s3]\naliases = 1\n", "s3.aliases"),
        ("[s3]\nalias = true\n", "s3.alias"),
        ("[paths]\ntrim_trailing_slash = 'yes'\n", "paths.trim_trailing_slash"),
        ("[[kafka.clusters]]\nbrokers = ['a:1']\n", "kafka.clusters[0].name"),
        ("[[kafka.clusters]]\nname = 'c'\n", "kafka.clusters[0].brokers"),
        (
            "[[kafka.clusters]]\nname = 'c'\nbrokers = ['a:1', 'bad host']\n",
            "kafka.clusters[0].brokers[1]",
        ),
        (
            "[[kafka.clusters]]\nname = 'c'\nbrokers = ['a:1']\n"
            "[[kafka.clusters]]\nname = 'd'\nbrokers = ['A:1']\n",
            "kafka.clusters[1].brokers[0]",
        ),
        ("[[kafka.clusters]]\nname = 'c/d'\nbrokers = ['a:1']\n", "kafka.clusters[0].name"),
        ("[[rename]]\nnamespace = 'a'\n", "rename[0].to_namespace"),
        ("[[rename]]\nnamespace = 'a'\nto_namespace = 'b'\nto_name = 'x'\n", "rename[0].to_name"),
        (
            "[[rename]]\nnamespace = 'a'\nto_namespace = 'b'\n"
            "[[rename]]\nnamespace = 'a'\nto_namespace = 'c'\n",
            "rename[1]",
        ),
        ("rename = 'x'\n", "rename"),
        ("kafka = 3\n", "kafka"),
        ("unknown = true\n", "unknown"),
    ],
)
def test_a_bad_rule_is_refused_naming_its_field(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_rules(text, "rules.toml")
    assert str(caught.value).startswith(f"rules.toml: {where}: ")


def test_bad_toml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text("[s3]\naliases = true\n[paths\n")
    with pytest.raises(ConfigError, match=r"rules.toml: not valid TOML: .*line 3"):
        load_rules(path)
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_rules(tmp_path / "missing.toml")
