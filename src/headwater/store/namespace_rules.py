"""The namespace rules: one spelling for each dataset, whoever the producer.

Producers name one Kafka topic, one bucket or one table in several ways: the
Spark agent names a topic by the first broker of its bootstrap list, Kafka
Connect by another broker of the same cluster, Hadoop's connectors say
``s3a://`` where others say ``s3://``, a path comes with or without a trailing
slash, a query engine names the Hive/Glue table that Spark names by its
location. The lineage only joins up when all of them land on one node, so the
store maps every dataset name an event carries through a table of rules
(a TOML file, ``serve --namespace-rules FILE``), in this order:

1. ``[s3] aliases``: ``s3a://`` and ``s3n://`` namespaces become ``s3://``;
2. ``[[kafka.clusters]]``: a ``kafka://`` namespace naming any broker of a
   cluster (any order, any listener prefix, any case) becomes
   ``kafka://<cluster name>``;
3. ``[paths] trim_trailing_slash``: a trailing ``/`` is dropped from names;
4. ``[[rename]]``: an exact namespace (and optionally name) becomes another;
5. ``[symlinks] resolve`` (applied by :class:`Normaliser`): a name that is a
   symlink identifier of another dataset (a catalog table of a location)
   becomes that dataset.

A rule set is a pure function of names (steps 1-4) plus the symlinks the store
has seen (step 5). :attr:`NamespaceRules.fingerprint` identifies a rule set,
so a store knows which rules its tables were derived with.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from headwater.errors import ConfigError

__all__ = [
    "DatasetNames",
    "NamespaceRules",
    "Normaliser",
    "load_rules",
    "parse_rules",
    "symlink_identifiers",
]

#: (namespace, name) -> (namespace, name): what the fact extraction calls per dataset.
DatasetNames = Callable[[tuple[str, str]], tuple[str, str]]

_KNOWN = {
    "": {"s3", "kafka", "paths", "rename", "symlinks", "jobs"},
    "s3": {"aliases"},
    "kafka": {"clusters"},
    "kafka.clusters": {"name", "brokers"},
    "paths": {"trim_trailing_slash"},
    "rename": {"namespace", "name", "to_namespace", "to_name"},
    "symlinks": {"resolve"},
    "jobs": {"apply_renames"},
}
_BROKER = re.compile(r"^[A-Za-z0-9._\-\[\]:]+:\d{1,5}$")
_S3_ALIASES = ("s3a://", "s3n://")
# The normalised names of the most recent distinct raw names, per rule set.
_CACHE_MAX = 100_000


@dataclass(frozen=True)
class NamespaceRules:
    """A checked rule table; :meth:`dataset` applies steps 1-4."""

    s3_aliases: bool = False
    kafka: Mapping[str, str] = field(default_factory=dict)  # broker -> kafka://cluster
    trim_trailing_slash: bool = False
    renames: Mapping[tuple[str, str | None], tuple[str, str | None]] = field(default_factory=dict)
    resolve_symlinks: bool = False
    job_renames: bool = False
    source: str = ""  # the TOML text, kept with the store's record of the rules in force
    _cache: dict[tuple[str, str], tuple[str, str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def fingerprint(self) -> str:
        """A hash of what the rules do (not of the file's comments or layout)."""
        meaning = {
            "s3": self.s3_aliases,
            "kafka": sorted(self.kafka.items()),
            "slash": self.trim_trailing_slash,
            "rename": sorted([list(k), list(v)] for k, v in self.renames.items()),
            "symlinks": self.resolve_symlinks,
            "jobs": self.job_renames,
        }
        return hashlib.sha256(json.dumps(meaning, sort_keys=True).encode()).hexdigest()[:16]

    def dataset(self, key: tuple[str, str]) -> tuple[str, str]:
        """The normalised ``(namespace, name)`` of ``key`` by steps 1-4."""
        found = self._cache.get(key)
        if found is not None:
            return found
        namespace, name = key
        if self.s3_aliases and namespace.startswith(_S3_ALIASES):
            namespace = "s3://" + namespace[len("s3a://") :]
        if self.kafka and namespace.startswith("kafka://"):
            namespace = self.kafka_cluster(namespace) or namespace
        if self.trim_trailing_slash and len(name) > 1 and name.endswith("/"):
            name = name.rstrip("/") or "/"
        if self.renames:
            namespace, name = self._renamed(namespace, name)
        out = (namespace, name)
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = out
        return out

    def job_namespace(self, namespace: str) -> str:
        """A job namespace renamed by a namespace-wide ``[[rename]]`` (with ``[jobs]``)."""
        if not self.job_renames:
            return namespace
        to = self.renames.get((namespace, None))
        return to[0] if to is not None else namespace

    def kafka_cluster(self, namespace: str) -> str | None:
        """``kafka://<cluster>`` when ``namespace`` names a broker of a configured cluster."""
        for broker in kafka_brokers(namespace):
            cluster = self.kafka.get(broker)
            if cluster is not None:
                return cluster
        return None

    def _renamed(self, namespace: str, name: str) -> tuple[str, str]:
        exact = self.renames.get((namespace, name))
        if exact is not None:
            return exact[0], exact[1] if exact[1] is not None else name
        whole = self.renames.get((namespace, None))
        if whole is not None:
            return whole[0], name
        return namespace, name


def kafka_brokers(namespace: str) -> list[str]:
    """The brokers a ``kafka://`` namespace names, each ``host:port`` in lower case.

    ``kafka://b2:9092,b1:9092``, ``kafka://SASL_SSL://B1:9092`` and
    ``kafka://b1:9092`` all name broker ``b1:9092``; a port-less host gets 9092.
    """
    text = namespace[len("kafka://") :] if namespace.startswith("kafka://") else namespace
    brokers = []
    for part in text.split(","):
        part = part.strip().split("://", 1)[-1].strip().rstrip("/").lower()
        if part:
            brokers.append(part if re.search(r":\d+$", part) else f"{part}:9092")
    return brokers


class Normaliser:
    """A rule set plus step 5: catalog names resolved through known symlinks.

    The symlink index maps each symlink identifier (normalised by steps 1-4)
    to the dataset carrying it. It starts from the store's symlinks and learns
    each batch's before the batch's names are mapped (:meth:`learn`), so a
    table named in the same batch as its location joins it.
    """

    def __init__(
        self,
        rules: NamespaceRules,
        symlinks: Iterable[tuple[tuple[str, str], tuple[str, str]]] = (),
    ) -> None:
        self.rules = rules
        self._symlinks: dict[tuple[str, str], tuple[str, str]] = {}
        self.add_symlinks(symlinks)

    def add_symlinks(self, symlinks: Iterable[tuple[tuple[str, str], tuple[str, str]]]) -> None:
        """Add stored (identifier, dataset) pairs to the symlink index."""
        for ident, dataset in symlinks:
            self._add(self.rules.dataset(ident), self.rules.dataset(dataset))

    def _add(self, ident: tuple[str, str], dataset: tuple[str, str]) -> None:
        if ident == dataset:
            return
        old = self._symlinks.get(ident)
        # Two datasets claiming one identifier: the smallest wins, whatever the order.
        if old is None or dataset < old:
            self._symlinks[ident] = dataset

    def learn(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Add the symlinks the datasets of ``events`` carry (step 5 only)."""
        if not self.rules.resolve_symlinks:
            return
        for event in events:
            for key, idents in _symlinks_of(event):
                target = self.rules.dataset(key)
                for ident in idents:
                    self._add(self.rules.dataset(ident), target)

    def dataset(self, key: tuple[str, str]) -> tuple[str, str]:
        """``key`` by every step."""
        named = self.rules.dataset(key)
        if self._symlinks:
            return self._symlinks.get(named, named)
        return named

    def job(self, key: tuple[str, str]) -> tuple[str, str]:
        """A job's ``(namespace, name)`` with its namespace renamed (see ``job_namespace``)."""
        return (self.rules.job_namespace(key[0]), key[1])

    def symlink(self, key: tuple[str, str]) -> tuple[str, str]:
        """A symlink identifier by steps 1-4 (an identifier is a name, not a dataset)."""
        return self.rules.dataset(key)


def symlink_identifiers(event: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """Each (namespace, name) of a ``symlinks`` facet identifier ``event`` carries, as sent."""
    for _, idents in _symlinks_of(event):
        yield from idents


def _symlinks_of(
    event: Mapping[str, Any],
) -> Iterable[tuple[tuple[str, str], list[tuple[str, str]]]]:
    """(dataset, its symlink identifiers) of each dataset of ``event`` carrying some."""
    for dataset in _datasets_of(event):
        facets = dataset.get("facets")
        links = facets.get("symlinks") if isinstance(facets, dict) else None
        idents = links.get("identifiers") if isinstance(links, dict) else None
        if not isinstance(idents, list):
            continue
        namespace, name = dataset.get("namespace"), dataset.get("name")
        if not (isinstance(namespace, str) and isinstance(name, str)):
            continue
        yield (
            (namespace, name),
            [
                (ident["namespace"], ident["name"])
                for ident in idents
                if isinstance(ident, dict)
                and isinstance(ident.get("namespace"), str)
                and isinstance(ident.get("name"), str)
            ],
        )


def _datasets_of(event: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for part in ("inputs", "outputs"):
        items = event.get(part)
        if isinstance(items, list):
            yield from (item for item in items if isinstance(item, dict))
    dataset = event.get("dataset")
    if isinstance(dataset, dict):
        yield dataset


# -- reading a rules file -------------------------------------------------------------


def load_rules(path: Path | str) -> NamespaceRules:
    """The rules in TOML file ``path``; :class:`ConfigError` naming the file and line/field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"namespace rules {path}: cannot read the file: {exc}") from None
    return parse_rules(text, str(path))


def parse_rules(text: str, where: str = "namespace rules") -> NamespaceRules:
    """Check and build the rules in TOML ``text``; errors name ``where`` and the field."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    _only_known(doc, "", where)
    s3 = _table(doc, "s3", where)
    paths = _table(doc, "paths", where)
    symlinks = _table(doc, "symlinks", where)
    jobs = _table(doc, "jobs", where)
    kafka = _table(doc, "kafka", where)
    return NamespaceRules(
        s3_aliases=_bool(s3, "aliases", "s3.aliases", where),
        kafka=_clusters(kafka, where),
        trim_trailing_slash=_bool(paths, "trim_trailing_slash", "paths.trim_trailing_slash", where),
        renames=_renames(doc.get("rename", []), where),
        resolve_symlinks=_bool(symlinks, "resolve", "symlinks.resolve", where),
        job_renames=_bool(jobs, "apply_renames", "jobs.apply_renames", where),
        source=text,
    )


def _fail(where: str, field_name: str, message: str) -> ConfigError:
    return ConfigError(f"{where}: {field_name}: {message}")


def _only_known(table: Mapping[str, Any], path: str, where: str) -> None:
    known = _KNOWN[re.sub(r"\[\d+\]", "", path)]
    for key in table:
        if key not in known:
            name = f"{path}.{key}" if path else key
            raise _fail(where, name, f"unknown key (expected one of {', '.join(sorted(known))})")


def _table(doc: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise _fail(where, key, f"must be a table ([{key}]), got {type(value).__name__}")
    _only_known(value, key, where)
    return value


def _bool(table: Mapping[str, Any], key: str, field_name: str, where: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise _fail(where, field_name, f"must be true or false, got {value!r}")
    return value


def _text(
    table: Mapping[str, Any], key: str, field_name: str, where: str, required: bool = True
) -> str | None:
    value = table.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        got = "nothing" if value is None else repr(value)
        raise _fail(where, field_name, f"must be a non-empty string, got {got}")
    return value


def _clusters(kafka: Mapping[str, Any], where: str) -> dict[str, str]:
    clusters = kafka.get("clusters", [])
    if not isinstance(clusters, list):
        raise _fail(where, "kafka.clusters", "must be an array of tables ([[kafka.clusters]])")
    brokers: dict[str, str] = {}
    names: set[str] = set()
    for i, cluster in enumerate(clusters):
        at = f"kafka.clusters[{i}]"
        if not isinstance(cluster, dict):
            raise _fail(where, at, "must be a table with name and brokers")
        _only_known(cluster, at, where)
        name = _text(cluster, "name", f"{at}.name", where)
        assert name is not None
        if "/" in name or "," in name:
            raise _fail(where, f"{at}.name", f"a cluster name has no '/' or ',', got {name!r}")
        if name in names:
            raise _fail(where, f"{at}.name", f"cluster {name!r} is named twice")
        names.add(name)
        listed = cluster.get("brokers")
        if not isinstance(listed, list) or not listed:
            raise _fail(where, f"{at}.brokers", "must be a non-empty array of host:port strings")
        for j, broker in enumerate(listed):
            if not isinstance(broker, str):
                raise _fail(where, f"{at}.brokers[{j}]", f"must be a string, got {broker!r}")
            for spelled in kafka_brokers(broker):
                if not _BROKER.match(spelled):
                    raise _fail(where, f"{at}.brokers[{j}]", f"must be host:port, got {broker!r}")
                other = brokers.get(spelled)
                if other is not None and other != f"kafka://{name}":
                    raise _fail(
                        where,
                        f"{at}.brokers[{j}]",
                        f"broker {spelled} is already in cluster "
                        f"{other.removeprefix('kafka://')!r}",
                    )
                brokers[spelled] = f"kafka://{name}"
        # The cluster's own namespace is one of its spellings too.
        brokers.setdefault(f"{name.lower()}:9092", f"kafka://{name}")
    return brokers


def _renames(items: Any, where: str) -> dict[tuple[str, str | None], tuple[str, str | None]]:
    if not isinstance(items, list):
        raise _fail(where, "rename", "must be an array of tables ([[rename]])")
    out: dict[tuple[str, str | None], tuple[str, str | None]] = {}
    for i, item in enumerate(items):
        at = f"rename[{i}]"
        if not isinstance(item, dict):
            raise _fail(where, at, "must be a table")
        _only_known(item, at, where)
        namespace = _text(item, "namespace", f"{at}.namespace", where)
        name = _text(item, "name", f"{at}.name", where, required=False)
        to_namespace = _text(item, "to_namespace", f"{at}.to_namespace", where)
        to_name = _text(item, "to_name", f"{at}.to_name", where, required=False)
        assert namespace is not None and to_namespace is not None
        if to_name is not None and name is None:
            raise _fail(
                where,
                f"{at}.to_name",
                "renaming every name of a namespace to one name would merge them; give name too",
            )
        key = (namespace, name)
        if key in out:
            raise _fail(where, at, f"{namespace!r} {name or '(every name)'} is renamed twice")
        out[key] = (to_namespace, to_name)
    return out
