"""The directed walk on the hand-built retail graph: every expected node and edge listed."""

from __future__ import annotations

import pytest

from headwater.graph import Direction, Edge, EdgeIndex, walk
from tests.graph.retail import TABLE_EDGES, ds, job


def _edges(graph) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return {(e.upstream, e.downstream) for e in graph.edges}


def test_upstream_of_gold_revenue_is_exactly_its_ancestry() -> None:
    graph = walk(EdgeIndex(TABLE_EDGES), ds("gold.revenue"), Direction.UPSTREAM, depth=10)
    assert graph.node_ids() == {
        ds("gold.revenue"),
        job("build_revenue"),
        ds("silver.orders"),
        ds("raw.products"),
        job("clean_orders"),
        ds("raw.orders"),
    }
    assert _edges(graph) == {
        (job("build_revenue"), ds("gold.revenue")),
        (ds("silver.orders"), job("build_revenue")),
        (ds("raw.products"), job("build_revenue")),
        (job("clean_orders"), ds("silver.orders")),
        (ds("raw.orders"), job("clean_orders")),
    }
    assert not graph.truncated
    # Marquez's undirected walk would also return these siblings; headwater must not.
    assert ds("gold.ltv") not in graph.node_ids()
    assert job("build_ltv") not in graph.node_ids()


def test_downstream_of_silver_orders() -> None:
    graph = walk(EdgeIndex(TABLE_EDGES), ds("silver.orders"), Direction.DOWNSTREAM, depth=10)
    assert graph.node_ids() == {
        ds("silver.orders"),
        job("build_revenue"),
        job("build_ltv"),
        ds("gold.revenue"),
        ds("gold.ltv"),
        job("publish"),
        ds("report.dash"),
    }
    assert _edges(graph) == {
        (ds("silver.orders"), job("build_revenue")),
        (ds("silver.orders"), job("build_ltv")),
        (job("build_revenue"), ds("gold.revenue")),
        (job("build_ltv"), ds("gold.ltv")),
        (ds("gold.revenue"), job("publish")),
        (job("publish"), ds("report.dash")),
    }
    # raw.products and silver.customers feed the same jobs but are not downstream.
    assert ds("raw.products") not in graph.node_ids()
    assert ds("silver.customers") not in graph.node_ids()


def test_both_is_the_union_of_the_two_directed_walks_without_siblings() -> None:
    index = EdgeIndex(TABLE_EDGES)
    both = walk(index, ds("gold.revenue"), Direction.BOTH, depth=10)
    up = walk(index, ds("gold.revenue"), Direction.UPSTREAM, depth=10)
    down = walk(index, ds("gold.revenue"), Direction.DOWNSTREAM, depth=10)
    assert both.node_ids() == up.node_ids() | down.node_ids()
    assert _edges(both) == _edges(up) | _edges(down)
    assert down.node_ids() == {ds("gold.revenue"), job("publish"), ds("report.dash")}
    assert job("build_ltv") not in both.node_ids()


def test_depth_counts_edges() -> None:
    index = EdgeIndex(TABLE_EDGES)
    assert walk(index, ds("gold.revenue"), Direction.UPSTREAM, depth=0).node_ids() == {
        ds("gold.revenue")
    }
    graph = walk(index, ds("gold.revenue"), Direction.UPSTREAM, depth=2)
    assert graph.node_ids() == {
        ds("gold.revenue"),
        job("build_revenue"),
        ds("silver.orders"),
        ds("raw.products"),
    }
    assert not graph.truncated


def test_walk_is_batched_one_query_per_level() -> None:
    index = EdgeIndex(TABLE_EDGES)
    walk(index, ds("report.dash"), Direction.UPSTREAM, depth=10)
    # report.dash <- publish <- gold.revenue <- build_revenue <- {silver.orders, raw.products}
    # <- clean_orders <- raw.orders: 7 levels, then one empty answer ends the walk.
    assert index.calls == 7


def test_max_nodes_cuts_and_says_so() -> None:
    graph = walk(EdgeIndex(TABLE_EDGES), ds("gold.revenue"), Direction.UPSTREAM, 10, max_nodes=3)
    assert graph.truncated
    assert len(graph.nodes) == 3
    assert ds("gold.revenue") in graph.node_ids()
    assert job("build_revenue") in graph.node_ids()
    # No edge may point at a node that was not admitted.
    for edge in graph.edges:
        assert {edge.upstream, edge.downstream} <= graph.node_ids()


def test_max_nodes_equal_to_the_answer_is_not_truncated() -> None:
    graph = walk(EdgeIndex(TABLE_EDGES), ds("gold.revenue"), Direction.UPSTREAM, 10, max_nodes=6)
    assert not graph.truncated
    assert len(graph.nodes) == 6
    assert graph.cut == frozenset()


@pytest.mark.parametrize("max_nodes", [2, 3, 4, 5])
def test_the_cut_names_exactly_the_nodes_with_a_neighbour_left_out(max_nodes: int) -> None:
    whole = walk(EdgeIndex(TABLE_EDGES), ds("gold.revenue"), Direction.UPSTREAM, 10)
    graph = walk(
        EdgeIndex(TABLE_EDGES), ds("gold.revenue"), Direction.UPSTREAM, 10, max_nodes=max_nodes
    )
    kept = graph.node_ids()
    left_out = {
        e.downstream for e in whole.edges if e.downstream in kept and e.upstream not in kept
    }
    assert graph.truncated
    assert graph.cut == left_out
    assert graph.cut


def test_cycles_terminate_and_keep_every_edge() -> None:
    a, b = ds("a"), ds("b")
    edges = [Edge(a, job("j1")), Edge(job("j1"), b), Edge(b, job("j2")), Edge(job("j2"), a)]
    graph = walk(EdgeIndex(edges), a, Direction.BOTH, depth=50)
    assert graph.node_ids() == {a, b, job("j1"), job("j2")}
    assert _edges(graph) == {(e.upstream, e.downstream) for e in edges}


def test_several_roots_share_one_walk() -> None:
    graph = walk(
        EdgeIndex(TABLE_EDGES), [ds("gold.ltv"), ds("gold.revenue")], Direction.UPSTREAM, depth=1
    )
    assert graph.node_ids() == {
        ds("gold.ltv"),
        ds("gold.revenue"),
        job("build_ltv"),
        job("build_revenue"),
    }


@pytest.mark.parametrize(("depth", "max_nodes"), [(-1, 10), (1, 0)])
def test_bad_bounds_are_rejected(depth: int, max_nodes: int) -> None:
    with pytest.raises(ValueError):
        walk(EdgeIndex(TABLE_EDGES), ds("a"), Direction.UPSTREAM, depth, max_nodes)
