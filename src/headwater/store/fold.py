"""A catalog name stored as a dataset of its own, folded into the dataset it names.

With ``[symlinks] resolve``, a name that is another dataset's symlink
identifier (a Hive or Glue table whose location a Spark job wrote) is that
dataset. When a producer names the table *before* any event has told its
location, the table is stored as a dataset of its own; the batch that
finally carries the link folds it into the location's dataset, in the same
transaction:

1. the events that stored facts under the table's name are read back from the
   raw log -- those mentioning it (``event_subjects``) and those whose column
   lineage names it as a source (the events of the edges' targets);
2. every row derived from the table's name is deleted (its versions, run
   inputs and outputs, column lineage, facets, fields, current and declared
   inputs and outputs, drifts, contracts, aliases, and the dataset itself;
   its namespace too when nothing else is in it), and the ``event_subjects``
   rows of those events;
3. the events are written again through the write path (``rewrite``), whose
   names now resolve through the link.

Every table the write path fills merges its rows order-independently and
idempotently, so the result is the store the events would have made had the
link come first. Folding again changes nothing: the table is no longer a
dataset, and every later event naming it lands on the location.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import sqlalchemy as sa

from headwater.events.parse import ParsedEvent, parse_event
from headwater.store import fingerprints, rules
from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.dataset_facet_history import dataset_facet_history
from headwater.store.extract import Facts
from headwater.store.keys import DatasetKey, dataset_node
from headwater.store.namespace_rules import Normaliser, symlink_identifiers
from headwater.store.statements import IdCache, Statements

__all__ = ["RECHECK_SECONDS", "fold_linked_names"]

#: Writes the facts of events again (the writer's path, names through the rules).
Rewrite = Callable[[sa.Connection, Sequence[ParsedEvent]], None]

# A fold writes events again, whose symlinks may fold another name: bounded, since
# each round removes at least one dataset and the rounds rarely go past one.
_MAX_ROUNDS = 16

_ds, _ns = t.datasets, t.namespaces

#: How long an identifier a batch's symlinks carry is not looked up again.
RECHECK_SECONDS = 5.0
_CHECKED_MAX = 100_000


def fold_linked_names(
    conn: sa.Connection,
    events: Sequence[ParsedEvent],
    names: Normaliser,
    rewrite: Rewrite,
    sql: Statements,
    dataset_ids: IdCache,
    namespace_ids: IdCache,
    written: Iterable[DatasetKey] = (),
    checked: dict[DatasetKey, float] | None = None,
) -> int:
    """Fold every stored dataset that a symlink of ``events`` names into its target,
    and each of ``written`` (the datasets the batch wrote) that a symlink learnt
    since its facts were gathered names (a batch prepared while another carried
    the link).

    ``checked`` (identifier -> when it was last looked up, kept by the caller)
    spares a batch the lookup of identifiers looked up in the last
    :data:`RECHECK_SECONDS`: once a process knows a link, none of its events
    stores the identifier as a dataset again, so only another process (not
    knowing the link yet) can, and its table is folded by a batch carrying the
    link after that.

    Returns how many datasets were folded.
    """
    folded = 0
    links = {key: target for key in written if (target := names.dataset(key)) != key}
    now = time.monotonic()
    for round_ in range(_MAX_ROUNDS):
        carried = _links(events, names)
        if round_ == 0 and checked is not None:
            carried = _not_checked_lately(carried, checked, now)
        links.update(carried)
        found = _stored_identifiers(conn, links)
        links = {}
        if not found:
            break
        hashes: set[str] = set()
        for (key, dataset_id), _target in found.items():
            hashes |= _events_of(conn, key, dataset_id)
        again = _read_events(conn, hashes)
        for (key, dataset_id), target in found.items():
            _delete(conn, key, dataset_id, target, names, sql, dataset_ids, namespace_ids)
        for part in chunks(sorted(hashes)):
            conn.execute(sa.delete(t.event_subjects).where(t.event_subjects.c.event_hash.in_(part)))
        rewrite(conn, again)
        folded += len(found)
        events = again
    return folded


def _not_checked_lately(
    links: dict[DatasetKey, DatasetKey], checked: dict[DatasetKey, float], now: float
) -> dict[DatasetKey, DatasetKey]:
    """``links`` without those looked up in the last :data:`RECHECK_SECONDS` (the
    others are marked as looked up now)."""
    if len(checked) > _CHECKED_MAX:
        checked.clear()
    out = {}
    for key, target in links.items():
        if now - checked.get(key, -RECHECK_SECONDS) >= RECHECK_SECONDS:
            checked[key] = now
            out[key] = target
    return out


def _links(events: Iterable[ParsedEvent], names: Normaliser) -> dict[DatasetKey, DatasetKey]:
    """identifier -> the dataset it resolves to, for the symlinks ``events`` carry."""
    out: dict[DatasetKey, DatasetKey] = {}
    for ev in events:
        for ident in symlink_identifiers(ev.event):
            key = names.symlink(ident)
            target = names.dataset(key)
            if target != key:
                out[key] = target
    return out


def _stored_identifiers(
    conn: sa.Connection, links: dict[DatasetKey, DatasetKey]
) -> dict[tuple[DatasetKey, int], DatasetKey]:
    """The identifiers of ``links`` stored as datasets of their own: (key, id) -> target."""
    if not links:
        return {}
    found: dict[tuple[DatasetKey, int], DatasetKey] = {}
    keys = sorted(links)
    for part in chunks(keys):
        query = (
            sa.select(_ds.c.id, _ns.c.name.label("namespace"), _ds.c.name)
            .join(_ns, _ns.c.id == _ds.c.namespace_id)
            .where(sa.tuple_(_ns.c.name, _ds.c.name).in_(part))
        )
        for row in conn.execute(query):
            key = (row.namespace, row.name)
            found[(key, row.id)] = links[key]
    return found


def _events_of(conn: sa.Connection, key: DatasetKey, dataset_id: int) -> set[str]:
    """The hashes of the events that stored facts under dataset ``key``."""
    cl, s = t.column_lineage, t.event_subjects
    subjects = {dataset_node(*key)}
    targets = (
        sa.select(_ns.c.name.label("namespace"), _ds.c.name)
        .select_from(cl.join(_ds, _ds.c.id == cl.c.target_dataset_id))
        .join(_ns, _ns.c.id == _ds.c.namespace_id)
        .where(cl.c.source_dataset_id == dataset_id)
        .distinct()
    )
    subjects |= {dataset_node(row.namespace, row.name) for row in conn.execute(targets)}
    hashes: set[str] = set()
    for part in chunks(sorted(subjects)):
        hashes.update(conn.scalars(sa.select(s.c.event_hash).where(s.c.subject.in_(part))))
    return hashes


def _read_events(conn: sa.Connection, hashes: set[str]) -> list[ParsedEvent]:
    out: list[ParsedEvent] = []
    e = t.events
    for part in chunks(sorted(hashes)):
        query = sa.select(e.c.event_hash, e.c.payload).where(e.c.event_hash.in_(part))
        for row in conn.execute(query):
            # The hash the event is stored under, whatever this release's parser makes.
            out.append(replace(parse_event(json.loads(row.payload)), event_hash=row.event_hash))
    return out


def _delete(
    conn: sa.Connection,
    key: DatasetKey,
    dataset_id: int,
    target: DatasetKey,
    names: Normaliser,
    sql: Statements,
    dataset_ids: IdCache,
    namespace_ids: IdCache,
) -> None:
    """Delete every row derived under dataset ``key`` (id ``dataset_id``), which
    becomes ``target``."""
    v, f = t.dataset_versions, t.facets
    versions = list(conn.scalars(sa.select(v.c.uuid).where(v.c.dataset_id == dataset_id)))
    for part in chunks(versions):
        conn.execute(sa.delete(t.dataset_drifts).where(t.dataset_drifts.c.version_uuid.in_(part)))
        sc = t.schema_contracts
        conn.execute(sa.delete(sc).where(sc.c.version_uuid.in_(part)))
        conn.execute(sa.delete(f).where(f.c.kind == "dataset_version", f.c.subject.in_(part)))
    node = dataset_node(*key)
    conn.execute(
        sa.delete(f).where(f.c.kind.in_(("dataset", "input", "output")), f.c.subject == node)
    )
    conn.execute(sa.delete(t.event_subjects).where(t.event_subjects.c.subject == node))
    history = dataset_facet_history
    conn.execute(sa.delete(history).where(history.c.subject == node))
    cl = t.column_lineage
    # The columns it wrote go; those it fed are written again with its events.
    fingerprints.delete_dataset(conn, dataset_id)
    conn.execute(
        sa.delete(cl).where(
            sa.or_(cl.c.source_dataset_id == dataset_id, cl.c.target_dataset_id == dataset_id)
        )
    )
    for table in (
        t.dataset_drifts,
        t.schema_contracts,
        t.run_inputs,
        t.run_outputs,
        t.dataset_symlinks,
        t.dataset_aliases,
        t.fields,
        t.job_current_io,
        t.job_declared_io,
        t.job_declared_io_history,
        v,
    ):
        conn.execute(sa.delete(table).where(table.c.dataset_id == dataset_id))
    _move_tags(conn, key, target)
    namespace_id = conn.scalar(sa.select(_ds.c.namespace_id).where(_ds.c.id == dataset_id))
    conn.execute(sa.delete(_ds).where(_ds.c.id == dataset_id))
    dataset_ids.forget(key)
    _tidy_namespace(conn, key[0], namespace_id, namespace_ids, names, sql)


def _move_tags(conn: sa.Connection, key: DatasetKey, target: DatasetKey) -> None:
    """Tags on the table and its fields: those its events carried are deleted (the
    events write them again under the new name); those put by hand through the API
    (the hash :func:`headwater.store.tags.assign_tag` gives them) move to the target."""
    ta = t.tag_assignments
    node, field_prefix = dataset_node(*key), f"datasetField:{key[0]}:{key[1]}:"
    on_table = sa.or_(ta.c.subject == node, ta.c.subject.startswith(field_prefix, autoescape=True))
    rows = (
        conn.execute(
            sa.select(ta, t.tags.c.name.label("tag"))
            .join(t.tags, t.tags.c.id == ta.c.tag_id)
            .where(on_table)
        )
        .mappings()
        .all()
    )
    conn.execute(sa.delete(ta).where(on_table))
    for row in rows:
        if row["tag_hash"] != _hand_set_hash(row["tag"], row["subject"]):
            continue
        if row["subject"] == node:
            subject = dataset_node(*target)
        else:
            subject = f"datasetField:{target[0]}:{target[1]}:{row['subject'][len(field_prefix) :]}"
        moved = {c: row[c] for c in ta.c.keys() if c != "id"}
        moved.update(subject=subject, tag_hash=_hand_set_hash(row["tag"], subject))
        taken = conn.scalar(
            sa.select(ta.c.id).where(ta.c.tag_id == row["tag_id"], ta.c.subject == subject)
        )
        if taken is None:
            conn.execute(ta.insert().values(**moved))


def _hand_set_hash(tag: str, subject: str) -> str:
    return hashlib.sha256(f"api:{tag}:{subject}".encode()).hexdigest()


def _tidy_namespace(
    conn: sa.Connection,
    name: str,
    namespace_id: Any,
    namespace_ids: IdCache,
    names: Normaliser,
    sql: Statements,
) -> None:
    """Delete the namespace left empty (its rows come from its datasets' and jobs'
    events only); else its span is that of what is left in it."""
    spans = [
        conn.execute(
            sa.select(sa.func.min(table.c.created_at), sa.func.max(table.c.updated_at)).where(
                table.c.namespace_id == namespace_id
            )
        ).one()
        for table in (_ds, t.jobs)
    ]
    firsts = [s[0] for s in spans if s[0] is not None]
    lasts = [s[1] for s in spans if s[1] is not None]
    if not firsts:
        ns = conn.execute(sa.select(_ns).where(_ns.c.id == namespace_id)).mappings().first()
        if ns is not None and ns["owner_name"] is None and ns["description"] is None:
            conn.execute(sa.delete(_ns).where(_ns.c.id == namespace_id))
            namespace_ids.forget(name)
            used = conn.scalar(sa.select(_ds.c.id).where(_ds.c.source_name == name).limit(1))
            if used is None:
                conn.execute(
                    sa.delete(t.sources).where(
                        t.sources.c.name == name, t.sources.c.connection_url == name
                    )
                )
        return
    conn.execute(
        sa.update(_ns)
        .where(_ns.c.id == namespace_id)
        .values(created_at=min(firsts), updated_at=max(lasts))
    )
    _respan_source(conn, name, namespace_id, names, sql)


def _respan_source(
    conn: sa.Connection, name: str, namespace_id: Any, names: Normaliser, sql: Statements
) -> None:
    """The namespace's default source (named after it) again from the events of the
    datasets left in it: the folded table's events no longer count for it."""
    nodes = [
        dataset_node(name, row)
        for row in conn.scalars(sa.select(_ds.c.name).where(_ds.c.namespace_id == namespace_id))
    ]
    hashes: set[str] = set()
    s = t.event_subjects
    for part in chunks(nodes):
        hashes.update(conn.scalars(sa.select(s.c.event_hash).where(s.c.subject.in_(part))))
    row = Facts.of(_read_events(conn, hashes), names).table_rows(rules.SOURCES).get(name)
    conn.execute(
        sa.delete(t.sources).where(t.sources.c.name == name, t.sources.c.connection_url == name)
    )
    if row is not None:
        sql.upsert(conn, rules.SOURCES, [row])
