"""The duplicate-work answer from every column edge of a store, each job's columns
read in full and paired by :func:`headwater.graph.duplicates.duplicates`: what
``GET /api/v2/duplicates`` must equal (tests) and what it costs without the
fingerprint table (``benchmarks/duplicates.py``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import sqlalchemy as sa

from headwater.graph.duplicates import ColumnInput, OutputColumn, duplicates
from headwater.server.routes.duplicates import _pair
from headwater.store import tables as t
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import visible

__all__ = ["reference_answer"]


def every_edge(conn: sa.Connection) -> list[Any]:
    """Every stored column edge with the job of the run that last asserted it."""
    cl, r = t.column_lineage, t.runs
    return conn.execute(
        sa.select(
            r.c.job_id,
            cl.c.target_dataset_id,
            cl.c.target_field,
            cl.c.source_dataset_id,
            cl.c.source_field,
            cl.c.transformation_type,
            cl.c.transformation_subtype,
        ).join(r, r.c.uuid == cl.c.run_uuid)
    ).all()


def reference_answer(
    engine: sa.Engine,
    scope: NamespaceScope = EVERYTHING,
    min_share: float = 0.5,
    job: str | None = None,
    namespace: str | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """``duplicates_answer`` computed from every column edge of the store, each job's
    columns read in full (what the answer was before the fingerprint table)."""
    d, ns, j = t.datasets, t.namespaces, t.jobs
    with engine.connect() as conn:
        names = {}
        for table, prefix in ((d, "dataset"), (j, "job")):
            query = (
                sa.select(table.c.id, ns.c.name.label("namespace"), table.c.name)
                .join(ns, ns.c.id == table.c.namespace_id)
                .where(visible(table), scope.where(ns.c.name))
            )
            for row in conn.execute(query):
                names[(prefix, row.id)] = f"{prefix}:{row.namespace}:{row.name}"
        edges = every_edge(conn)
    inputs: dict[tuple[str, str, str], set[ColumnInput]] = defaultdict(set)
    whole: dict[tuple[str, str], set[ColumnInput]] = defaultdict(set)
    for e in edges:
        owner = names.get(("job", e.job_id))
        target = names.get(("dataset", e.target_dataset_id))
        source = names.get(("dataset", e.source_dataset_id))
        if owner is None or target is None or source is None:
            continue
        item = ColumnInput(source, e.source_field, e.transformation_type, e.transformation_subtype)
        if e.target_field:
            inputs[(owner, target, e.target_field)].add(item)
        else:
            whole[(owner, target)].add(item)
    columns = [
        OutputColumn(o, tg, f, frozenset(found | whole.get((o, tg), set())))
        for (o, tg, f), found in inputs.items()
    ]
    wanted = None if job is None else {job}
    if namespace is not None:
        inside = {c.job for c in columns if c.job.startswith(f"job:{namespace}:")}
        wanted = inside if wanted is None else wanted & inside
    pairs = duplicates(columns, min_share, wanted)
    return {
        "minShare": min_share,
        "totalCount": len(pairs),
        "duplicates": [_pair(p) for p in pairs[:limit]],
    }
