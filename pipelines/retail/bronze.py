"""Bronze: land each raw source as parquet, one write per source, types inferred.

Bronze keeps the data as delivered (no cleaning, duplicates included) so a
change in the upstream export shows up here first as a new schema.
"""

from __future__ import annotations

from _common import Paths, parse_args, session

# source name -> (format, file or directory under raw/)
SOURCES = {
    "customers": ("csv", "customers.csv"),
    "products": ("csv", "products.csv"),
    "orders": ("csv", "orders.csv"),
    "order_lines": ("csv", "order_lines.csv"),
    "payments": ("csv", "payments.csv"),
    "clickstream": ("json", "clickstream"),
}


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_bronze", paths)
    for source, (fmt, location) in SOURCES.items():
        reader = spark.read
        if fmt == "csv":
            reader = reader.option("header", "true").option("inferSchema", "true")
        frame = reader.format(fmt).load(Paths.uri(paths.raw / location))
        frame.write.mode("overwrite").parquet(Paths.uri(paths.bronze / source))
    spark.stop()


if __name__ == "__main__":
    main()
