"""Lineage as a pipeline test: capture a PySpark job's lineage, ask it questions, snapshot it.

>>> def test_revenue(lineage_capture):                          # doctest: +SKIP
...     lineage = lineage_capture.run(build_revenue)            # fn(spark), this process
...     assert lineage.output("gold.revenue").column("total").comes_from(
...         "orders.amount", via="AGGREGATION")

The pytest fixtures (``lineage_capture``, ``lineage_snapshot``) live in
:mod:`.plugin`, which pytest loads by entry point. The rest works without
pytest: :func:`capture_in_process` / :func:`capture_script` /
:func:`capture_command` return a :class:`Lineage`; :func:`to_snapshot` and
:func:`diff_snapshots` give its stable form and the difference of two.
See docs/testing.md.
"""

from __future__ import annotations

from headwater.testing.capture import (
    CaptureError,
    capture_command,
    capture_in_process,
    capture_script,
    read_events,
)
from headwater.testing.diff import Change, LineageDiff, diff_snapshots
from headwater.testing.events import lineage_from_events
from headwater.testing.lineage import (
    Column,
    ColumnEdge,
    Dataset,
    Field,
    Lineage,
    LineageAssertionError,
    Output,
    Run,
)
from headwater.testing.snapshot import SnapshotError, dump_snapshot, load_snapshot, to_snapshot

__all__ = [
    "CaptureError",
    "Change",
    "Column",
    "ColumnEdge",
    "Dataset",
    "Field",
    "Lineage",
    "LineageAssertionError",
    "LineageDiff",
    "Output",
    "Run",
    "SnapshotError",
    "capture_command",
    "capture_in_process",
    "capture_script",
    "diff_snapshots",
    "dump_snapshot",
    "lineage_from_events",
    "load_snapshot",
    "read_events",
    "to_snapshot",
]
