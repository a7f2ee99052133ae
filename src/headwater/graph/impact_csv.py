"""The CSV form of an impact answer, one row per impacted node."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

__all__ = ["CSV_COLUMNS", "to_csv"]

#: The columns of the CSV form of an answer, one row per impacted node.
CSV_COLUMNS = ("id", "type", "depth", "impact", "path", "pathEdges")


def to_csv(answer: Mapping[str, Any]) -> str:
    """The CSV form of an ``/api/v2/impact`` JSON answer: one row per impacted node, its
    path's ids joined by ``" > "`` and the kind of each edge on it joined likewise.

    It reads the JSON form so that the server and a CLI talking to it write the same rows.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for node in answer["nodes"]:
        path, kinds = " > ".join(node["path"]), " > ".join(node["pathEdges"])
        writer.writerow([node["id"], node["type"], node["depth"], node["impact"], path, kinds])
    return out.getvalue()
