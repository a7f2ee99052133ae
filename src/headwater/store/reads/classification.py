"""Classification, read side: what tag propagation walks, as of a time.

Nothing here is materialised on the write path: every answer is read from
facts the store keeps anyway, each a function of the set of events, so the
propagated tags are too (the walk itself: :mod:`headwater.graph.tags`).

* **Edges** (:func:`column_edges`): for each (job, output dataset), the
  ``columnLineage`` facet of the output version written by the job's latest
  run (greatest (``runs.created_at``, ``uuid``)) that had reported one by
  ``as_of``, among runs started at or before it. The facet is the one the
  run's newest event (by event time, then hash) at or before ``as_of`` sent. So
  a job's new run that stops reading a column retracts the edge from then on,
  and an earlier ``as_of`` still sees it. The ranking runs in the database
  (``row_number``), so one payload per (job, dataset) is read: on a
  40,000-event store a compliance report takes about 65 ms on SQLite. A run
  still going at ``as_of`` whose stored facet came later (its START before,
  its COMPLETE after) is read back from its raw events up to ``as_of``
  (:mod:`~headwater.store.reads.run_facets_at`, which says how such runs are
  found); only those runs pay for it.
* **Tags** (:func:`tag_assignments`): assignments (from ``tags`` facets,
  schema field tags and the API) whose ``created_at`` is at or before ``as_of``,
  and those the API took off after ``as_of`` (``tag_history``).
* **Definitions** (:func:`propagation_flags`): the ``propagates`` flag each
  definition had at ``as_of`` (``tag_history``); a tag without one then
  follows the default list.
* **Blocks** (:func:`blocks`): created at or before ``as_of`` and not removed by then.
* **Owners** (:func:`owners_of`): the ``owners`` of the latest ``ownership``
  facet of each dataset and job, and those set through the API. As of a time
  (:func:`owners_at`) a dataset's come from the newest ``ownership`` facet sent
  by then (each dataset version keeps its facets), a job's from the newest in
  ``job_ownership_history`` sent by then, and the API's are those added by then
  and not taken off by then (``owners`` and ``owner_history``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.store import classification as c
from headwater.store import tables as t
from headwater.store.job_ownership import job_ownership_history
from headwater.store.keys import field_node, job_node
from headwater.store.reads.common import chunks, dataset_ids, naive, split_node_key
from headwater.store.reads.dataset_facets_at import newest_dataset_facets
from headwater.store.reads.run_facets_at import RunFacet, run_facets_at
from headwater.store.reads.scope import EVERYTHING, NamespaceScope

__all__ = [
    "BlockRow",
    "EdgeRow",
    "TagRow",
    "blocks",
    "column_edges",
    "dataset_columns",
    "definitions",
    "owners_at",
    "owners_of",
    "propagation_flags",
    "tag_assignments",
]

_h = c.tag_history
_f, _v, _r, _j, _d, _ns = (t.facets, t.dataset_versions, t.runs, t.jobs, t.datasets,
                           t.namespaces)
_jns, _dns = _ns.alias("job_ns"), _ns.alias("dataset_ns")
_LINEAGE_FACETS = (
    _f.join(_v, _v.c.uuid == _f.c.subject).join(_r, _r.c.uuid == _v.c.run_uuid))
_IS_LINEAGE = sa.and_(_f.c.kind == "dataset_version", _f.c.run_uuid == "",
                      _f.c.name == "columnLineage")


_NAMES = (_f.c.payload, _jns.c.name.label("job_namespace"), _j.c.name.label("job_name"),
          _dns.c.name.label("namespace"), _d.c.name.label("name"))
_SENT_AFTER = _f.c.event_time > sa.bindparam("as_of")


def _ranked_lineage(where: list[sa.ColumnElement[bool]], partition: tuple[Any, ...],
                    columns: tuple[Any, ...], keep: sa.ColumnElement[bool] | None
                    ) -> sa.Select[Any]:
    """The columnLineage facets ``where`` selects, numbered newest run first (by
    ``runs.created_at``, ``uuid``) within each ``partition``; those numbered 1 (or that
    ``keep`` keeps), with ``columns``. Ranked in SQL, so only those payloads leave the
    database."""
    ranked = (
        sa.select(_f.c.id.label("facet_id"), sa.func.row_number().over(
            partition_by=partition,
            order_by=(_r.c.created_at.desc(), _r.c.uuid.desc())).label("rank"))
        .select_from(_LINEAGE_FACETS).where(_IS_LINEAGE, *where).subquery("ranked"))
    first = ranked.c.rank == 1
    return (
        sa.select(*columns)
        .select_from(
            ranked.join(_f, _f.c.id == ranked.c.facet_id).join(_v, _v.c.uuid == _f.c.subject)
            .join(_r, _r.c.uuid == _v.c.run_uuid).join(_j, _j.c.id == _r.c.job_id)
            .join(_jns, _jns.c.id == _j.c.namespace_id).join(_d, _d.c.id == _v.c.dataset_id)
            .join(_dns, _dns.c.id == _d.c.namespace_id))
        .where(first if keep is None else sa.or_(first, keep)))


_BY_JOB_AND_DATASET = (_r.c.job_id, _v.c.dataset_id)
_STARTED = _r.c.created_at <= sa.bindparam("as_of")
# Built once (building and cache-keying a statement costs more than small reads).
#: Each (job, dataset)'s latest run's facet.
_CURRENT = _ranked_lineage([], _BY_JOB_AND_DATASET, _NAMES, None)
#: ... among runs started at or before ``as_of``, with the time the facet was sent.
_AS_OF = _ranked_lineage([_STARTED], _BY_JOB_AND_DATASET,
                         (*_NAMES, _f.c.event_time.label("sent_at"), *_BY_JOB_AND_DATASET),
                         None)
#: ... of the ``jobs``' runs, ranked apart by whether the facet was sent after ``as_of``:
#: each (job, dataset)'s latest run whose facet was sent by then, and every run whose
#: facet was sent later (those still going then).
_IN_FLIGHT = _ranked_lineage(
    [_STARTED, _r.c.job_id.in_(sa.bindparam("jobs", expanding=True))],
    (*_BY_JOB_AND_DATASET, _SENT_AFTER),
    (*_NAMES, _f.c.event_time.label("sent_at"), *_BY_JOB_AND_DATASET, _r.c.created_at,
     _r.c.uuid.label("run_uuid"), _v.c.uuid.label("version")),
    _SENT_AFTER)


@dataclass(frozen=True, slots=True)
class EdgeRow:
    """One column edge of a job's current columnLineage facet (node ids)."""

    source: str
    target: str
    job: str
    transformation_type: str
    transformation_subtype: str
    masking: bool


