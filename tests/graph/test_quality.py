"""headwater.graph.quality: quality facets read as the latest values and a series per metric."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from headwater.graph.quality import Observation, quality


def _at(second: int, facets: dict[str, Any], run: str | None = None) -> Observation:
    return Observation(
        time=datetime(2024, 1, 1, 0, 0, second, tzinfo=UTC),
        run_id=run or f"r{second}",
        job="job:ns:j",
        version=None,
        facets=facets,
    )


def _series(answer: dict[str, Any]) -> dict[tuple[str, str | None, str | None], list[Any]]:
    return {
        (s["metric"], s["column"], s["assertion"]): [
            p["value"] if p["success"] is None else p["success"] for p in s["points"]
        ]
        for s in answer["series"]
    }


def _assert(assertion: str, success: Any, column: str | None = None) -> dict[str, Any]:
    return {"assertion": assertion, "success": success, "column": column}


@pytest.mark.parametrize(
    ("observations", "series"),
    [
        # Row count from dataQualityMetrics; bytes from outputStatistics.size.
        (
            [
                _at(1, {"dataQualityMetrics": {"rowCount": 10, "bytes": 100}}),
                _at(2, {"outputStatistics": {"rowCount": 12, "size": 120, "fileCount": 2}}),
            ],
            {
                ("rowCount", None, None): [10, 12],
                ("bytes", None, None): [100, 120],
                ("fileCount", None, None): [2],
            },
        ),
        # A run's own statistics win over a metric on the same observation.
        (
            [_at(1, {"dataQualityMetrics": {"rowCount": 9}, "outputStatistics": {"rowCount": 10}})],
            {("rowCount", None, None): [10]},
        ),
        # Column metrics per column; non-numbers (and booleans) left out.
        (
            [
                _at(
                    1,
                    {
                        "dataQualityMetrics": {
                            "columnMetrics": {
                                "email": {"nullCount": 3, "distinctCount": 7, "min": "a"},
                                "id": {"nullCount": True},
                                "bad": 5,
                            }
                        }
                    },
                ),
                _at(2, {"dataQualityMetrics": {"columnMetrics": {"email": {"nullCount": 0}}}}),
            ],
            {("nullCount", "email", None): [3, 0], ("distinctCount", "email", None): [7]},
        ),
        # Assertions per (test, column); one without a boolean success is left out.
        (
            [
                _at(
                    2,
                    {
                        "dataQualityAssertions": {
                            "assertions": [
                                _assert("not_null", False, "id"),
                                _assert("unique", True, "id"),
                            ]
                        }
                    },
                ),
                _at(
                    1,
                    {
                        "dataQualityAssertions": {
                            "assertions": [
                                _assert("not_null", True, "id"),
                                _assert("unique", "yes", "id"),
                                "junk",
                            ]
                        }
                    },
                ),
            ],
            {("assertion", "id", "not_null"): [True, False], ("assertion", "id", "unique"): [True]},
        ),
        # Facets of the wrong shape carry nothing.
        (
            [
                _at(
                    1,
                    {
                        "dataQualityMetrics": [1],
                        "dataQualityAssertions": {"assertions": {}},
                        "outputStatistics": "x",
                    },
                )
            ],
            {},
        ),
    ],
    ids=["metrics-and-statistics", "statistics-win", "columns", "assertions", "malformed"],
)
def test_series(observations: list[Observation], series: dict[Any, list[Any]]) -> None:
    assert _series(quality(observations)) == series


def test_latest_keeps_each_measure_from_the_observation_that_last_had_it() -> None:
    answer = quality(
        [
            _at(
                1,
                {
                    "dataQualityMetrics": {
                        "rowCount": 10,
                        "columnMetrics": {"email": {"nullCount": 2}},
                    }
                },
            ),
            _at(
                2,
                {
                    "dataQualityAssertions": {
                        "assertions": [
                            _assert("not_null", False, "email"),
                            _assert("row_count_positive", True),
                        ]
                    }
                },
            ),
            _at(3, {"outputStatistics": {"rowCount": 11}}),
            _at(4, {"dataQualityAssertions": {"assertions": [_assert("not_null", True, "email")]}}),
        ]
    )
    latest = answer["latest"]
    assert latest["time"] == datetime(2024, 1, 1, 0, 0, 4, tzinfo=UTC)
    assert [(m["metric"], m["value"], m["runId"]) for m in latest["metrics"]] == [
        ("rowCount", 11, "r3")
    ]
    assert [(m["column"], m["metric"], m["value"]) for m in latest["columnMetrics"]] == [
        ("email", "nullCount", 2)
    ]
    # The test that last passed at 4 counts as passing; the table test still stands from 2.
    assert [
        (a["assertion"], a["column"], a["success"], a["runId"]) for a in latest["assertions"]
    ] == [("not_null", "email", True, "r4"), ("row_count_positive", None, True, "r2")]
    assert latest["failedAssertions"] == 0
    assert [o["runId"] for o in answer["observations"]] == ["r1", "r2", "r3", "r4"]


def test_no_quality_facets_is_an_empty_answer() -> None:
    answer = quality([_at(1, {})])
    assert answer == {
        "latest": {
            "time": None,
            "metrics": [],
            "columnMetrics": [],
            "assertions": [],
            "failedAssertions": 0,
        },
        "series": [],
        "observations": [],
    }
