"""The newest facet of one name sent about each dataset, now or as of a time.

A facet about a dataset is kept by the dataset's node id (a run's input or output
facet, per run; the dataset's own facet, latest only), with the dataset version
an output or a DatasetEvent makes, and, for one a run's input sent (which makes
no version), in ``dataset_facet_history``. As of a time the node-keyed rows alone
would hide a facet a later event replaced, so the versions' facets and the
inputs' history count too; the newest is the greatest (event time, event hash),
whatever order the events arrived in.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.dataset_facet_history import dataset_facet_history
from headwater.store.reads.common import chunks, dataset_ids, naive, split_node_key
from headwater.store.reads.run_facets_at import straddling_dataset_facets

__all__ = ["newest_dataset_facets"]

_f, _v, _h = t.facets, t.dataset_versions, dataset_facet_history


def newest_dataset_facets(
    conn: sa.Connection,
    subjects: Sequence[str],
    name: str,
    by_node: sa.ColumnElement[bool],
    as_of: datetime | None = None,
) -> dict[str, Any]:
    """The payload of the newest facet ``name`` about each dataset node id in ``subjects``.

    ``by_node`` says which facets kept by node id count (a condition on ``facets``).
    With ``as_of``, only facets sent at or before it, those kept with a dataset
    version and those a run's inputs sent included (``name`` one of
    ``HISTORY_FACETS`` for the latter).
    """
    until = [_f.c.event_time <= naive(as_of)] if as_of is not None else []
    newest: dict[str, tuple[datetime, str, Any]] = {}

    def offer(subject: str, time: datetime, digest: str, payload: Any) -> None:
        known = newest.get(subject)
        if known is None or (time, digest) > known[:2]:
            newest[subject] = (time, digest, payload)

    for part in chunks(sorted(set(subjects))):
        for row in conn.execute(
            sa.select(_f.c.subject, _f.c.event_time, _f.c.event_hash, _f.c.payload).where(
                by_node, _f.c.subject.in_(part), _f.c.name == name, *until
            )
        ):
            offer(row.subject, row.event_time, row.event_hash, row.payload)
    if as_of is not None:
        keys = {split_node_key(s): s for s in set(subjects)}
        node_of = {i: keys[key] for key, i in dataset_ids(conn, list(keys)).items()}
        for part in chunks(sorted(node_of)):
            for row in conn.execute(
                sa.select(_v.c.dataset_id, _f.c.event_time, _f.c.event_hash, _f.c.payload)
                .select_from(_f.join(_v, _v.c.uuid == _f.c.subject))
                .where(
                    _f.c.kind == "dataset_version",
                    _f.c.run_uuid == "",
                    _f.c.name == name,
                    _v.c.dataset_id.in_(part),
                    *until,
                )
            ):
                offer(node_of[row.dataset_id], row.event_time, row.event_hash, row.payload)
        # A run going on at as_of keeps only the facet its later event sent: read back.
        for subject, sent in straddling_dataset_facets(conn, node_of, name, by_node, as_of):
            offer(subject, *sent)
        for part in chunks(sorted(set(subjects))):
            for row in conn.execute(
                sa.select(_h.c.subject, _h.c.event_time, _h.c.event_hash, _h.c.payload).where(
                    _h.c.subject.in_(part), _h.c.name == name, _h.c.event_time <= naive(as_of)
                )
            ):
                offer(row.subject, row.event_time, row.event_hash, row.payload)
    return {subject: payload for subject, (_, _, payload) in newest.items()}
