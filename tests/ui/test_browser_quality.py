"""The dataset page's data quality in Chromium: the failing assertion summarised, the latest
values, and an SVG chart per metric (a line of values, a row of pass/fail marks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.api.test_quality import HISTORY
from tests.server.live import running_server


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = Path(tmp_path_factory.mktemp("quality")) / "quality.db"
    with running_server("--db", f"sqlite:///{db}") as url:
        posted = httpx.post(f"{url}/api/v1/lineage/batch", json=HISTORY, timeout=60)
        assert posted.status_code < 300, posted.text
        yield url


def test_dataset_page_shows_quality_history(page: Page) -> None:
    page.goto(f"/datasets/file/{quote('/orders', safe='')}")
    quality = page.get_by_test_id("quality")
    expect(quality).to_be_visible()
    expect(page.get_by_test_id("quality-summary")).to_have_text(
        "1 of 2 assertions failing · latest "
        + page.get_by_test_id("quality-summary").inner_text().split("latest ", 1)[1]
    )
    rows = quality.locator("tbody tr")
    measures = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
    assert "rowCount" in measures and "assertion not_null" in measures
    row_count = rows.filter(has=page.locator("td", has_text="rowCount")).first
    expect(row_count.locator("td").nth(2)).to_have_text("121")
    # The row count's chart: one point per observation (100, 120, 121).
    expect(row_count.locator("svg circle")).to_have_count(3)
    not_null = rows.filter(has_text="assertion not_null")
    expect(not_null.get_by_test_id("assertion-latest")).to_have_text("FAIL")
    marks = not_null.locator("svg circle")
    assert [marks.nth(i).get_attribute("data-success") for i in range(marks.count())] == [
        "true",
        "false",
    ]
