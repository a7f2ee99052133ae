"""Shared plumbing for the retail jobs: arguments, paths and the SparkSession.

Every job is a plain PySpark script: it knows nothing about lineage. Run it
with ``headwater instrument -- python <job>.py --data-dir DIR`` and the agent
reports what it reads and writes.

Layout under the data directory::

    raw/        landing zone (generate.py)
    lake/bronze/<source>     raw files as parquet, types inferred
    lake/silver/<entity>     cleaned, typed, deduplicated, joined
    lake/gold/<mart>         marts (one is a catalog table under warehouse/)
    lake/features/...        ML features, models/ the trained model
    warehouse/  metastore/   the persistent Spark SQL catalog (Derby metastore)
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Paths", "parse_args", "session"]


class Paths:
    """Where each zone of the lakehouse lives under one data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir.resolve()
        self.raw = self.root / "raw"
        self.lake = self.root / "lake"
        self.bronze = self.lake / "bronze"
        self.silver = self.lake / "silver"
        self.gold = self.lake / "gold"
        self.features = self.lake / "features"
        self.models = self.root / "models"
        self.warehouse = self.root / "warehouse"
        self.metastore = self.root / "metastore"

    @staticmethod
    def uri(path: Path) -> str:
        """``file:`` URI of a local path (Spark would otherwise resolve it against fs.defaultFS)."""
        return path.as_uri()


def parse_args(description: str) -> Paths:
    """``--data-dir`` (or ``RETAIL_DATA_DIR``): the data directory of the pipeline."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("RETAIL_DATA_DIR"),
                        help="data directory of the pipeline (default: $RETAIL_DATA_DIR)")
    args = parser.parse_args()
    if args.data_dir is None:
        parser.error("give --data-dir or set RETAIL_DATA_DIR")
    return Paths(args.data_dir)


def session(
    app_name: str, paths: Paths, catalog: bool = False, conf: dict[str, str] | None = None
) -> SparkSession:
    """A small local session; ``catalog=True`` adds the persistent metastore + warehouse."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.appName(app_name)
        .master(os.environ.get("RETAIL_SPARK_MASTER", "local[2]"))
        # The demo data is small: a handful of shuffle partitions is plenty on 2 cores.
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", Paths.uri(paths.warehouse))
    )
    if catalog:
        # An embedded Derby metastore in the data directory keeps catalog tables
        # across runs (the in-memory catalog forgets them when the JVM exits).
        paths.metastore.mkdir(parents=True, exist_ok=True)
        builder = (
            builder.enableHiveSupport()
            .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                    f"jdbc:derby:;databaseName={paths.metastore / 'metastore_db'};create=true")
            .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={paths.metastore}")
        )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
