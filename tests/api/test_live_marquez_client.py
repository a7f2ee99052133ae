"""The real ``marquez-python`` client against a running ``headwater serve``.

Events are posted to the live server; then :class:`marquez_client.MarquezClient`
lists and gets namespaces, datasets, dataset versions, jobs, runs and column
lineage, and every value is checked against what was ingested.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from marquez_client import MarquezClient

from tests.api.retail_events import events, run_id
from tests.graph.retail import NS, col
from tests.server.live import running_server

pytestmark = [pytest.mark.live, pytest.mark.slow]


def test_marquez_client_reads_what_was_ingested(tmp_path: Path) -> None:
    with running_server("--db", f"sqlite:///{tmp_path / 'live.db'}") as base_url:
        posted = httpx.post(f"{base_url}/api/v1/lineage/batch", json=events(), timeout=30)
        assert posted.status_code < 300, posted.text
        client = MarquezClient(url=base_url)

        namespaces = client.list_namespaces()
        assert [n["name"] for n in namespaces["namespaces"]] == [NS]
        assert client.get_namespace(NS)["name"] == NS

        datasets = client.list_datasets(NS, limit=100)
        assert datasets["totalCount"] == 8
        orders = client.get_dataset(NS, "silver.orders")
        assert [f["name"] for f in orders["fields"]] == ["amount", "order_id"]

        versions = client.list_dataset_versions(NS, "silver.orders")
        assert len(versions["versions"]) == 2
        newest = versions["versions"][0]
        assert newest["version"] == orders["currentVersion"]
        assert newest["createdByRun"]["id"] == run_id("clean_orders", 2)
        pinned = client.get_dataset_version(NS, "silver.orders", newest["version"])
        assert pinned["createdByRun"]["id"] == run_id("clean_orders", 2)

        jobs = client.list_jobs(NS)
        assert sorted(j["name"] for j in jobs["jobs"]) == [
            "build_ltv",
            "build_revenue",
            "clean_customers",
            "clean_orders",
            "publish",
        ]
        revenue = client.get_job(NS, "build_revenue")
        assert {d["name"] for d in revenue["inputs"]} == {"raw.products", "silver.orders"}

        runs = client.list_job_runs(NS, "build_revenue")
        newest_first = [run_id("build_revenue", 2), run_id("build_revenue", 1)]
        assert [r["id"] for r in runs["runs"]] == newest_first
        run = client.get_job_run(run_id("build_revenue", 2))
        assert run["state"] == "COMPLETED"
        assert {v["datasetVersionId"]["version"] for v in run["inputDatasetVersions"]} == {
            newest["version"]
        }

        lineage = client.get_column_lineage_by_dataset_field(NS, "gold.revenue", "total", depth=10)
        assert {n["id"] for n in lineage["graph"]} == {
            col("gold.revenue", "total"),
            col("silver.orders", "amount"),
            col("raw.products", "discount"),
            col("raw.orders", "price"),
            col("raw.orders", "qty"),
        }
        by_dataset = client.get_column_lineage_by_dataset(NS, "silver.orders", depth=1)
        assert col("raw.orders", "id") in {n["id"] for n in by_dataset["graph"]}


# The client marks its pre-OpenLineage writes deprecated; headwater still serves them.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_marquez_client_writes_read_back(tmp_path: Path) -> None:
    from marquez_client.models import DatasetId, DatasetType, JobType

    run = "00000000-0000-4000-8000-00000000c001"
    with running_server("--db", f"sqlite:///{tmp_path / 'live.db'}") as base_url:
        client = MarquezClient(url=base_url)
        assert client.create_namespace("shop", "me", "the shop")["ownerName"] == "me"
        source = client.create_source("shop_db", "POSTGRESQL", "jdbc:postgresql://db/shop")
        assert source["connectionUrl"] == "jdbc:postgresql://db/shop"
        orders = client.create_dataset(
            "shop", "public.orders", DatasetType.DB_TABLE, "public.orders", "shop_db",
            description="orders", fields=[{"name": "id", "type": "INTEGER"}], tags=["pii"],
        )
        assert (orders["sourceName"], orders["tags"]) == ("shop_db", ["pii"])
        client.create_dataset("shop", "public.totals", DatasetType.DB_TABLE, "public.totals",
                              "shop_db")
        job = client.create_job(
            "shop", "totals", JobType.BATCH, location="https://git.example/totals.py",
            inputs=[DatasetId("shop", "public.orders")],
            outputs=[DatasetId("shop", "public.totals")],
        )
        assert job["name"] == "totals"
        created = client.create_job_run("shop", "totals", run_id=run)
        assert created["state"] == "NEW"
        client.create_job("shop", "totals", JobType.BATCH, run_id=run,
                          inputs=[DatasetId("shop", "public.orders")],
                          outputs=[DatasetId("shop", "public.totals")])
        assert client.mark_job_run_as_started(run)["state"] == "RUNNING"
        assert client.mark_job_run_as_completed(run)["state"] == "COMPLETED"
        after = client.get_job("shop", "totals")
        assert [d["name"] for d in after["inputs"]] == ["public.orders"]
        assert after["latestRun"]["id"] == run
        versions = client.list_dataset_versions("shop", "public.totals")
        assert run in {v["createdByRun"]["id"] for v in versions["versions"] if v["createdByRun"]}
