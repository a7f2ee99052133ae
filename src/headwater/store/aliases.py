"""The store's side of the namespace rules: aliases, symlinks, the rule set in force.

* :func:`resolve` -- the dataset a name as sent became (``dataset_aliases``),
  for reads asked by that name;
* :func:`symlinks` -- every (identifier, dataset) the store holds, the start of
  a :class:`~headwater.store.namespace_rules.Normaliser`'s symlink index;
* :func:`rules_change` -- whether the rules configured now are the ones the
  derived tables follow (``namespace_rules_applied``); a store without events
  takes the configured rules as its own.
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlalchemy as sa

from headwater.errors import ConfigError
from headwater.events.parse import normalise_namespace
from headwater.store import tables as t
from headwater.store.namespace_rules import NamespaceRules, parse_rules
from headwater.store.transactions import now_utc, write_transaction

__all__ = [
    "any_aliases",
    "record_rules",
    "rules_applied",
    "resolve",
    "resolve_job",
    "rules_change",
    "rules_differ",
    "rules_in_force",
    "symlinks",
    "symlinks_after",
]

_ds, _ns, _al = t.datasets, t.namespaces, t.dataset_aliases


def symlinks(conn: sa.Connection) -> Iterator[tuple[tuple[str, str], tuple[str, str]]]:
    """Each ((identifier namespace, name), (dataset namespace, name)) of ``dataset_symlinks``."""
    query = (
        sa.select(
            t.dataset_symlinks.c.namespace,
            t.dataset_symlinks.c.name,
            _ns.c.name.label("dataset_namespace"),
            _ds.c.name.label("dataset_name"),
        )
        .join(_ds, _ds.c.id == t.dataset_symlinks.c.dataset_id)
        .join(_ns, _ns.c.id == _ds.c.namespace_id)
    )
    for row in conn.execute(query):
        yield (row.namespace, row.name), (row.dataset_namespace, row.dataset_name)


def symlinks_after(
    conn: sa.Connection, after_id: int
) -> tuple[int, list[tuple[tuple[str, str], tuple[str, str]]]]:
    """The symlinks stored since row ``after_id`` (by another process, too), and the
    last row id read."""
    query = (
        sa.select(
            t.dataset_symlinks.c.id,
            t.dataset_symlinks.c.namespace,
            t.dataset_symlinks.c.name,
            _ns.c.name.label("dataset_namespace"),
            _ds.c.name.label("dataset_name"),
        )
        .join(_ds, _ds.c.id == t.dataset_symlinks.c.dataset_id)
        .join(_ns, _ns.c.id == _ds.c.namespace_id)
        .where(t.dataset_symlinks.c.id > after_id)
    )
    last, found = after_id, []
    for row in conn.execute(query):
        last = max(last, row.id)
        found.append(((row.namespace, row.name), (row.dataset_namespace, row.dataset_name)))
    return last, found


def any_aliases(conn: sa.Connection) -> bool:
    """Whether any name was mapped to another (reads then look aliases up)."""
    return conn.scalar(sa.select(_al.c.id).limit(1)) is not None


def resolve(conn: sa.Connection, namespace: str, name: str) -> tuple[str, str] | None:
    """The dataset ``namespace``/``name`` became, when it is an alias and not a dataset itself.

    An ``s3a://``/``s3n://`` namespace is also looked up as ``s3://``: events are
    stored with it so spelled (:func:`headwater.events.parse.normalise_namespace`).
    """
    if _named_exists(conn, _ds, namespace, name):
        return None
    found = _alias(conn, namespace, name)
    spelled = normalise_namespace(namespace)
    if found is None and spelled != namespace:
        if _named_exists(conn, _ds, spelled, name):
            return spelled, name
        found = _alias(conn, spelled, name)
    return found


def resolve_job(
    conn: sa.Connection, rules: NamespaceRules | None, namespace: str, name: str
) -> tuple[str, str] | None:
    """The job ``namespace``/``name`` became by a namespace-wide ``[[rename]]`` of
    ``rules`` (with ``[jobs] apply_renames``), when it is not a job itself.

    Jobs keep no alias rows: their renames are whole namespaces, so the rules in
    force (:func:`rules_applied`) tell every raw job namespace.
    """
    if rules is None or not rules.job_renames:
        return None
    renamed = rules.job_namespace(namespace)
    if renamed == namespace or _named_exists(conn, t.jobs, namespace, name):
        return None
    return (renamed, name) if _named_exists(conn, t.jobs, renamed, name) else None


def _named_exists(conn: sa.Connection, table: sa.Table, namespace: str, name: str) -> bool:
    """Whether ``table`` (datasets or jobs: both keyed by namespace and name) has the row."""
    return (
        conn.scalar(
            sa.select(table.c.id)
            .join(_ns, _ns.c.id == table.c.namespace_id)
            .where(_ns.c.name == namespace, table.c.name == name)
        )
        is not None
    )


def _alias(conn: sa.Connection, namespace: str, name: str) -> tuple[str, str] | None:
    row = conn.execute(
        sa.select(_ns.c.name.label("namespace"), _ds.c.name)
        .select_from(
            _al.join(_ds, _ds.c.id == _al.c.dataset_id).join(_ns, _ns.c.id == _ds.c.namespace_id)
        )
        .where(_al.c.namespace == namespace, _al.c.name == name)
    ).first()
    return (row.namespace, row.name) if row is not None else None


def rules_in_force(conn: sa.Connection) -> str | None:
    """The fingerprint of the rules the derived tables follow (None: names as sent)."""
    fingerprint: str | None = conn.scalar(sa.select(t.namespace_rules_applied.c.fingerprint))
    return fingerprint


def rules_applied(conn: sa.Connection) -> NamespaceRules | None:
    """The rules the derived tables follow, read back from the store (None: names as sent)."""
    source = conn.scalar(sa.select(t.namespace_rules_applied.c.rules))
    if source is None:
        return None
    try:
        return parse_rules(source, "the store's namespace rules")
    except ConfigError:
        return None  # recorded by a release that read rules differently


def rules_change(engine: sa.Engine, rules: NamespaceRules | None) -> str | None:
    """A sentence saying the store's tables follow other rules than ``rules``; None if not.

    A store holding no event yet records ``rules`` as the ones it follows.
    """
    applied = t.namespace_rules_applied
    with engine.connect() as conn:
        stored = conn.execute(sa.select(applied.c.fingerprint)).scalar()
        empty = conn.scalar(sa.select(t.events.c.event_hash).limit(1)) is None
    configured = rules.fingerprint if rules is not None else None
    if stored == configured:
        return None
    if empty:
        record_rules(engine, rules)
        return None
    return rules_differ(stored, configured)


def rules_differ(stored: str | None, configured: str | None) -> str | None:
    """The sentence saying the store follows rules ``stored`` while ``configured`` are
    in force (fingerprints, None: no rules); None when they are the same."""
    if stored == configured:
        return None
    return (
        f"the namespace rules changed since this store was derived (store: "
        f"{stored or 'no rules'}, configured: {configured or 'no rules'}): new events "
        "follow the configured rules, stored ones keep the old names until "
        "`headwater rebuild --from-raw --namespace-rules FILE` derives the store again"
    )


def record_rules(engine: sa.Engine, rules: NamespaceRules | None) -> None:
    """Record ``rules`` as the ones the derived tables follow (after a rebuild)."""
    applied = t.namespace_rules_applied
    with write_transaction(engine) as conn:
        conn.execute(applied.delete())
        if rules is not None:
            conn.execute(
                applied.insert().values(
                    id=1, fingerprint=rules.fingerprint, rules=rules.source, applied_at=now_utc()
                )
            )
