"""Data quality of a dataset: its producers' quality facets read as metric histories.

Producers report quality through three OpenLineage facets, each on an input or
output of a run (or on the dataset itself):

* ``dataQualityMetrics`` -- ``rowCount``, ``bytes``, ``fileCount`` and per
  column ``columnMetrics`` (``nullCount``, ``distinctCount``, ``sum``,
  ``count``, ``min``, ``max``);
* ``outputStatistics`` -- ``rowCount``, ``size`` (bytes) and ``fileCount`` of
  what a run wrote;
* ``dataQualityAssertions`` -- ``assertions``, each with ``assertion`` (the
  test, ``not_null``), ``success`` and optionally ``column``, ``name``,
  ``severity``, ``expected`` and ``actual`` (dbt sends these).

An :class:`Observation` is what one run (or one dataset event) said about the
dataset. :func:`quality` turns observations into a history per metric -- one
series per row count, bytes, file count, column metric and assertion -- and the
latest value of each. Facets are free-form JSON: a value of the wrong type is
left out rather than refused, since the event carrying it was accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["COLUMN_METRICS", "QUALITY_FACETS", "Observation", "quality"]

#: The facets quality is read from.
QUALITY_FACETS = ("dataQualityMetrics", "dataQualityAssertions", "outputStatistics")
#: The numeric per-column metrics of ``dataQualityMetrics`` kept as series.
COLUMN_METRICS = ("nullCount", "distinctCount", "count", "sum", "min", "max")
#: Dataset-wide metrics: (series name, dataQualityMetrics key, outputStatistics key).
_DATASET_METRICS = (
    ("rowCount", "rowCount", "rowCount"),
    ("bytes", "bytes", "size"),
    ("fileCount", "fileCount", "fileCount"),
)


@dataclass(frozen=True, slots=True)
class Observation:
    """The quality facets one run (or dataset event) sent about the dataset."""

    time: datetime
    #: The run's id, None for a dataset event.
    run_id: str | None
    #: The run's job node id (``job:NS:NAME``), None for a dataset event.
    job: str | None
    #: The dataset version the run wrote, None when it only read the dataset.
    version: str | None
    #: Facet name -> payload, only the :data:`QUALITY_FACETS`.
    facets: Mapping[str, Any]


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _scalar(value: Any) -> str | None:
    """``expected``/``actual`` of an assertion as text (dbt sends strings, others numbers)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _dataset_metrics(facets: Mapping[str, Any]) -> dict[str, float | int]:
    metrics = facets.get("dataQualityMetrics")
    stats = facets.get("outputStatistics")
    found: dict[str, float | int] = {}
    for series, metrics_key, stats_key in _DATASET_METRICS:
        # A run's own count of what it wrote wins over a metric computed on the data.
        for facet, key in ((stats, stats_key), (metrics, metrics_key)):
            value = _number(facet.get(key)) if isinstance(facet, dict) else None
            if value is not None:
                found[series] = value
                break
    return found


def _column_metrics(facets: Mapping[str, Any]) -> dict[str, dict[str, float | int]]:
    metrics = facets.get("dataQualityMetrics")
    columns = metrics.get("columnMetrics") if isinstance(metrics, dict) else None
    if not isinstance(columns, dict):
        return {}
    found: dict[str, dict[str, float | int]] = {}
    for column, values in columns.items():
        if not isinstance(values, dict):
            continue
        kept = {k: v for k in COLUMN_METRICS if (v := _number(values.get(k))) is not None}
        if kept:
            found[column] = kept
    return found


def _assertions(facets: Mapping[str, Any]) -> list[dict[str, Any]]:
    facet = facets.get("dataQualityAssertions")
    items = facet.get("assertions") if isinstance(facet, dict) else None
    if not isinstance(items, list):
        return []
    found = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("success"), bool):
            continue
        assertion = _text(item.get("assertion")) or _text(item.get("name"))
        if assertion is None:
            continue
        found.append(
            {
                "assertion": assertion,
                "column": _text(item.get("column")),
                "name": _text(item.get("name")),
                "success": item["success"],
                "severity": _text(item.get("severity")),
                "expected": _scalar(item.get("expected")),
                "actual": _scalar(item.get("actual")),
            }
        )
    return found


def _assertion_key(item: Mapping[str, Any]) -> tuple[str, str, str]:
    return (item["assertion"], item["column"] or "", item["name"] or "")


def quality(observations: Iterable[Observation]) -> dict[str, Any]:
    """The latest quality and a series per metric, from ``observations`` in any order.

    ``latest`` holds the last value of each dataset metric and column metric and
    the last result of each assertion (an assertion is its test, column and
    name), with the time and run they came from; ``series`` one list of points,
    oldest first, per metric (``metric``: rowCount, bytes, fileCount, a column
    metric with its ``column``, or ``assertion`` with ``assertion``,
    ``column`` and ``name``); ``observations`` what each run said, oldest first.
    """
    ordered = sorted(observations, key=lambda o: (o.time, o.run_id or "", o.version or ""))
    series: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    latest_metrics: dict[str, dict[str, Any]] = {}
    latest_columns: dict[tuple[str, str], dict[str, Any]] = {}
    latest_assertions: dict[tuple[str, str, str], dict[str, Any]] = {}
    listed = []

    def point(key: tuple[str, str, str, str], obs: Observation, **value: Any) -> None:
        metric, column, assertion, name = key
        line = series.setdefault(
            key,
            {
                "metric": metric,
                "column": column or None,
                "assertion": assertion or None,
                "name": name or None,
                "points": [],
            },
        )
        line["points"].append({"time": obs.time, "runId": obs.run_id, **value})

    for obs in ordered:
        metrics = _dataset_metrics(obs.facets)
        columns = _column_metrics(obs.facets)
        assertions = _assertions(obs.facets)
        if not (metrics or columns or assertions):
            continue
        source = {"time": obs.time, "runId": obs.run_id, "job": obs.job}
        for name, value in metrics.items():
            point((name, "", "", ""), obs, value=value, success=None)
            latest_metrics[name] = {"metric": name, "value": value, **source}
        for column, values in columns.items():
            for name, value in values.items():
                point((name, column, "", ""), obs, value=value, success=None)
                latest_columns[(column, name)] = {
                    "column": column,
                    "metric": name,
                    "value": value,
                    **source,
                }
        for item in assertions:
            key = _assertion_key(item)
            point(("assertion", key[1], key[0], key[2]), obs, value=None, success=item["success"])
            latest_assertions[key] = {**item, **source}
        listed.append(
            {
                **source,
                "version": obs.version,
                "metrics": metrics,
                "columnMetrics": columns,
                "assertions": assertions,
            }
        )
    last_assertions = [latest_assertions[k] for k in sorted(latest_assertions)]
    return {
        "latest": {
            "time": listed[-1]["time"] if listed else None,
            "metrics": [latest_metrics[k] for k in sorted(latest_metrics)],
            "columnMetrics": [latest_columns[k] for k in sorted(latest_columns)],
            "assertions": last_assertions,
            "failedAssertions": sum(1 for a in last_assertions if not a["success"]),
        },
        "series": [series[k] for k in sorted(series)],
        "observations": listed,
    }