@dataclass(frozen=True, slots=True)
class TagRow:
    tag: str
    subject: str  # dataset or datasetField node id
    source: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class BlockRow:
    id: int
    job: str
    source: str | None
    target: str | None
    tag: str | None
    reason: str | None
    created_at: datetime
    removed_at: datetime | None


def column_edges(conn: sa.Connection, as_of: datetime | None) -> list[EdgeRow]:
    """Every column edge in force at ``as_of`` (now when None); see the module doc."""
    edges: set[EdgeRow] = set()
    if as_of is None:
        for row in conn.execute(_CURRENT):
            edges.update(_row_edges(row))
    else:
        edges.update(_edges_at(conn, as_of))
    return sorted(edges, key=lambda e: (e.source, e.target, e.job, e.transformation_type,
                                        e.transformation_subtype))


def _row_edges(row: Any) -> Iterable[EdgeRow]:
    """The edges of a facet row (``payload`` and whose it is: job and dataset names)."""
    job = job_node(row.job_namespace, row.job_name)
    return _facet_edges(row.payload, row.namespace, row.name, job)


def _edges_at(conn: sa.Connection, as_of: datetime) -> Iterator[EdgeRow]:
    """The edges in force at ``as_of``: each (job, output dataset)'s latest run's facet,
    when that run sent it by then; the others are run still going then
    (:func:`_in_flight_edges`). A row's edges leave as it is read, so no payload is
    held: holding them all costs the garbage collector more than the rest."""
    when = naive(as_of)
    assert when is not None
    going: set[tuple[int, int]] = set()
    # Unpacked by position: a row's attributes cost more than the rest of the loop.
    for (payload, job_namespace, job_name, namespace, name, sent_at, job_id,
         dataset_id) in conn.execute(_AS_OF, {"as_of": when}):
        if sent_at <= when:
            yield from _facet_edges(payload, namespace, name, job_node(job_namespace, job_name))
        else:
            going.add((job_id, dataset_id))
    if going:
        yield from _in_flight_edges(conn, going, when)


