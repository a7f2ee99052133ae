"""The retail pipeline's lineage, job by job, against its committed snapshots.

A change to a job that changes what it reads, writes, or how a column is made
fails here with the lineage diff; ``pytest --lineage-update`` accepts it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.pipelines.conftest import JOBS, PIPELINE, RetailRun

pytestmark = [pytest.mark.spark, pytest.mark.slow]
pytest_plugins = ["pytester"]

SNAPSHOTS = Path(__file__).resolve().parent / "lineage_snapshots"


@pytest.mark.parametrize("job", JOBS)
def test_each_job_matches_its_lineage_snapshot(retail: RetailRun, lineage_snapshot, job) -> None:
    lineage = retail.lineage(job)
    assert lineage.runs, f"{job} reported no run that read or wrote anything"
    lineage_snapshot(lineage, job)


def test_the_gold_marts_come_from_silver_as_the_jobs_say(retail: RetailRun) -> None:
    revenue = retail.lineage("gold_revenue_daily").output("gold.revenue_daily")
    assert revenue.column("total_revenue").comes_from("silver.orders.total", via="AGGREGATION")
    assert revenue.column("order_date").comes_from("silver.orders.order_date", via="IDENTITY")
    ltv = retail.lineage("gold_customer_ltv").output("gold.customer_ltv")
    assert ltv.dataset.label == "warehouse/gold.db/customer_ltv"
    assert ltv.reads("silver.payments")
    assert ltv.column("lifetime_paid").comes_from("silver.payments.paid_amount", via="AGGREGATION")
    silver = retail.lineage("silver")
    assert silver.output("silver.orders").column("city").comes_from("silver.customers.city")


BROKEN_JOB_TEST = """
import os


def test_gold_revenue_daily(lineage_capture, lineage_snapshot):
    data = os.environ["RETAIL_DATA"]
    lineage = lineage_capture.script(os.environ["RETAIL_JOB"], "--data-dir", data, root=data)
    lineage_snapshot(lineage, "gold_revenue_daily")
"""


def test_a_broken_job_fails_with_a_readable_lineage_diff(
    retail: RetailRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A refactor that silently drops a column of the mart, and with it a column edge.
    source = (PIPELINE / "gold_revenue_daily.py").read_text()
    broken = source.replace(
        '            F.countDistinct("customer_id").alias("customer_count"),\n', ""
    )
    assert broken != source
    job_dir = pytester.path / "job"
    job_dir.mkdir()
    (job_dir / "gold_revenue_daily.py").write_text(broken)
    shutil.copy(PIPELINE / "_common.py", job_dir)
    monkeypatch.setenv("RETAIL_JOB", str(job_dir / "gold_revenue_daily.py"))
    monkeypatch.setenv("RETAIL_DATA", str(retail.data_dir))
    pytester.makeini(f"[pytest]\nlineage_snapshot_dir = {SNAPSHOTS}\n")
    pytester.makepyfile(test_broken_job=BROKEN_JOB_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*lineage of gold_revenue_daily on Spark * differs from "
            f"{SNAPSHOTS}/gold_revenue_daily*.lineage.yaml:",
            "*lineage differs (- snapshot, + this run, ~ changed):",
            "*  job retail_gold_revenue_daily.adaptive_spark_plan.gold_revenue_daily",
            "*    output lake/gold/revenue_daily",
            "*      - schema customer_count long",
            "*      - column customer_count <- lake/silver/orders.customer_id DIRECT/AGGREGATION *",
            "*run pytest --lineage-update to accept the change*",
        ]
    )
