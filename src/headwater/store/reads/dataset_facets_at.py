"""The newest facet of one name sent about each dataset, now or as of a time.

A facet about a dataset is kept by the dataset's node id (a run's input or output
facet, per run; the dataset's own facet, latest only) and, when a DatasetEvent
sent it, with the dataset version that event makes. As of a time the node-keyed
rows alone would hide a facet a later DatasetEvent replaced, so the versions'
facets count too; the newest is the greatest (event time, event hash), whatever
order the events arrived in.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.reads.common import chunks, dataset_ids, naive, split_node_key

__all__ = ["newest_dataset_facets"]

_f, _v = t.facets, t.dataset_versions


def newest_dataset_facets(
    conn: sa.Connection,
    subjects: Sequence[str],
    name: str,
    by_node: sa.ColumnElement[bool],
    as_of: datetime | None = None,
) -> dict[str, Any]:
    """The payload of the newest facet ``name`` about each dataset node id in ``subjects``.

    ``by_node`` says which facets kept by node id count (a condition on ``facets``).
    With ``as_of``, only facets sent at or before it, those kept with a DatasetEvent's
    version included.
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
    return {subject: payload for subject, (_, _, payload) in newest.items()}
