"""A small hand-built retail lineage graph, every node and edge listed by hand.

Table level (datasets and jobs)::

    raw.orders ─▶ clean_orders ─▶ silver.orders ─▶ build_revenue ─▶ gold.revenue ─▶ publish ─▶ report
    raw.products ────────────────────────────────▶ build_revenue
    silver.orders ──▶ job build_ltv ──▶ gold.ltv
    raw.customers ──▶ job clean_customers ──▶ silver.customers ──▶ job build_ltv

Jobs: clean_orders, clean_customers, build_revenue, build_ltv, publish; ``report`` is
``report.dash``.

Column level::

    raw.orders.price ─TRANSFORMATION─▶ silver.orders.amount   (via clean_orders)
    raw.orders.qty   ─TRANSFORMATION─▶ silver.orders.amount   (via clean_orders)
    raw.orders.id    ─IDENTITY──────▶ silver.orders.order_id  (via clean_orders)
    silver.orders.amount ─AGGREGATION▶ gold.revenue.total     (via build_revenue)
    raw.products.discount ─TRANSFORMATION▶ gold.revenue.total (via build_revenue)
    silver.orders.amount ─AGGREGATION▶ gold.ltv.value         (via build_ltv)
    gold.revenue.total ─IDENTITY──────▶ report.dash.total     (via publish)
"""

from __future__ import annotations

from headwater.graph.model import Edge, Transformation

NS = "warehouse"


def ds(name: str) -> str:
    return f"dataset:{NS}:{name}"


def job(name: str) -> str:
    return f"job:{NS}:{name}"


def col(dataset: str, field: str) -> str:
    return f"datasetField:{NS}:{dataset}:{field}"


JOBS = {
    "clean_orders": (["raw.orders"], ["silver.orders"]),
    "clean_customers": (["raw.customers"], ["silver.customers"]),
    "build_revenue": (["silver.orders", "raw.products"], ["gold.revenue"]),
    "build_ltv": (["silver.orders", "silver.customers"], ["gold.ltv"]),
    "publish": (["gold.revenue"], ["report.dash"]),
}

TABLE_EDGES = [
    Edge(ds(i), job(name)) for name, (inputs, _) in JOBS.items() for i in inputs
] + [Edge(job(name), ds(o)) for name, (_, outputs) in JOBS.items() for o in outputs]


def _t(kind: str) -> tuple[Transformation, ...]:
    return (Transformation(kind),)


def _column(upstream: str, downstream: str, via: str, kind: str) -> Edge:
    """``upstream``/``downstream`` as ``dataset.name.field`` (the field after the last dot)."""
    up_dataset, _, up_field = upstream.rpartition(".")
    down_dataset, _, down_field = downstream.rpartition(".")
    return Edge(col(up_dataset, up_field), col(down_dataset, down_field), job(via), _t(kind))


COLUMN_EDGES = [
    _column("raw.orders.price", "silver.orders.amount", "clean_orders", "TRANSFORMATION"),
    _column("raw.orders.qty", "silver.orders.amount", "clean_orders", "TRANSFORMATION"),
    _column("raw.orders.id", "silver.orders.order_id", "clean_orders", "IDENTITY"),
    _column("silver.orders.amount", "gold.revenue.total", "build_revenue", "AGGREGATION"),
    _column("raw.products.discount", "gold.revenue.total", "build_revenue", "TRANSFORMATION"),
    _column("silver.orders.amount", "gold.ltv.value", "build_ltv", "AGGREGATION"),
    _column("gold.revenue.total", "report.dash.total", "publish", "IDENTITY"),
]

FIELDS = {
    ds("raw.orders"): ["id", "price", "qty"],
    ds("raw.products"): ["discount"],
    ds("silver.orders"): ["amount", "order_id"],
    ds("gold.revenue"): ["total"],
    ds("gold.ltv"): ["value"],
    ds("report.dash"): ["total"],
}
