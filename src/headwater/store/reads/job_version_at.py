"""Which version of a job was current at a time: its current version, or the version
of its latest run created at or before that time (what an ``asOf`` walk and the
node lookups both read a job's edges from)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.queries import LATEST_RUN, latest_run_of_job
from headwater.store.reads.common import AsOfSelect, named_in_namespace

__all__ = ["job_version_column", "job_versions_at"]

_j = t.jobs


def job_version_column(until: bool) -> sa.ColumnElement[Any]:
    """A job's version uuid (correlated to ``jobs``): current, or of its latest run
    created at or before the bound parameter ``as_of``.

    As of a time, the version is a correlated ``LIMIT 1`` per job, which both databases
    answer by seeking ``ix_runs_job_id_created_at`` backwards from ``as_of`` (a window
    over every run of every asked job was most of an asOf walk at a million runs).
    """
    if not until:
        return _j.c.current_version_uuid
    # The same run the store picks a job's current version from, up to as_of.
    return latest_run_of_job(
        LATEST_RUN.c.job_version_uuid,
        LATEST_RUN.c.created_at <= sa.bindparam("as_of"),
        LATEST_RUN.c.job_version_uuid.is_not(None),
    )


def _job_versions_statement(until: bool) -> sa.Select[Any]:
    """(job name, version uuid) of the jobs ``names`` in ``namespace``: current, or of
    each job's latest run created at or before ``as_of``."""
    return sa.select(_j.c.name, job_version_column(until)).where(named_in_namespace(_j))


_JOB_VERSIONS = AsOfSelect(_job_versions_statement)


def job_versions_at(
    conn: sa.Connection, keys: Sequence[tuple[str, str]], as_of: datetime | None
) -> dict[tuple[str, str], str]:
    """The version uuid of each job (namespace, name): current, or current at ``as_of``."""
    return {
        (namespace, name): version
        for namespace, (name, version) in _JOB_VERSIONS.rows_by_name(conn, keys, as_of)
        if version is not None
    }
