"""Kafka topics: batch reads and writes through Spark's ``kafka`` data source.

Named as the OpenLineage naming spec names topics: the namespace is
``kafka://<host:port>`` of the **first** bootstrap server (as the listener does,
so every client of one cluster names it alike; a namespace resolver can name the
cluster instead), the name is the topic; ``datasetType`` is ``TOPIC`` and the
schema is the relation's columns (``key``, ``value``, ``topic``, ``partition``,
``offset``, ``timestamp``, ``timestampType``, and ``headers`` when asked for).

Reads, ``spark.read.format("kafka")``:

- by default (``kafka`` is in ``spark.sql.sources.useV1SourceList``) a
  ``LogicalRelation`` over a ``KafkaRelation``. Its consumer strategy and
  source options are private constructor fields with no accessor; they are
  read by reflection (:func:`_private_fields`), the only reach into Spark's
  internals here. Should the fields be renamed, the look-up raises, the capture
  logs it, and the read names no dataset.
- ``subscribe`` and ``assign``: one dataset per topic (``assign`` lists topics
  with partitions; each topic once).
- ``subscribePattern``: the topics that matched are known only to the scan
  that ran (Spark asks the broker when it plans the scan); asking the broker
  again from the listener would cost a network round trip per action and may
  disagree with what was read. The dataset is named by the **pattern** itself
  (``kafka://host:port`` + ``topic.*``): one node per pattern, its text the
  regex, never a topic that was not read. Kafka topic names cannot hold regex
  characters such as ``*`` or ``[``, so such a name never collides with a topic.
- With ``kafka`` taken out of ``useV1SourceList`` the read is a DSv2 scan of a
  ``KafkaTable`` (and a write an ``AppendData`` to one), whose options live on
  the relation, not on the table: :func:`datasets_from_options`, registered as
  the table's ``v2_option_datasets``, names the topics from the relation's
  options (a write's ``topic`` option; a DSv2 write by ``topic`` column names
  none, as its query is not handed over).

Writes, ``df.write.format("kafka")``: a ``SaveIntoDataSourceCommand`` over
``KafkaSourceProvider``. With a ``topic`` option, that topic (the option wins
over a ``topic`` column, as in Spark). Without one, each row names its topic in
its ``topic`` column: the plan names a topic only where that column is a
literal (``lit("orders")``, ``'orders' AS topic``); each such literal is an
output dataset, and topics computed from the data name no dataset — the write
then has no output rather than a made-up one.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from headwater.agent.plan import Expr, PlanNode
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    column_names_by_id,
    schema_from_attributes,
    schema_from_struct,
    written_query,
)
from headwater.agent.sources.family import SourceFamily
from headwater.agent.sources.jvm_common import option
from headwater.agent.sources.kafka_schemas import written_value_fields
from headwater.naming import kafka_namespace

__all__ = [
    "FAMILY",
    "datasets_from_options",
    "kafka_namespace",
    "literal_topics",
    "strategy_topics",
    "stream_sink_facts",
    "topic_datasets",
    "topics_from_options",
]

logger = logging.getLogger(__name__)

_BOOTSTRAP = "kafka.bootstrap.servers"


# Spark's ConsumerStrategy.toString: Subscribe[a, b], SubscribePattern[re], Assign[a-0, b-3].
_STRATEGY = re.compile(r"^(Subscribe|SubscribePattern|Assign)\[(.*)\]$", re.DOTALL)


def strategy_topics(strategy: str | None) -> tuple[str, list[str]] | None:
    """``(kind, names)`` from a consumer strategy's text: the topics of ``Subscribe``
    and ``Assign`` (each once, in order), the pattern of ``SubscribePattern``."""
    if not strategy:
        return None
    match = _STRATEGY.match(strategy.strip())
    if match is None:
        return None
    kind, body = match.group(1), match.group(2)
    if kind == "SubscribePattern":
        return kind, [body] if body else []
    items = [item.strip() for item in body.split(",") if item.strip()]
    if kind == "Assign":
        # A TopicPartition prints as <topic>-<partition>; topic names may hold '-'.
        items = [item.rsplit("-", 1)[0] if re.search(r"-\d+$", item) else item for item in items]
    return kind, list(dict.fromkeys(items))


def topics_from_options(options: Mapping[str, str]) -> list[str]:
    """Topics named by a read's or write's options (case-insensitive keys):
    ``topic``, ``subscribe`` (comma-separated), ``assign`` (JSON ``{topic: [partitions]}``),
    else the ``subscribePattern`` pattern."""
    lowered = {str(k).lower(): str(v) for k, v in options.items()}
    topics: list[str] = []
    if lowered.get("topic", "").strip():
        topics.append(lowered["topic"].strip())
    topics.extend(t.strip() for t in lowered.get("subscribe", "").split(",") if t.strip())
    if lowered.get("assign"):
        try:
            assigned = json.loads(lowered["assign"])
            if isinstance(assigned, dict):
                topics.extend(str(t) for t in assigned)
        except ValueError:
            logger.debug("assign option is not JSON", exc_info=True)
    if not topics and lowered.get("subscribepattern", "").strip():
        topics.append(lowered["subscribepattern"].strip())
    return list(dict.fromkeys(topics))


def topic_datasets(
    bootstrap_servers: str | None, topics: list[str], attributes: list[Expr]
) -> list[CapturedDataset]:
    """One TOPIC dataset per topic, with the relation's columns as schema and leaves."""
    namespace = kafka_namespace(bootstrap_servers)
    if namespace is None:
        return []
    by_id = column_names_by_id(attributes)
    fields = schema_from_attributes(attributes)
    return [
        CapturedDataset(namespace, topic, fields=list(fields), attributes=dict(by_id), dataset_type="TOPIC")
        for topic in topics
    ]


