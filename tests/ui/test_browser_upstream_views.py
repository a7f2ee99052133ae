"""Root cause, duplicate work and failing assertions in Chromium: the dataset page's
"What changed upstream" (the last 7 days, oldest first, each with its path), the job
page's "Same work elsewhere", and the graph marking a dataset whose assertions fail."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.api.test_duplicates import HISTORY as DUPLICATES
from tests.api.test_root_cause import HISTORY as UPSTREAM
from tests.api.test_root_cause import NS, _assertions, _run
from tests.server.live import running_server
from tests.store.builders import run_event
from tests.ui.browser import wait_for_graph

NOW = datetime.now(UTC).replace(microsecond=0)
# The root-cause history's day 3 becomes today, so its days 1 and 2 fall inside the
# page's 7-day window and its earlier failure outside it.
SHIFT = NOW - datetime(2026, 3, 3, tzinfo=UTC)


def _shifted(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    moved = copy.deepcopy(events)
    for event in moved:
        time = datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00")) + SHIFT
        event["eventTime"] = time.isoformat().replace("+00:00", "Z")
    return moved


FAILING_NOW = run_event(
    "COMPLETE",
    (NOW - timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
    _run(30),
    job="dq",
    namespace=NS,
    inputs=[_assertions(("not_null", "amount", False), ("unique", "id", False))],
)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = Path(tmp_path_factory.mktemp("upstream")) / "upstream.db"
    with running_server("--db", f"sqlite:///{db}") as url:
        events = [*_shifted(UPSTREAM), FAILING_NOW, *DUPLICATES]
        posted = httpx.post(f"{url}/api/v1/lineage/batch", json=events, timeout=60)
        assert posted.status_code < 300, posted.text
        yield url


def test_the_dataset_page_lists_what_changed_upstream(page: Page) -> None:
    page.goto(f"/datasets/{NS}/gold")
    listed = page.get_by_test_id("root-cause-list")
    expect(listed).to_be_visible()
    rows = listed.locator("tbody tr")
    expect(rows).to_have_count(5)
    kinds = [rows.nth(i).locator("[data-kind]").get_attribute("data-kind") for i in range(5)]
    assert kinds == [
        "versionDrift",
        "contractDrift",
        "failedRun",
        "qualityFailure",
        "qualityFailure",
    ]
    # The drift's path runs from the source through both jobs to this dataset, each a link.
    first = rows.nth(0)
    expect(first.locator(".root-cause-path")).to_have_text("src → clean → mid → agg → gold")
    expect(first.locator(".root-cause-path a").nth(1)).to_have_attribute(
        "href", f"/jobs/{NS}/clean"
    )
    expect(rows.nth(1)).to_contain_text("declared by clean")
    expect(rows.nth(4)).to_contain_text("not_null(amount), unique(id)")
    # A path's link opens that node's page.
    first.locator(".root-cause-path a").first.click()
    page.wait_for_url(f"**/datasets/{NS}/src")
    expect(page.locator("h1")).to_have_text("src")
    # Upstream of the source: its own drift only (clean reads it; it is not upstream).
    own = page.get_by_test_id("root-cause-list").locator("tbody tr")
    expect(own).to_have_count(1)
    expect(own.locator(".root-cause-path")).to_have_text("src")


def test_the_job_page_lists_the_same_work_elsewhere(page: Page) -> None:
    page.goto("/jobs/wh/sql_revenue")
    listed = page.get_by_test_id("duplicates-list")
    expect(listed).to_be_visible()
    rows = listed.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("df_revenue")
    expect(rows.nth(0).locator("[data-relation]")).to_have_text("equal")
    expect(rows.nth(0)).to_contain_text("2/2 exact")
    expect(rows.nth(0)).to_contain_text("revenue_sql.customer = revenue_df.cust")
    expect(rows.nth(1)).to_contain_text("eu_revenue")
    expect(rows.nth(1).locator("[data-relation]")).to_have_text("partial")
    expect(rows.nth(1)).to_contain_text("(other rows)")
    # A job that shares nothing has no such section.
    page.goto("/jobs/wh/ids")
    expect(page.locator("h1")).to_have_text("ids")
    expect(page.get_by_test_id("duplicates")).to_have_count(0)


def test_the_graph_marks_a_dataset_whose_assertions_fail(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote(f'dataset:{NS}:gold', safe='')}")
    graph = wait_for_graph(page)
    nodes = {n["id"]: n for n in graph["nodes"]}
    mid = nodes[f"dataset:{NS}:mid"]
    assert "failing" in mid["classes"], mid
    assert "✗ 2 assertions failing" in mid["label"]
    assert not any("failing" in n["classes"] for i, n in nodes.items() if i != mid["id"])
    legend = page.get_by_test_id("legend")
    expect(legend.locator("[data-legend='node:failing']")).to_be_visible()
