"""Column lineage across jobs on the hand-built retail graph."""

from __future__ import annotations

from collections.abc import Collection

from headwater.graph import Direction, Edge, EdgeIndex
from headwater.graph.columns import column_lineage, column_roots, paths_to_sources
from tests.graph.retail import COLUMN_EDGES, FIELDS, col, ds, job


class _Columns(EdgeIndex):
    def fields_of(self, dataset_ids: Collection[str]) -> list[str]:
        out = []
        for dataset_id in dataset_ids:
            name = dataset_id.split(":", 2)[2]
            out += [col(name, f) for f in FIELDS.get(dataset_id, [])]
        return out


def test_gold_total_traces_back_through_every_job_to_raw_columns() -> None:
    graph = column_lineage(
        _Columns(COLUMN_EDGES), col("gold.revenue", "total"), Direction.UPSTREAM, depth=10
    )
    assert graph.node_ids() == {
        col("gold.revenue", "total"),
        col("silver.orders", "amount"),
        col("raw.products", "discount"),
        col("raw.orders", "price"),
        col("raw.orders", "qty"),
    }
    total, amount = col("gold.revenue", "total"), col("silver.orders", "amount")
    revenue, clean = job("build_revenue"), job("clean_orders")
    assert {(e.upstream, e.downstream, e.via, e.transformations[0].type) for e in graph.edges} == {
        (amount, total, revenue, "AGGREGATION"),
        (col("raw.products", "discount"), total, revenue, "TRANSFORMATION"),
        (col("raw.orders", "price"), amount, clean, "TRANSFORMATION"),
        (col("raw.orders", "qty"), amount, clean, "TRANSFORMATION"),
    }
    assert graph.sources() == sorted(
        [col("raw.products", "discount"), col("raw.orders", "price"), col("raw.orders", "qty")]
    )
    # order_id is a sibling column of amount; it is not upstream of total.
    assert col("raw.orders", "id") not in graph.node_ids()


def test_paths_to_sources_lists_each_chain_with_its_jobs() -> None:
    graph = column_lineage(
        _Columns(COLUMN_EDGES), col("gold.revenue", "total"), Direction.UPSTREAM, depth=10
    )
    paths = paths_to_sources(graph, col("gold.revenue", "total"))
    assert [p.fields() for p in paths] == [
        [col("raw.orders", "price"), col("silver.orders", "amount"), col("gold.revenue", "total")],
        [col("raw.orders", "qty"), col("silver.orders", "amount"), col("gold.revenue", "total")],
        [col("raw.products", "discount"), col("gold.revenue", "total")],
    ]
    assert [[e.via for e in p.edges] for p in paths] == [
        [job("clean_orders"), job("build_revenue")],
        [job("clean_orders"), job("build_revenue")],
        [job("build_revenue")],
    ]


def test_a_dataset_starts_from_all_its_fields() -> None:
    source = _Columns(COLUMN_EDGES)
    assert column_roots(source, ds("silver.orders")) == [
        col("silver.orders", "amount"),
        col("silver.orders", "order_id"),
    ]
    graph = column_lineage(source, ds("silver.orders"), Direction.DOWNSTREAM, depth=10)
    assert graph.node_ids() == {
        col("silver.orders", "amount"),
        col("silver.orders", "order_id"),
        col("gold.revenue", "total"),
        col("gold.ltv", "value"),
        col("report.dash", "total"),
    }


def test_cycle_in_columns_does_not_loop() -> None:
    a, b = col("t", "a"), col("t", "b")
    source = _Columns([Edge(a, b), Edge(b, a)])
    graph = column_lineage(source, a, Direction.UPSTREAM, depth=100)
    assert graph.node_ids() == {a, b}
    assert [p.fields() for p in paths_to_sources(graph, a)] == [[b, a]]
