"""Run conformance scenarios sharing one warehouse in one JVM (a subprocess of the test).

    python -m tests.conformance.spark.run_jobs OUT_DIR WAREHOUSE PROFILE "scenario name" ...

Each scenario attaches a headwater agent configured the way a user of the
OpenLineage jar would (``spark.openlineage.*`` keys: namespace, appName, a file
transport, ``columnLineage.datasetLineageEnabled=false``), runs its job, and
closes the agent, so its events (application run included) land in
``OUT_DIR/<scenario>.jsonl``; a job that raises leaves its traceback in
``OUT_DIR/<scenario>.error`` instead of stopping the others.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    out_dir, warehouse, profile, names = Path(argv[0]), argv[1], argv[2], argv[3:]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    logging.basicConfig(level=logging.WARNING)
    from pyspark.sql import SparkSession

    from headwater.agent import attach
    from headwater.agent.config import AgentConfig
    from tests.conformance.spark.scenarios import by_name
    from tests.conformance.spark.sessions import PROFILES

    shutil.rmtree(warehouse, ignore_errors=True)
    metastore = tempfile.mkdtemp(prefix="hw-metastore-")
    builder = SparkSession.builder
    for key, value in PROFILES[profile].items():
        builder = builder.config(key, value)
    spark = (
        builder.master("local[2]")
        .appName("headwater conformance")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={metastore}")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={metastore}/metastore_db;create=true",
        )
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for name in names:
            scenario = by_name(name)
            path = out_dir / f"{name.replace(' ', '_')}.jsonl"
            path.unlink(missing_ok=True)
            conf = {
                "spark.openlineage.namespace": scenario.namespace,
                "spark.openlineage.appName": scenario.app_name,
                "spark.openlineage.transport.type": "file",
                "spark.openlineage.transport.location": str(path),
                "spark.openlineage.columnLineage.datasetLineageEnabled": "false",
                "spark.headwater.spool.enabled": "false",
                **scenario.conf,
            }
            config = AgentConfig.from_sources(conf, {})
            config = dataclasses.replace(config)
            for key, value in scenario.session_conf.items():
                spark.conf.set(key, value)
            agent = attach(spark, config=config)
            try:
                scenario.job(spark)
            except Exception:
                # The scenario's own tests report it; the JVM's other scenarios go on.
                path.with_suffix(".error").write_text(traceback.format_exc())
            finally:
                agent.flush(60.0)
                agent.close(30.0)
                for key in scenario.session_conf:
                    spark.conf.unset(key)
    finally:
        spark.stop()
        shutil.rmtree(metastore, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
