"""Dataset namespace resolvers: a host address in a namespace becomes a logical name.

The OpenLineage client lets users name a cluster instead of one of its hosts
(``spark.openlineage.dataset.namespaceResolvers.<name>.*``), so that a Kafka
topic read through ``kafka-host:9092`` and written through
``kafka-host-other:9092`` is one dataset, ``kafka://kafka-cluster-prod:9092``.
Three resolver types exist, and each works on the whole namespace string, as
the client's do:

- ``hostList`` (``hosts=a;b``): the first listed host found in the namespace
  (case-insensitive) is replaced by ``<name>``; the rest of the namespace —
  scheme, port — stays. A host matches as a whole host name only: the client
  matches any substring, so with ``hosts=[kafka-host;kafka-host-other]`` it
  turns ``kafka://kafka-host-other:9092`` into
  ``kafka://<name>-other:9092``; here it becomes ``kafka://<name>:9092``;
- ``pattern`` (``regex``): every match of the regex is replaced by ``<name>``;
- ``patternGroup`` (``regex`` with a named group ``matchingGroup``): every match
  is replaced by that group's text.

Each may set ``schema``: it then applies only to namespaces ``<schema>://…``.
Resolvers are tried in the order of their names; the first that changes the
namespace wins. The agent applies them to every input and output dataset's
namespace (and so to the column-lineage input fields and ``dataSource`` facets
built from it); symlink namespaces stay as they are, as in the listener.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from headwater.agent.config_syntax import java_regex, parse_list

__all__ = ["NamespaceResolver", "parse_namespace_resolvers", "resolve_namespace"]

logger = logging.getLogger(__name__)

#: The resolver types the OpenLineage client knows.
RESOLVER_TYPES = frozenset({"hostList", "pattern", "patternGroup"})


@dataclass(frozen=True)
class NamespaceResolver:
    """One configured resolver (``type`` as the client spells it)."""

    name: str
    type: str
    hosts: tuple[str, ...] = ()
    regex: re.Pattern[str] | None = None
    matching_group: str | None = None
    schema: str | None = None

    def resolve(self, namespace: str) -> str:
        """``namespace`` with this resolver applied (unchanged when it does not apply)."""
        if self.schema and not namespace.startswith(self.schema + "://"):
            return namespace
        if self.type == "hostList":
            for host in self.hosts:
                whole = re.compile(rf"(?<![\w.-]){re.escape(host)}(?![\w.-])", re.IGNORECASE)
                if host and whole.search(namespace):
                    return whole.sub(lambda _: self.name, namespace)
            return namespace
        if self.regex is None:
            return namespace
        match = self.regex.search(namespace)
        if match is None:
            return namespace
        if self.type == "patternGroup":
            if not self.matching_group:
                return namespace
            try:
                replacement = match.group(self.matching_group) or ""
            except IndexError:
                return namespace
        else:
            replacement = self.name
        return self.regex.sub(lambda _: replacement, namespace)


def resolve_namespace(namespace: str, resolvers: Iterable[NamespaceResolver]) -> str:
    """The first resolver's result that differs from ``namespace``, else ``namespace``."""
    for resolver in resolvers:
        try:
            resolved = resolver.resolve(namespace)
        except Exception:  # a resolver never breaks an event
            logger.debug("namespace resolver %s failed", resolver.name, exc_info=True)
            continue
        if resolved != namespace:
            return resolved
    return namespace


_RESOLVERS = "spark.openlineage.dataset.namespaceResolvers."


def parse_namespace_resolvers(spark_conf: Mapping[str, str]) -> tuple[NamespaceResolver, ...]:
    """The resolvers ``spark.openlineage.dataset.namespaceResolvers.<name>.*`` keys
    configure, in the order of their names; a resolver missing what its type needs
    is logged and left out."""
    by_name: dict[str, dict[str, str]] = {}
    for key, value in spark_conf.items():
        if key.startswith(_RESOLVERS) and "." in key[len(_RESOLVERS) :]:
            name, _, prop = key[len(_RESOLVERS) :].rpartition(".")
            if name:
                by_name.setdefault(name, {})[prop] = value.strip()
    resolvers = []
    for name in sorted(by_name):
        props = by_name[name]
        type_ = props.get("type", "")
        schema = props.get("schema") or None
        if type_ not in RESOLVER_TYPES:
            logger.warning(
                "namespace resolver %r has type %r (not one of %s); ignored",
                name,
                type_,
                ", ".join(sorted(RESOLVER_TYPES)),
            )
            continue
        if type_ == "hostList":
            hosts = parse_list(props.get("hosts", ""))
            if not hosts:
                logger.warning("namespace resolver %r lists no hosts; ignored", name)
                continue
            resolvers.append(NamespaceResolver(name, type_, hosts=hosts, schema=schema))
            continue
        try:
            regex = re.compile(java_regex(props.get("regex", "")))
        except re.error as exc:
            logger.warning("namespace resolver %r: regex is invalid (%s); ignored", name, exc)
            continue
        if not regex.pattern:
            logger.warning("namespace resolver %r has no regex; ignored", name)
            continue
        resolvers.append(
            NamespaceResolver(
                name,
                type_,
                regex=regex,
                matching_group=props.get("matchingGroup") or None,
                schema=schema,
            )
        )
    return tuple(resolvers)
