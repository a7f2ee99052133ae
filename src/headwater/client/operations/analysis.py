"""Operations that look across the graph: root cause and duplicate work (``/api/v2``)."""

from __future__ import annotations

from datetime import datetime

from headwater.client.call import Call, model, params, segment, time_param
from headwater.client.models import DuplicateList, RootCause

__all__ = ["duplicates", "root_cause"]

V2 = "/api/v2"
Time = datetime | str | None


def root_cause(
    node_id: str,
    *,
    since: Time = None,
    until: Time = None,
    depth: int = 10,
    max_nodes: int = 1_000,
    limit: int = 100,
) -> Call[RootCause]:
    """What changed upstream of a dataset in a window (default: the 7 days before
    ``until``, itself now by default), oldest first, each with its path."""
    return Call(
        "GET",
        f"{V2}/datasets/{segment(node_id)}/root-cause",
        model(RootCause),
        params(
            since=time_param(since),
            until=time_param(until),
            depth=depth,
            maxNodes=max_nodes,
            limit=limit,
        ),
    )


def duplicates(
    *,
    namespace: str | None = None,
    job: str | None = None,
    min_share: float = 0.5,
    limit: int = 100,
) -> Call[DuplicateList]:
    """Pairs of jobs computing the same output columns, highest share first."""
    return Call(
        "GET",
        f"{V2}/duplicates",
        model(DuplicateList),
        params(namespace=namespace, job=job, minShare=min_share, limit=limit),
    )
