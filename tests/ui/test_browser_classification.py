"""Tags in the browser: the dataset page's classification section (propagated tags with
where they came from, tags stopped by masking or a block) and tag badges on the graph,
against a live server holding the classification pipeline of tests/api."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.api.classification_events import GOLD, RAW, RAW_EMAIL, SILVER, SILVER_EMAIL, events
from tests.server.live import running_server
from tests.ui.browser import wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.live]


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = Path(tmp_path_factory.mktemp("classification")) / "tags.db"
    with running_server("--db", f"sqlite:///{db}") as url:
        posted = httpx.post(f"{url}/api/v1/lineage/batch", json=events(), timeout=60)
        assert posted.status_code < 300, posted.text
        yield url


def _dataset_page(name: str) -> str:
    return f"/datasets/file/{quote(name, safe='')}"


def test_dataset_page_shows_propagated_tags_with_provenance(page: Page) -> None:
    page.goto(_dataset_page(SILVER))
    section = page.get_by_test_id("classification")
    expect(section).to_be_visible()
    expect(page.get_by_test_id("propagated-tags")).to_contain_text("↳ PII")
    expect(section.get_by_test_id("provenance")).to_have_text(
        "↳ PII PII from /raw/customers.email via job silver, transformation IDENTITY")
    expect(section.get_by_test_id("stopped")).to_have_text(
        "PII stopped: masking in job:ns:silver")
    # The source dataset shows its own tag on the column, nothing propagated.
    page.goto(_dataset_page(RAW))
    expect(page.get_by_test_id("classification")).to_contain_text("email")
    expect(page.get_by_test_id("propagated-tags")).to_have_count(0)


def test_a_block_shows_on_the_page(page: Page, base_url: str) -> None:
    block = httpx.post(f"{base_url}/api/v2/propagation-blocks", json={
        "job": "job:ns:silver", "source": RAW_EMAIL, "target": SILVER_EMAIL})
    assert block.status_code == 201, block.text
    try:
        page.goto(_dataset_page(SILVER))
        stops = page.get_by_test_id("classification").get_by_test_id("stopped")
        expect(stops).to_have_count(2)
        expect(stops.first).to_contain_text(f"blocked (block {block.json()['id']})")
    finally:
        removed = httpx.delete(f"{base_url}/api/v2/propagation-blocks/{block.json()['id']}")
        assert removed.status_code == 200, removed.text


def test_graph_badges_show_tags_and_propagated_tags(page: Page) -> None:
    page.goto(f"/lineage?{httpx.QueryParams({'nodeId': f'dataset:file:{SILVER}'})}")
    graph = wait_for_graph(page)
    badges = {n["id"]: n["badges"] for n in graph["nodes"] if n["kind"] == "DATASET"}
    assert badges[f"dataset:file:{RAW}"] == "PII"
    assert badges[f"dataset:file:{SILVER}"] == "↳PII"
    # Gold's current version no longer reads the email: no badge.
    assert badges[f"dataset:file:{GOLD}"] == ""
    labels = {n["id"]: n["label"] for n in graph["nodes"]}
    assert labels[f"dataset:file:{SILVER}"].endswith("\n↳PII")
    classes = {n["id"]: n["classes"] for n in graph["nodes"]}
    assert "propagated" in classes[f"dataset:file:{SILVER}"]


def test_graph_badges_follow_as_of(page: Page) -> None:
    """Before gold's second version, gold's contact was a copy of the PII email."""
    params = httpx.QueryParams({"nodeId": f"dataset:file:{SILVER}", "asOf": "2024-03-01T00:00:30Z"})
    page.goto(f"/lineage?{params}")
    graph = wait_for_graph(page)
    badges = {n["id"]: n["badges"] for n in graph["nodes"] if n["kind"] == "DATASET"}
    assert badges[f"dataset:file:{GOLD}"] == "↳PII"


def test_column_view_badges_each_column(page: Page) -> None:
    page.goto(f"/lineage?{httpx.QueryParams({'nodeId': SILVER_EMAIL, 'depth': '5'})}")
    graph = wait_for_graph(page)
    badges = {n["id"]: n["badges"] for n in graph["nodes"]}
    assert badges[RAW_EMAIL] == "PII"
    assert badges[SILVER_EMAIL] == "↳PII"
    assert all(badge == "" for node, badge in badges.items()
               if node.startswith(f"datasetField:file:{GOLD}"))
