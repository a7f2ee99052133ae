"""A small hand-built retail lineage graph, every node and edge listed by hand.

Table level (datasets and jobs)::

    raw.orders ──▶ job clean_orders ──▶ silver.orders ──▶ job build_revenue ──▶ gold.revenue ──▶ job publish ──▶ report.dash
    raw.products ─────────────────────────────────────────▶ job build_revenue
    silver.orders ──▶ job build_ltv ──▶ gold.ltv
    raw.customers ──▶ job clean_customers ──▶ silver.customers ──▶ job build_ltv

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


COLUMN_EDGES = [
    Edge(col("raw.orders", "price"), col("silver.orders", "amount"), job("clean_orders"), _t("TRANSFORMATION")),
    Edge(col("raw.orders", "qty"), col("silver.orders", "amount"), job("clean_orders"), _t("TRANSFORMATION")),
    Edge(col("raw.orders", "id"), col("silver.orders", "order_id"), job("clean_orders"), _t("IDENTITY")),
    Edge(col("silver.orders", "amount"), col("gold.revenue", "total"), job("build_revenue"), _t("AGGREGATION")),
    Edge(col("raw.products", "discount"), col("gold.revenue", "total"), job("build_revenue"), _t("TRANSFORMATION")),
    Edge(col("silver.orders", "amount"), col("gold.ltv", "value"), job("build_ltv"), _t("AGGREGATION")),
    Edge(col("gold.revenue", "total"), col("report.dash", "total"), job("publish"), _t("IDENTITY")),
]

FIELDS = {
    ds("raw.orders"): ["id", "price", "qty"],
    ds("raw.products"): ["discount"],
    ds("silver.orders"): ["amount", "order_id"],
    ds("gold.revenue"): ["total"],
    ds("gold.ltv"): ["value"],
    ds("report.dash"): ["total"],
}