def _in_flight_edges(conn: sa.Connection, going: set[tuple[int, int]],
                     when: datetime) -> Iterator[EdgeRow]:
    """The edges in force at ``when`` of the (job, dataset)s in ``going``, whose latest
    run sent its facet after ``when``: of the newest run whose events up to ``when``
    sent one, read back from them (:mod:`~headwater.store.reads.run_facets_at`), or else
    of the latest run whose facet was sent by then."""
    settled: dict[tuple[int, int], Any] = {}
    straddling: dict[tuple[int, int], list[Any]] = {}
    for part in chunks(sorted({job for job, _ in going})):
        for row in conn.execute(_IN_FLIGHT, {"as_of": when, "jobs": part}):
            key = (row.job_id, row.dataset_id)
            if key not in going:
                continue
            if row.sent_at <= when:
                settled[key] = row
            else:
                straddling.setdefault(key, []).append(row)
    newer: dict[tuple[int, int], list[Any]] = {}
    for key, rows in straddling.items():
        floor = settled.get(key)
        newer[key] = sorted(
            (row for row in rows
             if floor is None or (row.created_at, row.run_uuid) > (floor.created_at,
                                                                     floor.run_uuid)),
            key=lambda row: (row.created_at, row.run_uuid), reverse=True)

    def which(row: Any) -> RunFacet:
        return RunFacet(row.run_uuid, "dataset_version", row.version, "columnLineage")

    sent = run_facets_at(conn, [which(row) for rows in newer.values() for row in rows], when)
    for key in going:
        then = next(((row, sent[which(row)]) for row in newer.get(key, ())
                     if which(row) in sent), None)
        if then is not None:
            row, facet = then
            job = job_node(row.job_namespace, row.job_name)
            yield from _facet_edges(facet.payload, row.namespace, row.name, job)
        elif key in settled:
            yield from _row_edges(settled[key])


