"""A PyFlink SQL job for the tests, run by ``.venv-flink``'s python (not pytest).

``python flink_job.py BOOTSTRAP SOURCE SINK LINEAGE_URL REST_PORT JARS`` reads
JSON orders from the Kafka topic SOURCE and writes them, flagged, to SINK, on a
local Flink mini-cluster with the OpenLineage job-status listener sending to
LINEAGE_URL over HTTP. It prints ``JOB <id>`` once the job is submitted, then
follows its standard input: ``cancel`` cancels the job (and prints
``CANCELLED``), end of input exits.

The listener runs with ``enableDetachedJobTracking``: a local mini-cluster
creates one listener where the job is built and another where it runs, and the
second one only knows the run (it derives the run id from the job id and its
start time, read from Flink's REST API) in that mode; without it the job's
status changes, the cancel included, are dropped ("JobId is not set").
"""

from __future__ import annotations

import sys

from pyflink.common import Configuration
from pyflink.table import EnvironmentSettings, TableEnvironment

LISTENER_FACTORY = "io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory"


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    bootstrap, source, sink, url, rest_port, jars = sys.argv[1:7]
    conf = Configuration()
    for key, value in {
        "pipeline.jars": jars,
        "execution.job-status-changed-listeners": LISTENER_FACTORY,
        "openlineage.transport.type": "http",
        "openlineage.transport.url": url,
        "openlineage.job.namespace": "flink",
        "openlineage.job.name": "enrich_orders",
        "openlineage.enableDetachedJobTracking": "true",
        # A RUNNING per new checkpoint, looked for every second.
        "openlineage.trackingIntervalInSeconds": "1",
        "execution.checkpointing.interval": "500ms",
        "rest.address": "127.0.0.1",
        "rest.port": rest_port,
        "parallelism.default": "1",
    }.items():
        conf.set_string(key, value)
    settings = EnvironmentSettings.new_instance().in_streaming_mode()
    tables = TableEnvironment.create(settings.with_configuration(conf).build())
    tables.execute_sql(
        f"CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'kafka', "
        f"'topic' = '{source}', 'properties.bootstrap.servers' = '{bootstrap}', "
        "'properties.group.id' = 'enrich-orders', 'scan.startup.mode' = 'earliest-offset', "
        "'format' = 'json')"
    )
    tables.execute_sql(
        f"CREATE TABLE enriched (id BIGINT, amount DOUBLE, big BOOLEAN) WITH ("
        f"'connector' = 'kafka', 'topic' = '{sink}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json')"
    )
    result = tables.execute_sql(
        "INSERT INTO enriched SELECT id, amount, amount > 100 AS big FROM orders"
    )
    client = result.get_job_client()
    _say(f"JOB {client.get_job_id()}")
    for line in sys.stdin:
        if line.strip() == "cancel":
            # The local mini-cluster shuts down with its only job: nothing to ask after.
            client.cancel().result()
            _say("CANCELLED")


if __name__ == "__main__":
    main()
