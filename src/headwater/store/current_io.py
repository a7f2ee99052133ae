"""``job_current_io``: the inputs and outputs of each job's current version.

Table lineage walks from a dataset to the jobs that write or read it. Through
``run_outputs``/``run_inputs`` that means every run of every job that ever
touched the dataset, then keeping the runs of each job's current version; at
a million runs that query was most of a depth-10 walk. This table
holds the answer: one row per (job, direction, dataset) of the job's current
version.

Why it stays right whatever order events arrive in: a job version is a hash
of the job, its inputs, outputs and source location (``store.derive``), so a
version's inputs and outputs never change, and a job's rows here change only
when ``jobs.current_version_uuid`` does. The derive step calls :func:`refresh`
with exactly those jobs, in the same transaction, after the new current
version is written; the rows are recomputed in SQL from the job's latest run
(by ``created_at`` then ``uuid``, the run that defines the current version),
never from the batch, together with the datasets a JobEvent declares for the
job (``store.declared_io``, which calls :func:`refresh` when a declaration
changes). Duplicates change no version and so nothing here; a late
event that moves a job's latest run moves its current version and refreshes
it. Soft deletes are not reflected here: readers hide deleted nodes on the way
out, as for every other lineage source.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.queries import LATEST_RUN, latest_run_of_job

__all__ = ["INPUT", "OUTPUT", "refresh"]

#: Values of ``job_current_io.direction``.
INPUT = "input"
OUTPUT = "output"

_IDS = sa.bindparam("ids", expanding=True)
_io, _j = t.job_current_io, t.jobs


def _latest_run_rows(link: sa.Table, direction: str) -> sa.Select[tuple[int, str, int]]:
    """(job id, direction, dataset id) of the latest run of each job in ``ids``."""
    latest_run = latest_run_of_job(LATEST_RUN.c.uuid)
    return (
        sa.select(_j.c.id, sa.literal(direction, sa.String(6)), link.c.dataset_id)
        .select_from(_j)
        .join(link, link.c.run_uuid == latest_run)
        .where(_j.c.id.in_(_IDS))
    )


# Built once: building a statement costs more than running it for a small batch.
_DELETE = _io.delete().where(_io.c.job_id.in_(_IDS))
_DECLARED = t.job_declared_io
# ``union`` (not ``union_all``): a dataset both declared and read by the latest run is one row.
_INSERT = _io.insert().from_select(
    ["job_id", "direction", "dataset_id"],
    sa.union(
        _latest_run_rows(t.run_inputs, INPUT),
        _latest_run_rows(t.run_outputs, OUTPUT),
        sa.select(_DECLARED.c.job_id, _DECLARED.c.direction, _DECLARED.c.dataset_id).where(
            _DECLARED.c.job_id.in_(_IDS)
        ),
    ),
)


def refresh(conn: sa.Connection, job_ids: Sequence[int]) -> None:
    """Recompute the rows of ``job_ids``, whose current version has just changed.

    Called by ``store.derive`` inside the write transaction; two statements per
    500 jobs, and nothing at all for a batch that changed no job's version.
    """
    for part in chunks(sorted(set(job_ids))):
        conn.execute(_DELETE, {"ids": part})
        conn.execute(_INSERT, {"ids": part})
