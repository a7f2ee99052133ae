"""Root cause on the hand-built retail graph: the upstream walk's paths, which findings are
kept, and their order, table by table."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from headwater.graph.root_cause import CauseKind, Finding, root_causes, upstream
from headwater.graph.traverse import EdgeIndex
from tests.graph.retail import TABLE_EDGES, ds, job

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("start", "depth", "node", "path"),
    [
        (ds("gold.revenue"), 1, ds("gold.revenue"), [ds("gold.revenue")]),
        (ds("gold.revenue"), 1, job("build_revenue"), [job("build_revenue"), ds("gold.revenue")]),
        (
            ds("gold.revenue"),
            1,
            ds("silver.orders"),
            [ds("silver.orders"), job("build_revenue"), ds("gold.revenue")],
        ),
        (
            ds("report.dash"),
            3,
            ds("raw.orders"),
            [
                ds("raw.orders"),
                job("clean_orders"),
                ds("silver.orders"),
                job("build_revenue"),
                ds("gold.revenue"),
                job("publish"),
                ds("report.dash"),
            ],
        ),
        (
            ds("gold.ltv"),
            2,
            job("clean_customers"),
            [job("clean_customers"), ds("silver.customers"), job("build_ltv"), ds("gold.ltv")],
        ),
    ],
)
def test_each_upstream_node_has_its_path_to_the_start(
    start: str, depth: int, node: str, path: list[str]
) -> None:
    walk = upstream(EdgeIndex(TABLE_EDGES), start, depth)
    assert list(walk.paths[node]) == path
    assert walk.depth_of(node) == sum(1 for n in path if n.startswith("job:"))


@pytest.mark.parametrize(
    ("start", "depth", "datasets", "jobs"),
    [
        (ds("gold.revenue"), 0, [ds("gold.revenue")], []),
        (
            ds("gold.revenue"),
            1,
            [ds("gold.revenue"), ds("raw.products"), ds("silver.orders")],
            [job("build_revenue")],
        ),
        (
            ds("gold.revenue"),
            2,
            [ds("gold.revenue"), ds("raw.orders"), ds("raw.products"), ds("silver.orders")],
            [job("build_revenue"), job("clean_orders")],
        ),
        # Directed: gold.ltv and its jobs feed nothing of gold.revenue.
        (ds("raw.orders"), 5, [ds("raw.orders")], []),
    ],
)
def test_the_walk_is_directed_and_bounded_by_depth(
    start: str, depth: int, datasets: list[str], jobs: list[str]
) -> None:
    walk = upstream(EdgeIndex(TABLE_EDGES), start, depth)
    assert walk.datasets() == datasets
    assert walk.jobs() == jobs
    assert not walk.truncated


def test_max_nodes_cuts_and_says_so() -> None:
    walk = upstream(EdgeIndex(TABLE_EDGES), ds("report.dash"), 5, max_nodes=3)
    assert len(walk.paths) == 3
    assert walk.truncated


def test_a_walk_asks_one_query_per_level() -> None:
    source = EdgeIndex(TABLE_EDGES)
    upstream(source, ds("report.dash"), 10)
    # One query from each level: report, publish, gold.revenue, build_revenue,
    # silver.orders + raw.products, clean_orders, raw.orders (which finds nothing).
    assert source.calls == 7


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="depth"):
        upstream(EdgeIndex(TABLE_EDGES), ds("gold.revenue"), -1)
    with pytest.raises(ValueError, match="max_nodes"):
        upstream(EdgeIndex(TABLE_EDGES), ds("gold.revenue"), 1, max_nodes=0)


REVENUE = upstream(EdgeIndex(TABLE_EDGES), ds("gold.revenue"), 10)

# (title, finding, kept?, expected depth)
PLACEMENT = [
    (
        "a drift of the start itself",
        Finding(CauseKind.VERSION_DRIFT, T0, ds("gold.revenue"), "v1"),
        True,
        0,
    ),
    ("a drift two jobs up", Finding(CauseKind.VERSION_DRIFT, T0, ds("raw.orders"), "v2"), True, 2),
    (
        "a failed run of the writer",
        Finding(CauseKind.FAILED_RUN, T0, job("build_revenue"), "r1"),
        True,
        1,
    ),
    (
        "a sibling's failed run",
        Finding(CauseKind.FAILED_RUN, T0, job("build_ltv"), "r2"),
        False,
        None,
    ),
    (
        "a downstream dataset's quality",
        Finding(CauseKind.QUALITY_FAILURE, T0, ds("report.dash")),
        False,
        None,
    ),
    (
        "a contract drift of a consumer on the way",
        Finding(CauseKind.CONTRACT_DRIFT, T0, ds("silver.orders"), via=job("build_revenue")),
        True,
        1,
    ),
    (
        "a contract drift of a consumer off the way",
        Finding(CauseKind.CONTRACT_DRIFT, T0, ds("silver.orders"), via=job("build_ltv")),
        False,
        None,
    ),
]


@pytest.mark.parametrize(
    ("finding", "kept", "depth"),
    [p[1:] for p in PLACEMENT],
    ids=[p[0] for p in PLACEMENT],
)
def test_which_findings_are_placed_and_how_far_up(
    finding: Finding, kept: bool, depth: int | None
) -> None:
    causes = root_causes(REVENUE, [finding])
    assert bool(causes) is kept
    if kept:
        assert causes[0].depth == depth
        assert causes[0].path[0] == finding.subject
        assert causes[0].path[-1] == ds("gold.revenue")


def test_a_contract_drift_path_goes_through_its_consumer() -> None:
    finding = Finding(CauseKind.CONTRACT_DRIFT, T0, ds("raw.orders"), via=job("clean_orders"))
    (cause,) = root_causes(REVENUE, [finding])
    assert cause.path == (
        ds("raw.orders"),
        job("clean_orders"),
        ds("silver.orders"),
        job("build_revenue"),
        ds("gold.revenue"),
    )


def test_order_is_by_time_then_upstream_first_then_cause_before_effect() -> None:
    findings = [
        Finding(CauseKind.QUALITY_FAILURE, _at(5), ds("gold.revenue"), "q"),
        Finding(CauseKind.FAILED_RUN, _at(5), job("build_revenue"), "r"),
        Finding(CauseKind.VERSION_DRIFT, _at(5), ds("silver.orders"), "v-silver"),
        Finding(CauseKind.VERSION_DRIFT, _at(5), ds("raw.orders"), "v-raw"),
        Finding(CauseKind.QUALITY_FAILURE, _at(1), ds("silver.orders"), "q-early"),
        Finding(CauseKind.FAILED_RUN, _at(5), job("clean_orders"), "r-clean"),
        Finding(CauseKind.VERSION_DRIFT, _at(9), ds("gold.revenue"), "late"),
    ]
    expected = ["q-early", "v-raw", "r-clean", "v-silver", "r", "q", "late"]
    for permutation in itertools.permutations(findings, len(findings)):
        assert [c.finding.key for c in root_causes(REVENUE, permutation)] == expected


def test_a_finding_met_twice_is_kept_once() -> None:
    finding = Finding(CauseKind.FAILED_RUN, T0, job("build_revenue"), "r1")
    assert len(root_causes(REVENUE, [finding, finding])) == 1
