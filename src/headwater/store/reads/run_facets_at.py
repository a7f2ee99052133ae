"""A run's dataset facets as they stood at a time, read back from the run's raw events.

The ``facets`` table keeps one row per (kind, subject, run_uuid, name): the facet
of the run's event with the greatest (event time, event hash), the store's
merge guard (:data:`headwater.store.rules.FACETS`). A run whose events straddle
a time ``T`` -- its START at or before ``T``, its COMPLETE after -- therefore
keeps what the COMPLETE sent, and an answer as of ``T`` must not see it: the
facet in force then is the one the newest of the run's events at or before
``T`` sent, or none when none of them sent one.

Which runs pay for it. A facet row carries the event time of the event that
sent it (the merge guard's first column), so "sent after ``T``" is a comparison
on a column the reader selects anyway: no join, no extra read. A run's own
times would tell less: ``runs.updated_at`` (its latest event) is after ``T``
for every run still going at ``T``, even when its later events sent nothing
new, and ``runs.created_at`` only says the run existed by then. So a reader
keeps its one query for the rows sent at or before ``T`` (the common case, the
whole answer when no run straddles) and asks here only for rows sent after
``T`` by runs created at or before it: the straddling runs. Their events at or
before ``T`` are read by ``events.run_uuid`` (indexed), and only theirs.

The raw log keeps each event as the canonical JSON its hash is taken of (names
already spelled as the store spells them), and the namespace rules record every
name they changed in ``dataset_aliases``; so a dataset an event names maps to
the keys its ``facets`` rows were written under: the dataset's node id for an
input's ``inputFacets`` and an output's ``outputFacets``, and the output
version's uuid for the dataset facets an output carries. Retention deletes a
run's events with the run, and a rebuild from the raw log writes them again, so
the facets of every kept run can be read back this way.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa

from headwater.store import rules
from headwater.store import tables as t
from headwater.store.keys import dataset_node, dataset_version_uuid
from headwater.store.reads.common import chunks, naive

__all__ = [
    "RunFacet",
    "SentFacet",
    "run_facets_at",
    "straddling_dataset_facets",
    "straddling_facets",
]

_e, _al, _ds, _ns = t.events, t.dataset_aliases, t.datasets, t.namespaces
_f, _v, _r = t.facets, t.dataset_versions, t.runs


class RunFacet(NamedTuple):
    """Which facet of which run: ``kind`` and ``subject`` as in ``facets`` (``input`` or
    ``output`` and a dataset node id, or ``dataset_version`` and the output version's
    uuid), the run that sent it, and the facet's name."""

    run_uuid: str
    kind: str
    subject: str
    name: str


class SentFacet(NamedTuple):
    """A facet as an event sent it: the event's time and hash, and the payload."""

    event_time: datetime
    event_hash: str
    payload: Any


#: The fields of an input and an output holding the facets of each kind.
_ITEM_FACETS = {
    "inputs": (("input", "inputFacets"),),
    "outputs": (("output", "outputFacets"), ("dataset_version", "facets")),
}


def run_facets_at(
    conn: sa.Connection, wanted: Collection[RunFacet], as_of: datetime
) -> dict[RunFacet, SentFacet]:
    """Each of ``wanted`` as the newest of its run's events at or before ``as_of`` sent
    it; a facet none of them sent is left out."""
    if not wanted:
        return {}
    wanted = set(wanted)
    events = list(_events_until(conn, sorted({w.run_uuid for w in wanted}), as_of))
    named = _aliases(conn, {key for _, _, _, event in events for key in _dataset_keys(event)})
    guard = rules.FACETS.guard
    found: dict[RunFacet, dict[str, Any]] = {}
    for run_uuid, event_time, event_hash, event in events:
        sent = {"event_time": event_time, "event_hash": event_hash}
        for field, kinds in _ITEM_FACETS.items():
            for item in _list(event.get(field)):
                for key in _names_of(item, named):
                    for kind, facets_field in kinds:
                        subject = (
                            dataset_version_uuid(key[0], key[1], f"run:{run_uuid}")
                            if kind == "dataset_version"
                            else dataset_node(*key)
                        )
                        facets = item.get(facets_field)
                        for name, payload in facets.items() if isinstance(facets, Mapping) else ():
                            which = RunFacet(run_uuid, kind, subject, name)
                            if payload is None or which not in wanted:
                                continue
                            # The facets table's merge guard picks the newest: the same rule.
                            old = found.get(which)
                            if old is None or (
                                tuple(sent[c] for c in guard) > tuple(old[c] for c in guard)
                            ):
                                found[which] = {**sent, "payload": payload}
    return {
        which: SentFacet(row["event_time"], row["event_hash"], row["payload"])
        for which, row in found.items()
    }