# --- reads: LogicalRelation over KafkaRelation ------------------------------------------

def _private_fields(obj: Any, *names: str) -> dict[str, Any]:
    """The values of ``obj``'s declared fields ``names``, found by reflection.

    Scala keeps a constructor parameter used outside the constructor as a
    private field of its own name, or, when a nested class reads it, mangled to
    ``<owner>$$<name>``. The plain name is asked for first (one call); only when
    it is missing are the declared fields listed and matched by their last
    ``$$`` segment.
    """
    cls = obj.getClass()
    found: dict[str, Any] = {}
    listed: dict[str, Any] | None = None
    for name in names:
        try:
            field = cls.getDeclaredField(name)
        except Exception:
            if listed is None:
                listed = {}
                for candidate in cls.getDeclaredFields():
                    listed.setdefault(str(candidate.getName()).rsplit("$$", 1)[-1], candidate)
            field = listed.get(name)
            if field is None:
                raise LookupError(f"{cls.getName()} has no field {name}") from None
        field.setAccessible(True)
        found[name] = field.get(obj)
    return found


def _kafka_relation_facts(relation: Any) -> dict[str, Any]:
    fields = _private_fields(relation, "strategy", "sourceOptions")
    # CaseInsensitiveMap.get lower-cases the key; the value is a Scala Option.
    bootstrap = option(fields["sourceOptions"].get(_BOOTSTRAP))
    return {
        "kafka_strategy": str(fields["strategy"].toString()),
        "kafka_bootstrap": str(bootstrap) if bootstrap is not None else None,
    }


