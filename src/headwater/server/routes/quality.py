"""``GET /api/v2/datasets/{nodeId}/quality``: a dataset's data quality, latest and over time.

Read from the quality facets producers send (``dataQualityMetrics``,
``dataQualityAssertions``, ``outputStatistics``; :mod:`headwater.graph.quality`
says how each is read) as the store keeps them raw (:mod:`headwater.store.reads.quality`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field

from headwater.graph.quality import QUALITY_FACETS, Observation, quality
from headwater.server.deps import StoreDep
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    ScopeDep,
    connection,
    parse_dataset_path,
    parse_window,
    read_router,
    time_query,
)
from headwater.store.reads.common import aware, dataset_ids
from headwater.store.reads.nodes import require_node
from headwater.store.reads.quality import quality_facets
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["QualityResponse", "quality_answer", "router"]

router = read_router()

_SOURCE = {
    "time": "When the run (or dataset event) sent it (UTC).",
    "runId": "The run that sent it; null for a dataset event.",
    "job": "The run's job node id (`job:NS:NAME`).",
}


class _FromRun(BaseModel):
    time: datetime = Field(description=_SOURCE["time"])
    runId: str | None = Field(description=_SOURCE["runId"])
    job: str | None = Field(description=_SOURCE["job"])


class LatestMetric(_FromRun):
    metric: str = Field(description="rowCount, bytes or fileCount.")
    value: int | float


class LatestColumnMetric(_FromRun):
    column: str
    metric: str = Field(description="nullCount, distinctCount, count, sum, min or max.")
    value: int | float


class Assertion(BaseModel):
    assertion: str = Field(description="The test, as the producer names it (`not_null`).")
    column: str | None = Field(description="The column tested; null for the whole dataset.")
    name: str | None = Field(description="The test's own name, when the producer gives one.")
    success: bool
    severity: str | None
    expected: str | None
    actual: str | None


class LatestAssertion(Assertion, _FromRun):
    pass


class Latest(BaseModel):
    time: datetime | None = Field(description="The newest observation's time.")
    metrics: list[LatestMetric]
    columnMetrics: list[LatestColumnMetric]
    assertions: list[LatestAssertion] = Field(
        description="The last result of each assertion (test, column and name)."
    )
    failedAssertions: int = Field(description="How many of `assertions` failed.")


class Point(BaseModel):
    time: datetime
    runId: str | None
    value: int | float | None = Field(description="The metric's value; null for an assertion.")
    success: bool | None = Field(description="An assertion's result; null for a metric.")


class Series(BaseModel):
    metric: str = Field(
        description="rowCount, bytes, fileCount, a column metric "
        "(nullCount, distinctCount, count, sum, min, max) or `assertion`."
    )
    column: str | None
    assertion: str | None
    name: str | None
    points: list[Point] = Field(description="Oldest first.")


class QualityObservation(_FromRun):
    version: str | None = Field(
        description="The dataset version the run wrote; null when it read the dataset."
    )
    metrics: dict[str, int | float]
    columnMetrics: dict[str, dict[str, int | float]]
    assertions: list[Assertion]


class QualityResponse(BaseModel):
    datasetId: str
    latest: Latest
    series: list[Series]
    observations: list[QualityObservation] = Field(description="Oldest first.")


@router.get(
    "/api/v2/datasets/{nodeId}/quality",
    response_model=QualityResponse,
    responses=error_responses(400, 404),
    tags=["quality"],
)
def get_quality(
    nodeId: str,  # noqa: N803 -- the API's own spelling
    store: StoreDep,
    scope: ScopeDep,
    since: Annotated[str | None, time_query("Observations at or after this time.")] = None,
    until: Annotated[str | None, time_query("Observations before this time.")] = None,
) -> dict[str, Any]:
    """A dataset's data quality from its producers' quality facets: the latest value of
    each metric and assertion, a series per metric, and what each run reported.

    `nodeId` is `dataset:NAMESPACE:NAME`, percent-encoded as one path segment.
    """
    with connection(store) as conn:
        return quality_answer(conn, nodeId, since, until, scope)


def quality_answer(
    conn: Any,
    node_id: str,
    since: str | None,
    until: str | None,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, Any]:
    """The quality answer on an open connection (also used by the CLI)."""
    node = parse_dataset_path(node_id)
    start, end = parse_window(since, until)
    require_node(conn, node, HiddenNodes(conn, scope))
    dataset_id = next(iter(dataset_ids(conn, [(node.namespace, node.name)]).values()))
    groups = quality_facets(conn, dataset_id, str(node), QUALITY_FACETS, start, end, scope)
    answer = quality(
        Observation(
            time=aware(g["time"]) or g["time"],
            run_id=g["runId"],
            job=g["job"],
            version=g["version"],
            facets=g["facets"],
        )
        for g in groups
    )
    return {"datasetId": str(node), **answer}
