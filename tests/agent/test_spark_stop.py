"""spark.stop() ends the application run (COMPLETE) before the session goes away,
with the agent's emission figures: in the COMPLETE's facet, the summary line and stats().

Runs in a subprocess: stopping the shared test session would end every other test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

JOB = textwrap.dedent(
    """
    import json, logging, sys
    from pyspark.sql import SparkSession
    import headwater.agent

    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("headwater.agent").setLevel(logging.INFO)

    events, out = sys.argv[1], sys.argv[2]
    spark = (
        SparkSession.builder.master("local[1]").appName("Stop Test")
        .config("spark.ui.enabled", "false")
        .config("spark.openlineage.transport.type", "file")
        .config("spark.openlineage.transport.location", events)
        .config("spark.headwater.spool.enabled", "false")
        .getOrCreate()
    )
    agent = headwater.agent.attach(spark)
    spark.range(3).write.parquet(out)
    spark.stop()
    # Read the events before the interpreter exits: the exit hook must not be
    # what ends the application run.
    lines = [json.loads(line) for line in open(events)]
    end = lines[[e["job"]["name"] for e in lines].index("stop_test", 1)]
    print(json.dumps({"seen": [[e["eventType"], e["job"]["name"]] for e in lines],
                      "facet": end["run"]["facets"].get("headwater_emission"),
                      "stats": headwater.agent.stats(), "events": len(lines)}))
    """
)


def test_stop_emits_application_complete(tmp_path: Path) -> None:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    result = subprocess.run(
        [sys.executable, "-c", JOB, str(tmp_path / "events.jsonl"), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    seen = out["seen"]
    app = [kind for kind, name in seen if name == "stop_test"]
    assert app == ["START", "COMPLETE"]
    actions = [kind for kind, name in seen if name != "stop_test"]
    assert actions[0] == "START" and actions[-1] == "COMPLETE"
    # The COMPLETE's facet counts every event queued before it; stats() after
    # the stop counts the COMPLETE too, all of them sent.
    assert out["facet"]["queued"] == out["events"] - 1
    assert out["facet"]["buildMs"]["count"] >= 1
    stats = out["stats"]
    assert stats["queued"] == stats["sent"] == out["events"]
    assert stats["spooled"] == stats["dropped"] == stats["rejected"] == 0
    summary = [line for line in result.stderr.splitlines() if "application stop_test:" in line]
    assert len(summary) == 1 and summary[0].startswith("INFO:headwater.agent:"), summary
    assert f"{out['events']} events queued, {out['events']} sent" in summary[0]