def straddling_dataset_facets(
    conn: sa.Connection,
    node_of: Mapping[int, str],
    name: str,
    by_node: sa.ColumnElement[bool],
    as_of: datetime,
) -> Iterator[tuple[str, SentFacet]]:
    """(dataset node id, facet) of each facet ``name`` about the datasets ``node_of`` names
    (dataset id -> node id) that a run straddling ``as_of`` had sent by then, in place of
    the one it sent later: the run's per-run rows ``by_node`` selects (a condition on
    ``facets``) and the dataset facets of the version it wrote."""
    for node_id, _, sent in straddling_facets(conn, node_of, (name,), by_node, as_of):
        yield node_id, sent


def straddling_facets(
    conn: sa.Connection,
    node_of: Mapping[int, str],
    names: Collection[str],
    by_node: sa.ColumnElement[bool],
    as_of: datetime,
) -> Iterator[tuple[str, RunFacet, SentFacet]]:
    """(dataset node id, which facet, facet) as :func:`straddling_dataset_facets` reads
    them, for each of ``names``, with the run and the row each replaces."""
    when = naive(as_of)
    wanted: dict[RunFacet, str] = {}
    for part in chunks(sorted(set(node_of.values()))):
        for row in conn.execute(
            sa.select(_f.c.kind, _f.c.subject, _f.c.run_uuid, _f.c.name)
            .select_from(_f.join(_r, _r.c.uuid == _f.c.run_uuid))
            .where(
                by_node,
                _f.c.subject.in_(part),
                _f.c.name.in_(sorted(names)),
                _f.c.run_uuid != "",
                _f.c.event_time > when,
                _r.c.created_at <= when,
            )
        ):
            wanted[RunFacet(row.run_uuid, row.kind, row.subject, row.name)] = row.subject
    for part in chunks(sorted(node_of)):
        for row in conn.execute(
            sa.select(_v.c.dataset_id, _v.c.uuid, _v.c.run_uuid, _f.c.name)
            .select_from(
                _f.join(_v, _v.c.uuid == _f.c.subject).join(_r, _r.c.uuid == _v.c.run_uuid)
            )
            .where(
                _f.c.kind == "dataset_version",
                _f.c.run_uuid == "",
                _f.c.name.in_(sorted(names)),
                _v.c.dataset_id.in_(part),
                _f.c.event_time > when,
                _r.c.created_at <= when,
            )
        ):
            which = RunFacet(row.run_uuid, "dataset_version", row.uuid, row.name)
            wanted[which] = node_of[row.dataset_id]
    for which, sent in run_facets_at(conn, wanted, as_of).items():
        yield wanted[which], which, sent


def _events_until(
    conn: sa.Connection, run_uuids: list[str], as_of: datetime
) -> Iterable[tuple[str, datetime, str, Mapping[str, Any]]]:
    """(run, time, hash, decoded payload) of each of the runs' events at or before ``as_of``."""
    for part in chunks(run_uuids):
        for row in conn.execute(
            sa.select(_e.c.run_uuid, _e.c.event_time, _e.c.event_hash, _e.c.payload).where(
                _e.c.run_uuid.in_(part), _e.c.event_time <= naive(as_of)
            )
        ):
            event = json.loads(row.payload)
            if isinstance(event, dict):
                yield row.run_uuid, row.event_time, row.event_hash, event


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dataset_keys(event: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    for field in _ITEM_FACETS:
        for item in _list(event.get(field)):
            if (
                isinstance(item, Mapping)
                and isinstance(item.get("namespace"), str)
                and isinstance(item.get("name"), str)
            ):
                yield item["namespace"], item["name"]


def _names_of(item: Any, named: Mapping[tuple[str, str], tuple[str, str]]) -> set[tuple[str, str]]:
    """The dataset keys an input or output may have been stored under: its name as sent,
    and the dataset the namespace rules made of that name, if they changed it."""
    keys = list(_dataset_keys({"inputs": [item]}))
    return {k for key in keys for k in (key, named.get(key, key))}


def _aliases(
    conn: sa.Connection, keys: set[tuple[str, str]]
) -> dict[tuple[str, str], tuple[str, str]]:
    """The dataset each of ``keys`` (names as sent) became, for those the rules changed."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for part in chunks(sorted({name for _, name in keys})):
        for row in conn.execute(
            sa.select(
                _al.c.namespace.label("raw_namespace"),
                _al.c.name.label("raw_name"),
                _ns.c.name.label("namespace"),
                _ds.c.name,
            )
            .select_from(
                _al.join(_ds, _ds.c.id == _al.c.dataset_id).join(
                    _ns, _ns.c.id == _ds.c.namespace_id
                )
            )
            .where(_al.c.name.in_(part))
        ):
            if (row.raw_namespace, row.raw_name) in keys:
                found[(row.raw_namespace, row.raw_name)] = (row.namespace, row.name)
    return found
