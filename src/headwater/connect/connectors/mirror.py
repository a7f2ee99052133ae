"""MirrorMaker 2 on Connect: ``MirrorSourceConnector`` copies topics of the source
cluster (``source.cluster.bootstrap.servers``) to the target cluster
(``target.cluster.bootstrap.servers``, else the worker's own cluster).

Inputs are the source cluster's topics ``topics`` selects (regexes,
``.*`` by default) minus ``topics.exclude`` (MirrorMaker's default: internal,
``.replica`` and ``__`` topics), listed on the source cluster; outputs are
their names on the target under the replication policy: ``DefaultReplicationPolicy``
prefixes ``<source.cluster.alias><separator>`` (``.`` unless
``replication.policy.separator`` says otherwise), ``IdentityReplicationPolicy``
keeps the name. Topics the connector reports having written are mapped back to
their source topic the same way. Tested on a real worker (Apache Kafka's
``connect-mirror``) and by configuration parsing.
"""

from __future__ import annotations

from headwater.connect.connectors.base import (
    Connector,
    Lineage,
    NamingContext,
    listed,
    matching,
    topic_datasets,
    worker_bootstrap,
)
from headwater.naming import kafka_namespace

__all__ = ["mirror_source"]

_DEFAULT_EXCLUDE = [r".*[\-\.]internal", r".*\.replica", r"__.*"]


def mirror_source(connector: Connector, ctx: NamingContext) -> Lineage:
    config = connector.config
    source = config.get("source.cluster.bootstrap.servers", "").strip() or None
    target = config.get("target.cluster.bootstrap.servers", "").strip() or worker_bootstrap(
        connector, ctx
    )
    alias = config.get("source.cluster.alias", "source").strip()
    separator = config.get("replication.policy.separator", ".")
    identity = config.get("replication.policy.class", "").endswith("IdentityReplicationPolicy")
    prefix = "" if identity else f"{alias}{separator}"

    include = listed(config.get("topics")) or [".*"]
    exclude = (
        listed(config.get("topics.exclude") or config.get("topics.blacklist")) or _DEFAULT_EXCLUDE
    )
    candidates = ctx.topics_of(source)
    chosen = [t for t in matching(include, candidates) if t not in matching(exclude, [t])]
    # Literal topic names in ``topics`` are known even when the source cannot be listed.
    chosen += [t for t in include if t.replace(".", "").replace("-", "").replace("_", "").isalnum()]
    chosen += [t[len(prefix) :] for t in connector.active_topics if t.startswith(prefix)]
    chosen = list(dict.fromkeys(chosen))
    inputs = topic_datasets(kafka_namespace(source), chosen, config)
    outputs = topic_datasets(kafka_namespace(target), [prefix + t for t in chosen], config)
    return Lineage("mirrormaker2", inputs, outputs)
