"""The static-lineage declaration of each job in force at a time.

A job's declaration in force at ``as_of`` is its JobEvent declaration with the
greatest (``declared_time``, ``declared_hash``) at or before that time
(``job_declaration_history``, every declaration kept by
:mod:`headwater.store.declared_io`); it holds until the job's next one. Its
datasets are the ``job_declared_io_history`` rows of that declaration.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t

__all__ = ["declared_io_in_force"]

_h, _io = t.job_declaration_history, t.job_declared_io_history


def declared_io_in_force(name: str = "declared_in_force") -> sa.Subquery:
    """(``job_id``, ``direction``, ``dataset_id``) of the declarations in force at the
    bound parameter ``as_of``: ranked per job in the database, so only those rows leave
    it. Declarations are few (JobEvents), so ranking them all costs little."""
    ranked = (
        sa.select(
            _h.c.job_id,
            _h.c.declared_hash,
            sa.func.row_number()
            .over(
                partition_by=_h.c.job_id,
                order_by=(_h.c.declared_time.desc(), _h.c.declared_hash.desc()),
            )
            .label("rank"),
        )
        .where(_h.c.declared_time <= sa.bindparam("as_of"))
        .subquery(f"{name}_ranked")
    )
    columns: list[Any] = [_io.c.job_id, _io.c.direction, _io.c.dataset_id]
    return (
        sa.select(*columns)
        .select_from(
            ranked.join(
                _io,
                sa.and_(
                    _io.c.job_id == ranked.c.job_id, _io.c.declared_hash == ranked.c.declared_hash
                ),
            )
        )
        .where(ranked.c.rank == 1)
        .subquery(name)
    )
