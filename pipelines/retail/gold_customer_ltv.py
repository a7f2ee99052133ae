"""Gold: customer lifetime value, written in Spark SQL as a catalog table (CTAS).

The table ``gold.customer_ltv`` lives in the persistent catalog under the data
directory; each run drops and recreates it, so a rerun never fails and picks up
schema changes from upstream.
"""

from __future__ import annotations

from _common import Paths, parse_args, session

LTV_QUERY = """
CREATE TABLE gold.customer_ltv USING parquet AS
WITH paid AS (
    SELECT order_id, SUM(paid_amount) AS paid_amount
    FROM silver_payments
    GROUP BY order_id
)
SELECT
    c.customer_id,
    c.country,
    c.signup_date,
    COUNT(o.order_id)                   AS order_count,
    COALESCE(SUM(o.total), 0)           AS lifetime_value,
    COALESCE(SUM(p.paid_amount), 0)     AS lifetime_paid,
    MIN(o.order_date)                   AS first_order_date,
    MAX(o.order_date)                   AS last_order_date
FROM silver_customers AS c
LEFT JOIN silver_orders AS o
    ON o.customer_id = c.customer_id AND o.status = 'completed'
LEFT JOIN paid AS p
    ON p.order_id = o.order_id
GROUP BY c.customer_id, c.country, c.signup_date
"""


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_gold_customer_ltv", paths, catalog=True)
    for name in ("customers", "orders", "payments"):
        location = Paths.uri(paths.silver / name)
        spark.sql(
            f"CREATE OR REPLACE TEMPORARY VIEW silver_{name} USING parquet OPTIONS (path '{location}')"
        )
    spark.sql("CREATE DATABASE IF NOT EXISTS gold")
    spark.sql("DROP TABLE IF EXISTS gold.customer_ltv")
    spark.sql(LTV_QUERY)
    spark.stop()


if __name__ == "__main__":
    main()