def _facet_edges(facet: Any, namespace: str, name: str, job: str) -> Iterable[EdgeRow]:
    """The field-level edges of one columnLineage facet (dataset-level entries copy
    no value into a named field, so they are left out)."""
    fields = facet.get("fields") if isinstance(facet, Mapping) else None
    if not isinstance(fields, Mapping):
        return
    for target_field, spec in fields.items():
        if not isinstance(spec, Mapping) or not isinstance(spec.get("inputFields"), list):
            continue
        target = field_node(namespace, name, target_field)
        for source in spec["inputFields"]:
            if not isinstance(source, Mapping) or not all(
                    isinstance(source.get(k), str) for k in ("namespace", "name", "field")):
                continue
            source_id = field_node(source["namespace"], source["name"], source["field"])
            transformations = source.get("transformations")
            if isinstance(transformations, list) and transformations:
                for tr in transformations:
                    if isinstance(tr, Mapping):
                        yield EdgeRow(source_id, target, job, _text(tr.get("type")),
                                      _text(tr.get("subtype")), tr.get("masking") is True)
            else:
                # Pre-1.x facets describe the transformation on the target field.
                yield EdgeRow(source_id, target, job, "", _text(spec.get("transformationType")),
                              False)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _data_subject(subject: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    return sa.or_(subject.startswith("dataset:"), subject.startswith("datasetField:"))


def _held(when: datetime) -> sa.ColumnElement[bool]:
    return sa.and_(_h.c.valid_from <= when, sa.or_(_h.c.valid_to.is_(None), _h.c.valid_to > when))


def tag_assignments(conn: sa.Connection, as_of: datetime | None) -> list[TagRow]:
    """Tags on datasets and columns at ``as_of`` (now when None): the assignments
    made by then, and those the API has taken off since."""
    ta, tg = t.tag_assignments, t.tags
    query = (sa.select(tg.c.name, ta.c.subject, ta.c.source, ta.c.created_at)
             .join(tg, tg.c.id == ta.c.tag_id).where(_data_subject(ta.c.subject)))
    if as_of is None:
        return [TagRow(row.name, row.subject, row.source, row.created_at)
                for row in conn.execute(query)]
    when = naive(as_of)
    assert when is not None
    rows = {(row.name, row.subject): TagRow(row.name, row.subject, row.source, row.created_at)
            for row in conn.execute(query.where(ta.c.created_at <= when))}
    removed = sa.select(_h.c.tag, _h.c.subject, _h.c.valid_from).where(
        _h.c.kind == "assignment", _data_subject(_h.c.subject), _held(when))
    for row in conn.execute(removed):
        rows.setdefault((row.tag, row.subject), TagRow(row.tag, row.subject, "api", row.valid_from))
    return list(rows.values())


def definitions(conn: sa.Connection) -> list[dict[str, Any]]:
    """The tag definitions users made, by name."""
    d = c.tag_definitions
    query = sa.select(d.c.name, d.c.propagates, d.c.description, d.c.created_at,
                      d.c.updated_at).order_by(d.c.name)
    return [dict(row._mapping) for row in conn.execute(query)]


def propagation_flags(conn: sa.Connection, as_of: datetime | None) -> dict[str, bool]:
    """Each defined tag's ``propagates`` flag as it was at ``as_of`` (now when None)."""
    if as_of is None:
        return {row["name"]: row["propagates"] for row in definitions(conn)}
    when = naive(as_of)
    assert when is not None
    query = sa.select(_h.c.tag, _h.c.propagates).where(_h.c.kind == "definition", _held(when))
    return {row.tag: bool(row.propagates) for row in conn.execute(query)}


def blocks(conn: sa.Connection, as_of: datetime | None, *,
           include_removed: bool = False, scope: NamespaceScope = EVERYTHING) -> list[BlockRow]:
    """Blocks in force at ``as_of`` (now when None), or every one ever made; only those
    whose job and fields are inside ``scope``."""
    b = c.propagation_blocks
    query = sa.select(b).order_by(b.c.id)
    if not include_removed:
        if as_of is None:
            query = query.where(b.c.removed_at.is_(None))
        else:
            when = naive(as_of)
            query = query.where(b.c.created_at <= when,
                                sa.or_(b.c.removed_at.is_(None), b.c.removed_at > when))
    return [BlockRow(row.id, row.job, row.source_field, row.target_field, row.tag, row.reason,
                     row.created_at, row.removed_at) for row in conn.execute(query)
            if all(scope.sees_node(node) for node in (row.job, row.source_field, row.target_field)
                   if node)]


def dataset_columns(conn: sa.Connection, datasets: Iterable[str]) -> dict[str, list[str]]:
    """The current field names of each dataset node id, in schema order."""
    wanted = sorted(set(datasets))
    keys = {split_node_key(node): node for node in wanted}
    ids = dataset_ids(conn, list(keys))
    by_id = {ds_id: keys[key] for key, ds_id in ids.items()}
    out: dict[str, list[str]] = {node: [] for node in wanted}
    fl = t.fields
    for part in chunks(sorted(by_id)):
        query = (sa.select(fl.c.dataset_id, fl.c.name).where(fl.c.dataset_id.in_(part))
                 .order_by(fl.c.dataset_id, fl.c.position))
        for row in conn.execute(query):
            out[by_id[row.dataset_id]].append(row.name)
    return out


def owners_of(conn: sa.Connection, subjects: Iterable[str]) -> dict[str, list[dict[str, str]]]:
    """Owners of each dataset or job node id: ``ownership`` facets' and the API's,
    each ``{name, type, source}`` (source ``facet`` or ``api``), sorted."""
    wanted = sorted(set(subjects))
    found: dict[str, set[tuple[str, str, str]]] = {s: set() for s in wanted}
    o = c.owners
    for part in chunks(wanted):
        facet_rows = conn.execute(sa.select(_f.c.subject, _f.c.payload).where(
            _f.c.kind.in_(("dataset", "job")), _f.c.run_uuid == "", _f.c.name == "ownership",
            _f.c.subject.in_(part)))
        for row in facet_rows:
            owners = row.payload.get("owners") if isinstance(row.payload, Mapping) else None
            for owner in owners if isinstance(owners, list) else ():
                if isinstance(owner, Mapping) and isinstance(owner.get("name"), str):
                    found[row.subject].add((owner["name"], _text(owner.get("type")), "facet"))
        for row in conn.execute(sa.select(o.c.subject, o.c.name, o.c.type)
                                .where(o.c.subject.in_(part))):
            found[row.subject].add((row.name, row.type, "api"))
    return {subject: [{"name": n, "type": kind, "source": src} for n, kind, src in sorted(rows)]
            for subject, rows in found.items()}


def _owner_entries(payload: Any) -> list[tuple[str, str]]:
    owners = payload.get("owners") if isinstance(payload, Mapping) else None
    return [(owner["name"], _text(owner.get("type")))
            for owner in (owners if isinstance(owners, list) else ())
            if isinstance(owner, Mapping) and isinstance(owner.get("name"), str)]


def _dataset_ownership_at(conn: sa.Connection, subjects: list[str],
                          as_of: datetime) -> dict[str, Any]:
    """The payload of the newest ``ownership`` facet sent at or before ``as_of`` about
    each dataset node id: on one of its versions or on the dataset itself."""
    return newest_dataset_facets(conn, subjects, "ownership",
                                 sa.and_(_f.c.kind == "dataset", _f.c.run_uuid == ""), as_of)


def _job_ownership_at(conn: sa.Connection, subjects: list[str],
                      as_of: datetime) -> dict[str, Any]:
    """The payload of the newest ``ownership`` facet sent at or before ``as_of`` about
    each job node id."""
    h = job_ownership_history
    newest: dict[str, tuple[datetime, str, Any]] = {}
    for part in chunks(subjects):
        for row in conn.execute(
                sa.select(h.c.subject, h.c.event_time, h.c.event_hash, h.c.payload)
                .where(h.c.subject.in_(part), h.c.event_time <= naive(as_of))):
            known = newest.get(row.subject)
            if known is None or (row.event_time, row.event_hash) > known[:2]:
                newest[row.subject] = (row.event_time, row.event_hash, row.payload)
    return {subject: payload for subject, (_, _, payload) in newest.items()}


def _api_owners_at(conn: sa.Connection, subjects: list[str],
                   as_of: datetime) -> dict[str, set[tuple[str, str]]]:
    """(name, type) of the owners set through the API on each node id that held at
    ``as_of``: added by then and not taken off by then."""
    o, gone = c.owners, c.owner_history
    when = naive(as_of)
    found: dict[str, set[tuple[str, str]]] = {s: set() for s in subjects}
    for part in chunks(subjects):
        for row in conn.execute(sa.select(o.c.subject, o.c.name, o.c.type).where(
                o.c.subject.in_(part), o.c.created_at <= when)):
            found[row.subject].add((row.name, row.type))
        for row in conn.execute(sa.select(gone.c.subject, gone.c.name, gone.c.type).where(
                gone.c.subject.in_(part), gone.c.valid_from <= when, gone.c.valid_to > when)):
            found[row.subject].add((row.name, row.type))
    return found


def owners_at(conn: sa.Connection, subjects: Iterable[str],
              as_of: datetime | None) -> dict[str, list[dict[str, Any]]]:
    """Owners of each dataset or job node id as of ``as_of`` (now when None), each
    ``{name, type, source, current}``, sorted. With ``as_of`` they are the owners in
    force then (``current: false``): the ``ownership`` facet sent last by then (a
    dataset's kept per version, a job's in ``job_ownership_history``) and the API's
    owners added by then and not yet taken off; without it today's (``current: true``)."""
    if as_of is None:
        return {subject: [{**owner, "current": True} for owner in owners]
                for subject, owners in owners_of(conn, subjects).items()}
    wanted = sorted(set(subjects))
    datasets = [s for s in wanted if s.startswith("dataset:")]
    jobs = [s for s in wanted if not s.startswith("dataset:")]
    facets = {**_dataset_ownership_at(conn, datasets, as_of),
              **_job_ownership_at(conn, jobs, as_of)}
    api = _api_owners_at(conn, wanted, as_of)
    result: dict[str, list[dict[str, Any]]] = {}
    for subject in wanted:
        rows = {(name, kind, "facet") for name, kind in _owner_entries(facets.get(subject))}
        rows |= {(name, kind, "api") for name, kind in api[subject]}
        result[subject] = [{"name": name, "type": kind, "source": source, "current": False}
                           for name, kind, source in sorted(rows)]
    return result
