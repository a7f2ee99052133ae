"""The dataset facets a run's inputs sent over time, so they can be answered as of a time.

A dataset facet sent on a run's output, or by a DatasetEvent, is kept with the
dataset version it makes. One sent on an input (a run's, or a JobEvent's input or
output) makes no version, and ``facets`` keeps only the dataset's latest of each
name. ``dataset_facet_history`` keeps every such facet of the names answers as of
a time read (:data:`HISTORY_FACETS`), one row per (dataset node id, facet name,
event): the one in force at a time ``T`` is the row with the greatest
(``event_time``, ``event_hash``) at or before ``T``. Rows are keyed by event, so
a late event older than the newest takes its place in time whatever the arrival
order.

``run_uuid`` is the event's run (NULL for a JobEvent): retention deletes a run's
rows with its raw events and keeps the runs whose events sent the facets in
force at its cutoff (:func:`in_force_runs`), so a rebuild from the raw log makes
the same rows again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.events import ParsedEvent
from headwater.store import dialects
from headwater.store.in_force import in_force_runs as runs_in_force
from headwater.store.keys import DatasetKey, dataset_key, dataset_node, facets_of
from headwater.store.namespace_rules import Normaliser
from headwater.store.tables import JSONType, metadata

__all__ = [
    "HISTORY_FACETS",
    "dataset_facet_history",
    "in_force_runs",
    "record",
    "versionless_facets",
]

#: The dataset facets kept over time: the owners the compliance report answers as
#: of a time, and the quality facets the graph's failed-assertion marks and a
#: dataset's quality history read.
HISTORY_FACETS = ("ownership", "dataQualityAssertions", "dataQualityMetrics", "outputStatistics")

dataset_facet_history = sa.Table(
    "dataset_facet_history",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("subject", sa.Text(), nullable=False),  # dataset node id
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("event_time", sa.DateTime(), nullable=False),
    sa.Column("event_hash", sa.String(64), nullable=False),
    sa.Column("run_uuid", sa.Text(), nullable=True),
    sa.Column("payload", JSONType, nullable=False),
    sa.UniqueConstraint("subject", "name", "event_hash"),
    sa.Index("ix_dataset_facet_history_run_uuid", "run_uuid"),
)
_h = dataset_facet_history


def versionless_facets(
    event: Mapping[str, Any],
) -> Iterator[tuple[DatasetKey, Mapping[str, Any]]]:
    """(dataset key as sent, dataset facets) of each dataset ``event`` sends facets about
    without making a version of it: every input, and a JobEvent's outputs."""
    if "dataset" in event and "job" not in event:
        return  # a DatasetEvent's facets are kept with its version
    places = ["inputs"] if isinstance(event.get("run"), Mapping) else ["inputs", "outputs"]
    for place in places:
        for i, item in enumerate(event.get(place) or ()):
            facets = facets_of(item, "facets")
            if facets:
                yield dataset_key(item, f"{place}[{i}]"), facets


def _rows(events: Iterable[ParsedEvent], names: Normaliser | None) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for ev in events:
        if ev.kind == "dataset":
            continue
        for key, facets in versionless_facets(ev.event):
            # A null facet carries nothing, as in ``facets``.
            sent = [(name, facets[name]) for name in HISTORY_FACETS if facets.get(name) is not None]
            if not sent:
                continue
            subject = dataset_node(*(key if names is None else names.dataset(key)))
            for name, payload in sent:
                # The first an event sends about a dataset counts, as in ``facets``.
                rows.setdefault(
                    (subject, name, ev.event_hash),
                    {
                        "subject": subject,
                        "name": name,
                        "event_time": ev.time,
                        "event_hash": ev.event_hash,
                        "run_uuid": ev.run_uuid,
                        "payload": payload,
                    },
                )
    return list(rows.values())


def record(
    conn: sa.Connection, events: Iterable[ParsedEvent], names: Normaliser | None = None
) -> None:
    """Keep the :data:`HISTORY_FACETS` that ``events`` (newly stored) send about
    datasets without a version; writing an event's rows again changes nothing."""
    rows = _rows(events, names)
    if rows:
        stmt = dialects.insert(conn.dialect.name, _h).on_conflict_do_nothing(
            index_elements=["subject", "name", "event_hash"]
        )
        conn.execute(stmt, rows)


def in_force_runs(conn: sa.Connection, cutoff: datetime) -> set[str]:
    """The runs whose event sent a dataset facet in force at ``cutoff`` (each
    dataset's and name's newest row before it), for retention to keep."""
    return runs_in_force(conn, _h, (_h.c.subject, _h.c.name), cutoff)
