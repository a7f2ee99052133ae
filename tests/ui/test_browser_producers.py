"""The Producers page in the browser: one row per producer and namespace of
``/api/v2/producers``, with the figures the API gives, under the page's content security policy."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.browser, pytest.mark.live]


def test_the_producers_page_shows_every_producer(page: Page, base_url: str) -> None:
    answer = httpx.get(f"{base_url}/api/v2/producers")
    assert answer.status_code == 200
    producers = answer.json()["producers"]
    assert producers and all(p["events"] > 0 for p in producers)

    page.goto("/")
    page.get_by_role("link", name="Producers").click()
    page.wait_for_url("**/producers")
    rows = page.get_by_test_id("producers").locator("tbody tr")
    expect(rows).to_have_count(len(producers))
    for row, expected in zip(rows.all(), producers, strict=True):
        cells = row.locator("td").all_inner_texts()
        assert cells[0] == (expected["producer"] or "(none named)")
        assert cells[1] == (expected["namespace"] or "—")
        assert cells[5] == str(expected["events"]) and cells[6] == str(expected["rejected"])
