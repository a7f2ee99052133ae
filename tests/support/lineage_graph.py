"""Walks over the ``graph`` list of a Marquez-style lineage answer (``GET /api/v1/lineage``)."""

from __future__ import annotations

from collections import deque
from typing import Any


def downstream_path(graph: list[dict[str, Any]], start: str) -> dict[str, str | None]:
    """Breadth-first along outEdges from ``start``: each reached node and where it came from."""
    out = {node["id"]: [e["destination"] for e in node["outEdges"]] for node in graph}
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in out.get(node, []):
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return came_from
