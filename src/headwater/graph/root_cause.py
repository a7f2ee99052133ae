"""Root cause: what changed upstream of a dataset, in time order, each with its path to it.

An answer to "this table looks wrong -- why?" gathers four kinds of finding about the
dataset and everything upstream of it within a time window:

* a **version drift** of an upstream dataset (its schema changed between versions);
* a **contract drift** of an upstream dataset against a consumer job on the way to
  the dataset (the job declares a schema the dataset is not written with);
* a **failed run** of an upstream job;
* a **quality failure** of an upstream dataset (a run reported failed assertions).

:func:`upstream` walks table lineage upstream (dataset <- job <- dataset ...) and
keeps one shortest path from every node it meets to the start, so each finding can
say how it reaches the dataset. ``depth`` counts jobs crossed: the start is at depth
0, the jobs that write it and the datasets they read at depth 1, and so on.

:func:`root_causes` keeps the findings on nodes the walk met (a contract drift only
when its consumer job is on the way) and orders them by time, oldest first: the
earliest change is the likeliest cause of what follows it. Findings at one instant
are ordered farther upstream first, then drift before failed run before quality
failure (a schema change makes a run fail, and a failed run leaves bad data), then
by subject, so the order is total and the same for any order of input.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from headwater.graph.model import Direction
from headwater.graph.traverse import NeighbourSource

__all__ = ["Cause", "CauseKind", "Finding", "Upstream", "root_causes", "upstream"]


class CauseKind(enum.Enum):
    """What a finding is; the values are the API's spelling."""

    VERSION_DRIFT = "versionDrift"
    CONTRACT_DRIFT = "contractDrift"
    FAILED_RUN = "failedRun"
    QUALITY_FAILURE = "qualityFailure"


# Cause before effect at one instant (see the module docstring).
_KIND_ORDER = {kind: rank for rank, kind in enumerate(CauseKind)}


@dataclass(frozen=True, slots=True)
class Upstream:
    """The nodes upstream of ``start`` within ``depth`` jobs, each with one shortest path.

    ``paths[node]`` lists the node ids from ``node`` down to ``start``, both included.
    """

    start: str
    depth: int
    paths: Mapping[str, tuple[str, ...]]
    truncated: bool = False

    def datasets(self) -> list[str]:
        return sorted(n for n in self.paths if n.startswith("dataset:"))

    def jobs(self) -> list[str]:
        return sorted(n for n in self.paths if n.startswith("job:"))

    def depth_of(self, node_id: str) -> int:
        """How many jobs lie between ``node_id`` and the start, ``node_id`` included."""
        return sum(1 for n in self.paths[node_id] if n.startswith("job:"))


def upstream(source: NeighbourSource, start: str, depth: int, max_nodes: int = 1_000) -> Upstream:
    """Walk table lineage upstream of the dataset ``start`` across at most ``depth`` jobs,
    admitting at most ``max_nodes`` nodes (the start included); breadth-first, one
    neighbour query per level, so each path kept is a shortest one."""
    if depth < 0:
        raise ValueError("depth must be >= 0")
    if max_nodes < 1:
        raise ValueError("max_nodes must be >= 1")
    toward: dict[str, str | None] = {start: None}  # node -> its next node toward start
    frontier = [start]
    truncated = False
    for _edge in range(2 * depth):
        if not frontier:
            break
        found: list[str] = []
        for edge in source.edges_from(frontier, Direction.UPSTREAM):
            near, far = edge.downstream, edge.upstream
            if near not in toward or far in toward:
                continue
            if len(toward) >= max_nodes:
                truncated = True
                continue
            toward[far] = near
            found.append(far)
        frontier = sorted(found)
    paths: dict[str, tuple[str, ...]] = {}
    for node in toward:
        path = [node]
        while (after := toward[path[-1]]) is not None:
            path.append(after)
        paths[node] = tuple(path)
    return Upstream(start, depth, paths, truncated)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something that happened to ``subject`` (a dataset or job node id) at ``time``.

    ``via`` is the consumer job of a contract drift: the drift matters to the start
    only when that job is upstream of it. ``key`` tells findings of one subject and
    time apart (a version, a run id); ``detail`` is carried to the answer untouched.
    """

    kind: CauseKind
    time: datetime
    subject: str
    key: str = ""
    via: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Cause:
    """A finding placed on the graph: its path to the start and the jobs between."""

    finding: Finding
    path: tuple[str, ...]
    depth: int


def _placed(finding: Finding, walk: Upstream) -> Cause | None:
    if finding.via is not None:
        if finding.via not in walk.paths or finding.subject not in walk.paths:
            return None
        path = (finding.subject, *walk.paths[finding.via])
    elif finding.subject in walk.paths:
        path = walk.paths[finding.subject]
    else:
        return None
    return Cause(finding, path, sum(1 for n in path if n.startswith("job:")))


def root_causes(walk: Upstream, findings: Iterable[Finding]) -> list[Cause]:
    """The findings on ``walk``'s nodes, oldest first (the module docstring gives the
    order of ties); a finding met twice is kept once."""
    placed = {c.finding: c for f in findings if (c := _placed(f, walk)) is not None}
    return sorted(
        placed.values(),
        key=lambda c: (
            c.finding.time,
            -c.depth,
            _KIND_ORDER[c.finding.kind],
            c.finding.subject,
            c.finding.key,
            c.finding.via or "",
        ),
    )