def _read_kafka_relation(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    facts = ctx.facts(node)
    found = strategy_topics(facts.get("kafka_strategy"))
    if found is None:
        return []
    return topic_datasets(facts.get("kafka_bootstrap"), found[1], node.output())


def datasets_from_options(options: Mapping[str, str], attributes: list[Expr]) -> list[CapturedDataset]:
    """The topics a DSv2 ``KafkaTable`` relation's options name (a read's
    ``subscribe``/``assign``/``subscribePattern``, a write's ``topic``), with the
    relation's columns; the DSv2 family calls it with ``DataSourceV2Relation.options``."""
    lowered = {str(k).lower(): str(v) for k, v in options.items()}
    return topic_datasets(lowered.get(_BOOTSTRAP), topics_from_options(lowered), attributes)


# --- writes: SaveIntoDataSourceCommand with KafkaSourceProvider ---------------------------

#: Plan nodes whose output columns are their child's, unchanged.
_PASS_THROUGH = frozenset(
    {
        "Filter",
        "Sort",
        "GlobalLimit",
        "LocalLimit",
        "Limit",
        "Offset",
        "Repartition",
        "RepartitionByExpression",
        "RebalancePartitions",
        "Sample",
        "SubqueryAlias",
        "Distinct",
        "Deduplicate",
        "ResolvedHint",
        "Window",
    }
)


def _outputs(node: PlanNode) -> list[tuple[str | None, int | None]]:
    """``(name, exprId)`` of each output column of ``node``, where the plan JSON tells."""
    if node.cls in ("Project", "Aggregate"):
        field = "projectList" if node.cls == "Project" else "aggregateExpressions"
        return [(e.name, e.expr_id) for e in node.exprs(field)]
    if node.cls in ("Union", *_PASS_THROUGH) and node.children:
        return _outputs(node.children[0])
    return [(a.name, a.expr_id) for a in node.output()]


def _strip_casts(expr: Expr) -> Expr:
    while expr.cls in ("Cast", "Alias") and expr.children:
        expr = expr.children[0]
    return expr


def _literal_values(node: PlanNode, expr_id: int, found: list[str], budget: list[int]) -> None:
    """Add to ``found`` the literal values column ``expr_id`` of ``node`` takes."""
    budget[0] -= 1
    if budget[0] < 0:
        return
    if node.cls in ("Project", "Aggregate"):
        field = "projectList" if node.cls == "Project" else "aggregateExpressions"
        for expr in node.exprs(field):
            if expr.expr_id != expr_id:
                continue
            source = _strip_casts(expr) if expr.cls == "Alias" else expr
            if source.cls == "Literal" and isinstance(source.fields.get("value"), str):
                found.append(source.fields["value"])
            elif source.cls == "AttributeReference" and source.expr_id is not None:
                for child in node.children:
                    _literal_values(child, source.expr_id, found, budget)
            return
        return
    if node.cls == "Union":
        ids = [i for _, i in _outputs(node)]
        if expr_id not in ids:
            return
        position = ids.index(expr_id)
        for child in node.children:
            child_ids = [i for _, i in _outputs(child)]
            if position < len(child_ids) and child_ids[position] is not None:
                _literal_values(child, child_ids[position], found, budget)  # type: ignore[arg-type]
        return
    if node.cls in _PASS_THROUGH:
        for child in node.children:
            _literal_values(child, expr_id, found, budget)


def literal_topics(query: PlanNode | None) -> list[str]:
    """The literal values the ``topic`` column of a write's ``query`` takes (each once)."""
    if query is None:
        return []
    found: list[str] = []
    for name, expr_id in _outputs(query):
        if name is not None and name.lower() == "topic" and expr_id is not None:
            _literal_values(query, expr_id, found, [200])
    return list(dict.fromkeys(t for t in found if t))



def _write_kafka(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    options = {str(k).lower(): str(v) for k, v in dict(facts.get("options", {})).items()}
    namespace = kafka_namespace(options.get(_BOOTSTRAP))
    if namespace is None:
        return
    query = written_query(root)
    topic = options.get("topic", "").strip()
    topics = [topic] if topic else literal_topics(query)
    fields = schema_from_struct(facts.get("query_schema"))
    serialised = written_value_fields(query)
    if serialised is not None:
        fields = [("value", "struct", serialised) if f[0] == "value" else f for f in fields]
    for name in topics:
        visited.outputs.append(
            CapturedDataset(namespace, name, fields=list(fields), query=query, dataset_type="TOPIC")
        )


def stream_sink_facts(sink: Any, options: Mapping[str, str]) -> dict[str, Any]:
    """A streaming query's Kafka sink, as the facts of a batch save to Kafka: the
    topic and servers are the query's write options, not the sink table's."""
    return {
        "options": dict(options),
        "data_source": "org.apache.spark.sql.kafka010.KafkaSourceProvider",
    }


FAMILY = SourceFamily(
    name="kafka",
    relation_lookups={"KafkaRelation": _kafka_relation_facts},
    relation_reads={"KafkaRelation": _read_kafka_relation},
    save_writes={"KafkaSourceProvider": _write_kafka},
    v2_option_datasets={"KafkaSourceProvider$KafkaTable": datasets_from_options},
    stream_sinks={"KafkaSourceProvider$KafkaTable": stream_sink_facts},
)
