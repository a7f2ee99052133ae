"""``dataset_drifts``: schema drift rows, re-derived in the write transaction.

A dataset's *chain* is its versions that have a schema (``dataset_versions.fields``
not NULL) in the order ``current_version_uuid`` uses, (``updated_at``, ``uuid``).
Each consecutive pair of the chain whose schemas differ structurally
(:func:`headwater.graph.drift.diff_schemas`) is one row, keyed by the newer
version. So the rows are a function of the stored versions, which are a function
of the set of events.

Per batch, only datasets whose versions the batch touched are visited, and of
each only a suffix of its chain: a touched version's sort key can only have
grown (``updated_at`` keeps the latest event time), and its old and new keys
are both at least its stored ``created_at`` (which only shrinks). So with ``K``
the least ``created_at`` of the dataset's touched versions, every pair that can
have changed has its newer version at ``updated_at >= K``: the rows of those
versions are recomputed from the last schema-bearing version before ``K`` on,
and only the rows that differ are written. A version arriving in order makes
``K`` its own start, so the suffix is the versions of the runs still open; a
late one recomputes from its own time on, both sides of it. The versions, the
version before them and the stored rows come back in one query per batch.

Retention deletes old versions, never moving one: the pairs it changes are
keyed by the first schema-bearing version left after each deleted one, so
:func:`refresh_after_deletion` recomputes, with the same query bounded above
at the last of those, only the versions between them and the one before.

PostgreSQL writers touching the same dataset take turns: the batch's upsert of
the ``datasets`` row holds that row's lock until commit, and every statement
here runs after it, seeing what the other writer committed; retention locks
the rows of the datasets whose versions it deletes before deleting them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from headwater.graph.drift import diff_schemas
from headwater.store import drift_outbox
from headwater.store import tables as t
from headwater.store.chunking import CHUNK, chunks

if TYPE_CHECKING:
    from headwater.store.statements import Statements

__all__ = ["chain_rows", "rebuild", "refresh", "refresh_after_deletion"]

_v, _dd, _sc = t.dataset_versions, t.dataset_drifts, t.schema_contracts
_IDS = sa.bindparam("ids", expanding=True)
_UUIDS = sa.bindparam("uuids", expanding=True)

# Built once (see derive.py). K per dataset: the least created_at of the
# dataset's versions this batch touched (``ids``). Grouped once, not correlated
# per version row: the suffix and the version before it are then range scans of
# (dataset_id, updated_at).
_t = _v.alias("touched")

_COLUMNS = (_v.c.dataset_id, _v.c.uuid, _v.c.updated_at, _v.c.fields)
#: The drift row stored for a version of the suffix, compared with the one wanted.
_STORED = ("previous_version_uuid", "changed_at", "breaking", "changes")
_p = _v.alias("previous")


def _chain(bounded: bool) -> Any:
    """The chain query: unbounded for a batch of written versions (a version that
    moved later changes the pair after it, wherever that is), bounded at the touched
    versions' latest ``updated_at`` after a deletion (nothing moved; only the pairs
    up to the newer sides of the deleted versions changed)."""
    bounds = [sa.func.min(_t.c.created_at).label("since")]
    if bounded:
        bounds.append(sa.func.max(_t.c.updated_at).label("until"))
    k = (sa.select(_t.c.dataset_id, *bounds)
         .where(_t.c.uuid.in_(_IDS)).group_by(_t.c.dataset_id).cte("since"))
    suffix = [_v.c.dataset_id == k.c.dataset_id, _v.c.updated_at >= k.c.since]
    if bounded:
        suffix.append(_v.c.updated_at <= k.c.until)
    # In one round trip: every version from K on (side 1) with the drift row stored
    # for it, with or without a schema (a drift row keyed by one that lost its schema
    # must go too), and the last schema-bearing version before K (side 0, the left
    # side of the suffix's first pair). The suffix comes first: a compound select
    # takes its column types from its first select.
    sides = [
        sa.select(*_COLUMNS, sa.literal(1).label("side"), _dd.c.version_uuid.label("stored"),
                  *(_dd.c[column] for column in _STORED))
        .select_from(k.join(_v, sa.and_(*suffix))
                     .outerjoin(_dd, _dd.c.version_uuid == _v.c.uuid)),
        sa.select(*_COLUMNS, sa.literal(0).label("side"), sa.null().label("stored"),
                  *(sa.null().label(column) for column in _STORED))
        .select_from(k).join(_v, _v.c.uuid == (
            sa.select(_p.c.uuid)
            .where(_p.c.dataset_id == k.c.dataset_id, _p.c.fields.is_not(None),
                   _p.c.updated_at < k.c.since)
            .order_by(_p.c.updated_at.desc(), _p.c.uuid.desc()).limit(1)
            .correlate(k).scalar_subquery())),
    ]
    if not bounded:
        # Side 2: the touched datasets that consumers declare a schema for, whose
        # contracts (store.contract) compare against the chain's latest schema.
        sides.append(
            sa.select(k.c.dataset_id, *(sa.null() for _ in _COLUMNS[1:]),
                      sa.literal(2).label("side"), sa.null().label("stored"),
                      *(sa.null().label(column) for column in _STORED))
            .where(sa.exists().where(_sc.c.dataset_id == k.c.dataset_id)))
    return sa.union_all(*sides)


_CHAIN = _chain(bounded=False)
_CHAIN_BETWEEN = _chain(bounded=True)

_DELETE = _dd.delete().where(_dd.c.version_uuid.in_(_UUIDS))


def chain_rows(dataset_id: int, chain: Iterable[Any]) -> list[dict[str, Any]]:
    """The drift rows of consecutive pairs of ``chain`` (rows with ``uuid``,
    ``updated_at``, ``fields``, already in chain order, schema-less ones skipped)."""
    rows = []
    previous = None
    for version in chain:
        if version.fields is None:
            continue
        if previous is not None:
            drift = diff_schemas(previous.fields, version.fields)
            if drift:
                rows.append({"dataset_id": dataset_id, "version_uuid": version.uuid,
                             "previous_version_uuid": previous.uuid,
                             "changed_at": version.updated_at, "breaking": drift.breaking,
                             "changes": [change.as_dict() for change in drift.changes]})
        previous = version
    return rows


def refresh(conn: sa.Connection, sql: Statements, versions: Sequence[str]) -> dict[int, Any]:
    """Re-derive the drift rows that the batch's ``versions`` (the uuids of the
    versions it wrote) may have changed (see the module doc).

    Returns, for each touched dataset that has schema contracts, its latest
    schema-bearing version (``uuid``, ``updated_at``, ``fields``; None when it
    has none): the suffix holds it, so the contracts need no query of their own.
    """
    # A dataset's versions split over two parts are each recomputed from their
    # own bound: the second pass finds the first one's rows and keeps them.
    return _recompute(conn, sql, chunks(versions), bounded=False)


def refresh_after_deletion(conn: sa.Connection, sql: Statements,
                           spans: Sequence[tuple[str, str]]) -> None:
    """Re-derive the drift rows that deleting versions changed, in the deleting
    transaction (retention); ``spans``, one per dataset, the first schema-bearing
    version left after its earliest deleted version and the one after its latest.

    The rows are recomputed as :func:`refresh` does, from the last schema-bearing
    version before a span on, but only up to the span's end: nothing moved, so no
    pair after it changed. The deleted versions' own rows go
    with them (the caller), and a row whose previous version went is replaced by
    the one between the versions now adjacent, as a rebuild derives it. These
    rows are not announced to the drift webhook: the data did not change, only
    the history kept of it."""
    # A span is never split over two parts: its ends bound one recomputation.
    parts = ([uuid for span in part for uuid in span] for part in chunks(spans, CHUNK // 2))
    _recompute(conn, sql, parts, bounded=True)


def _recompute(conn: sa.Connection, sql: Statements, parts: Iterable[list[str]], *,
               bounded: bool) -> dict[int, Any]:
    latest: dict[int, Any] = {}
    name, chain_query = ("drift:chains-between", _CHAIN_BETWEEN) if bounded else (
        "drift:chains", _CHAIN)
    for part in parts:
        chains: dict[int, list[Any]] = {}
        stored: list[Any] = []
        contracted: list[int] = []
        for row in sql.by_ids(conn, name, chain_query, part):
            if row.side == 2:
                contracted.append(row.dataset_id)
                continue
            chains.setdefault(row.dataset_id, []).append(row)
            if row.stored is not None:
                stored.append(row)
        wanted = {row["version_uuid"]: row for dataset_id, chain in chains.items()
                  for row in chain_rows(dataset_id, sorted(chain, key=_order))}
        _write(conn, stored, wanted, announce=not bounded)
        for dataset_id in contracted:
            schemas = [v for v in chains.get(dataset_id, ()) if v.fields is not None]
            latest[dataset_id] = max(schemas, key=_order) if schemas else None
    return latest


def _order(version: Any) -> tuple[datetime, str]:
    return version.updated_at, version.uuid


def _write(conn: sa.Connection, stored: Sequence[Any], wanted: dict[str, dict[str, Any]], *,
           announce: bool) -> None:
    """Make the ``stored`` drift rows of the suffix equal ``wanted``, writing only
    differences; ``announce`` queues the written ones for the drift webhook."""
    stale: list[str] = []
    for row in stored:
        want = wanted.get(row.stored)
        if want is not None and all(getattr(row, c) == want[c] for c in _STORED):
            del wanted[row.stored]
        else:
            stale.append(row.stored)
    for part in chunks(stale):
        conn.execute(_DELETE, {"uuids": part})
    if wanted:
        conn.execute(_dd.insert(), [wanted[uuid] for uuid in sorted(wanted)])
    if wanted and announce:
        # A new or changed drift is announced (the webhook), from this same transaction.
        drift_outbox.enqueue(conn, (drift_outbox.version_key(uuid) for uuid in wanted))


def rebuild(conn: sa.Connection) -> int:
    """Recompute every dataset's drift rows from its whole chain; how many there are."""
    conn.execute(_dd.delete())
    count = 0
    ordered = sa.select(*_COLUMNS).where(_v.c.fields.is_not(None)).order_by(
        _v.c.dataset_id, _v.c.updated_at, _v.c.uuid)
    chain: list[Any] = []
    for row in conn.execute(ordered):
        if chain and chain[-1].dataset_id != row.dataset_id:
            count += _insert_chain(conn, chain)
            chain = []
        chain.append(row)
    return count + (_insert_chain(conn, chain) if chain else 0)


def _insert_chain(conn: sa.Connection, chain: list[Any]) -> int:
    rows = chain_rows(chain[0].dataset_id, chain)
    if rows:
        conn.execute(_dd.insert(), rows)
    return len(rows)
