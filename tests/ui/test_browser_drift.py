"""Schema drift with its impact, who read a dataset, and declared jobs, in Chromium.

The store holds tests/api/test_drift_impact.py's pipeline (raw -> clean -> silver ->
report -> gold, and peek reading raw without column lineage; raw's amount turns from a
double into a string, which clean declares it reads as a double), a run of peek with its
Spark user, and a dashboard job declared by a JobEvent reading gold.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.api.test_drift_impact import HISTORY, _reads_raw, _run
from tests.server.live import running_server
from tests.store.builders import PRODUCER, facet
from tests.ui.browser import wait_for_graph

JOB_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
DASHBOARD = {
    "eventTime": "2024-01-01T00:00:30Z",
    "producer": PRODUCER,
    "schemaURL": JOB_EVENT,
    "job": {"namespace": "bi", "name": "revenue_dashboard", "facets": {}},
    "inputs": [{"namespace": "file", "name": "/gold"}],
}


def _peek_by_alice() -> dict[str, Any]:
    event = _run(7, 40, "peek", [_reads_raw()], [])
    event["run"]["facets"]["spark_applicationDetails"] = facet(userName="alice")
    return event


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = Path(tmp_path_factory.mktemp("drift")) / "drift.db"
    with running_server("--db", f"sqlite:///{db}") as url:
        events = [*HISTORY, _peek_by_alice(), DASHBOARD]
        posted = httpx.post(f"{url}/api/v1/lineage/batch", json=events, timeout=60)
        assert posted.status_code < 300, posted.text
        yield url


def test_the_dataset_page_shows_each_drift_with_its_impact(page: Page) -> None:
    page.goto(f"/datasets/file/{quote('/raw', safe='')}")
    drifts = page.get_by_test_id("drifts")
    expect(drifts).to_be_visible()
    rows = drifts.locator(":scope > tbody > tr")
    expect(rows).to_have_count(2)
    # Newest first: the contract drift (its time is the later of the two facts) names
    # the consumer job that declares the schema.
    contract = rows.filter(has=page.locator("[data-kind=contract]"))
    expect(contract.get_by_test_id("consumer")).to_have_text("clean")
    expect(contract.get_by_test_id("consumer").locator("a")).to_have_attribute(
        "href", "/jobs/ns/clean"
    )
    expect(contract.locator("[data-breaking]")).to_have_text("breaking")
    version = rows.filter(has=page.locator("[data-kind=version]"))
    expect(version).to_contain_text("type_widened amount (double → string)")
    # The impact, folded: one line, then every node with its path through each job.
    impact = version.get_by_test_id("drift-impact")
    expect(impact.locator("summary")).to_contain_text("reaches 3 columns, 3 datasets, 3 jobs")
    impact.locator("summary").click()
    total = impact.locator("[data-impacted='datasetField:file:/gold:total']")
    expect(total).to_be_visible()
    expect(total.get_by_test_id("impact-path")).to_have_text(
        "/raw.amount → clean [direct:IDENTITY] → /silver.amount → report [direct:IDENTITY]"
        " → /gold.total"
    )
    expect(impact.locator("[data-impacted='datasetField:file:/gold:n']")).to_have_attribute(
        "data-impact", "indirect"
    )
    # peek reads raw without column lineage: in the version drift's impact, not the contract's.
    expect(impact.locator("[data-impacted='job:ns:peek']")).to_have_count(1)
    contract.get_by_test_id("drift-impact").locator("summary").click()
    expect(contract.locator("[data-impacted='job:ns:peek']")).to_have_count(0)
    # A node of the path opens its page.
    total.get_by_test_id("impact-path").locator("a", has_text="report").click()
    page.wait_for_url("**/jobs/ns/report")


def test_the_drift_page_lists_and_filters_every_drift(page: Page) -> None:
    page.goto("/")
    page.locator("nav a", has_text="Drift").click()
    page.wait_for_url("**/drift")
    rows = page.get_by_test_id("drifts").locator(":scope > tbody > tr")
    expect(rows).to_have_count(2)  # raw's version and contract drifts; nothing else changed
    page.get_by_test_id("drift-kind").select_option("contract")
    page.wait_for_url("**/drift?kind=contract")
    expect(page.get_by_test_id("drifts").locator(":scope > tbody > tr")).to_have_count(1)
    page.get_by_test_id("drift-breaking").check()
    page.wait_for_url("**/drift?kind=contract&breaking=true")
    expect(page.get_by_test_id("drifts").locator(":scope > tbody > tr")).to_have_count(1)
    expect(page.get_by_test_id("consumer")).to_have_text("clean")


def test_the_dataset_page_says_who_read_it(page: Page) -> None:
    page.goto(f"/datasets/file/{quote('/raw', safe='')}")
    readers = page.get_by_test_id("readers")
    expect(readers).to_be_visible()
    rows = readers.locator(":scope > tbody > tr")
    expect(rows).to_have_count(4)  # clean, peek (twice) and late read raw
    first = rows.nth(0)  # newest read first: peek by alice, which wrote nothing
    expect(first).to_contain_text("peek")
    expect(first.get_by_test_id("spark-user")).to_have_text("alice")
    expect(first.locator("[data-read-only=true]")).to_be_visible()


def test_the_graph_marks_a_declared_job(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote('dataset:file:/gold', safe='')}")
    graph = wait_for_graph(page)
    nodes = {n["id"]: n for n in graph["nodes"]}
    dashboard = nodes["job:bi:revenue_dashboard"]
    assert "declared" in dashboard["classes"], dashboard
    assert "◇ declared" in dashboard["label"]
    assert "declared" not in nodes["job:ns:report"]["classes"]
    expect(page.get_by_test_id("legend").locator("[data-legend='node:declared']")).to_be_visible()
