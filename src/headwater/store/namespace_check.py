"""``headwater namespaces check``: datasets that look like one thing under two names.

A lineage graph splits when two producers spell one dataset differently. This
reads every dataset name in the store (and every symlink) and reports groups
that are probably one dataset, each with the namespace rule that would merge
them (docs/namespaces.md), so a platform team can fix the producers' configs
or add the rule:

* ``kafka``: one topic under two ``kafka://`` namespaces whose broker lists
  share a broker (``kafka://b1:9092`` and ``kafka://b2:9092,b1:9092``), or name
  no common broker (reported as *possibly* the same cluster: a mirrored topic
  has the same name on another cluster);
* ``s3``: one key under ``s3a://``/``s3n://`` and ``s3://`` of one bucket;
* ``trailing-slash``: one name with and without a trailing ``/``;
* ``symlink``: a dataset named by the catalog identifier (Hive/Glue table) that
  another dataset, its location, carries as a symlink.

Groups already merged by the store's rules do not appear: the rules map names
before they are stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.aliases import symlinks
from headwater.store.namespace_rules import NamespaceRules, kafka_brokers

__all__ = ["Suspect", "check"]


@dataclass(frozen=True)
class Suspect:
    """Datasets that look like one, why, and the rule that would merge them."""

    kind: str  # kafka | s3 | trailing-slash | symlink
    datasets: tuple[tuple[str, str], ...]  # (namespace, name), sorted
    reason: str
    rule: str  # a TOML snippet for the namespace rules file
    certain: bool = True  # False: possibly the same (a topic on two unrelated broker lists)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "certain": self.certain,
            "reason": self.reason,
            "rule": self.rule,
            "datasets": [
                {"namespace": ns, "name": name, "nodeId": f"dataset:{ns}:{name}"}
                for ns, name in self.datasets
            ],
        }


def check(conn: sa.Connection, rules: NamespaceRules | None = None) -> list[Suspect]:
    """Every group of stored datasets that look like one dataset, in a stable order.

    With the ``rules`` in force, a Kafka rule names the configured cluster to extend.
    """
    names = [
        (row.namespace, row.name)
        for row in conn.execute(
            sa.select(t.namespaces.c.name.label("namespace"), t.datasets.c.name).join(
                t.namespaces, t.namespaces.c.id == t.datasets.c.namespace_id
            )
        )
    ]
    found = _kafka(names, rules) + _s3(names) + _slashes(names) + _symlinked(conn, set(names))
    return sorted(found, key=lambda s: (s.kind, s.datasets))


def _kafka(names: list[tuple[str, str]], rules: NamespaceRules | None) -> list[Suspect]:
    # A cluster's own name is one of its spellings; only its listed brokers are shown.
    clusters = (
        {
            ns: [
                b
                for b, c in rules.kafka.items()
                if c == ns and b != f"{ns.removeprefix('kafka://').lower()}:9092"
            ]
            for ns in set(rules.kafka.values())
        }
        if rules is not None
        else {}
    )
    by_topic: dict[str, set[str]] = {}
    for namespace, name in names:
        if namespace.startswith("kafka://"):
            by_topic.setdefault(name, set()).add(namespace)
    out = []
    for topic, namespaces in by_topic.items():
        if len(namespaces) < 2:
            continue
        ordered = sorted(namespaces)
        brokers = [set(clusters.get(ns) or kafka_brokers(ns)) for ns in ordered]
        shared = any(a & b for i, a in enumerate(brokers) for b in brokers[i + 1 :])
        every = sorted(set().union(*brokers))
        listed = ", ".join(f'"{b}"' for b in every)
        configured = [ns.removeprefix("kafka://") for ns in ordered if ns in clusters]
        name = configured[0] if configured else "CLUSTER"
        rule = f'[[kafka.clusters]]\nname = "{name}"\nbrokers = [{listed}]'
        reason = f"topic {topic!r} under {len(ordered)} bootstrap spellings" + (
            ""
            if shared
            else " with no broker in common: one cluster only if these brokers are its members"
        )
        out.append(
            Suspect("kafka", tuple((ns, topic) for ns in ordered), reason, rule, certain=shared)
        )
    return out


def _s3(names: list[tuple[str, str]]) -> list[Suspect]:
    groups: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for namespace, name in names:
        for scheme in ("s3://", "s3a://", "s3n://"):
            if namespace.startswith(scheme):
                bucket = namespace[len(scheme) :]
                groups.setdefault((bucket, name), set()).add((namespace, name))
    return [
        Suspect(
            "s3",
            tuple(sorted(group)),
            f"s3://{bucket}/{name} under {len(group)} S3 schemes",
            "[s3]\naliases = true",
        )
        for (bucket, name), group in groups.items()
        if len(group) > 1
    ]


def _slashes(names: list[tuple[str, str]]) -> list[Suspect]:
    groups: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for namespace, name in names:
        if len(name) > 1:
            groups.setdefault((namespace, name.rstrip("/") or "/"), set()).add((namespace, name))
    return [
        Suspect(
            "trailing-slash",
            tuple(sorted(group)),
            f"{name!r} in {namespace} with and without a trailing slash",
            "[paths]\ntrim_trailing_slash = true",
        )
        for (namespace, name), group in groups.items()
        if len(group) > 1
    ]


def _symlinked(conn: sa.Connection, names: set[tuple[str, str]]) -> list[Suspect]:
    out = []
    for ident, dataset in symlinks(conn):
        if ident in names and ident != dataset:
            out.append(
                Suspect(
                    "symlink",
                    tuple(sorted({ident, dataset})),
                    f"{ident[0]} {ident[1]} is a dataset of its own and a symlink "
                    f"(catalog name) of {dataset[0]} {dataset[1]}",
                    "[symlinks]\nresolve = true",
                )
            )
    return out
