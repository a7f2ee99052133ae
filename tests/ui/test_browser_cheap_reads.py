"""The UI reads the cheap way: bounded /api/v2 lineage answers, each asked for once per
view, gzip'd, and a neighbourhood bigger than one answer reached by expanding the nodes
an answer cut.

The page's own requests and responses are recorded (``page.on``) on a generated lattice
(test_browser_large's) far bigger than the ``maxNodes`` the views are opened with.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from playwright.sync_api import Page, Response, expect

from tests.server.live import running_server
from tests.ui.browser import click_node, wait_for_graph
from tests.ui.test_browser_large import NAMESPACE, ROOT, lattice_events

pytestmark = [pytest.mark.browser, pytest.mark.live]

MAX_NODES = 40
TRUNCATED_MARK = "truncated — expand"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = Path(tmp_path_factory.mktemp("cheap")) / "lattice.db"
    with running_server("--db", f"sqlite:///{db}") as url:
        posted = httpx.post(f"{url}/api/v1/lineage/batch", json=lattice_events(), timeout=60)
        assert posted.status_code < 300, posted.text
        yield url


class Recorder:
    """The page's requests to the API and every response's headers, as they happen."""

    def __init__(self, page: Page) -> None:
        self.api: list[str] = []
        self.encodings: dict[str, str] = {}
        page.on("request", self._request)
        page.on("response", self._response)

    def _request(self, request: Any) -> None:
        if urlsplit(request.url).path.startswith("/api/"):
            self.api.append(request.url)

    def _response(self, response: Response) -> None:
        headers = response.all_headers()
        self.encodings[response.url] = headers.get("content-encoding", "")

    def lineage(self) -> list[dict[str, list[str]]]:
        """The query of every lineage request (any API version), in order."""
        return [parse_qs(urlsplit(u).query) for u in self.api if "/lineage" in urlsplit(u).path]

    def clear(self) -> None:
        self.api.clear()


def assert_asked_once_each(recorder: Recorder) -> None:
    repeated = {url: n for url, n in Counter(recorder.api).items() if n > 1}
    assert not repeated, repeated


def assert_bounded_v2(recorder: Recorder, max_nodes: int) -> None:
    paths = {urlsplit(u).path for u in recorder.api if "/lineage" in urlsplit(u).path}
    assert paths == {"/api/v2/lineage"}, paths
    for query in recorder.lineage():
        assert query["maxNodes"] == [str(max_nodes)], query


def test_the_explorer_reads_bounded_v2_answers_once_and_expands_past_the_cut(
    page: Page, base_url: str
) -> None:
    recorder = Recorder(page)
    answer = httpx.get(
        f"{base_url}/api/v2/lineage",
        params={"nodeId": ROOT, "depth": 100, "maxNodes": MAX_NODES},
    ).json()
    assert answer["truncated"] is True
    first = {n["id"] for n in answer["nodes"]}
    cut = set(answer["truncatedNodes"])
    assert cut and cut <= first

    page.goto(f"/lineage?nodeId={quote(ROOT)}&depth=100&maxNodes={MAX_NODES}")
    graph = wait_for_graph(page)
    assert {n["id"] for n in graph["nodes"]} == first
    assert_bounded_v2(recorder, MAX_NODES)
    assert len(recorder.lineage()) == 1
    assert_asked_once_each(recorder)
    # gzip'd when the browser accepts it (Chromium does): the answer, the script and styles.
    lineage_url = next(u for u in recorder.api if "/api/v2/lineage" in u)
    assert recorder.encodings[lineage_url] == "gzip"
    bundle = {u: recorder.encodings[u] for u in recorder.encodings if "/assets/index-" in u}
    assert {u.rsplit(".", 1)[1] for u in bundle} == {"js", "css"}, bundle
    assert set(bundle.values()) == {"gzip"}, bundle

    # Every node the server cut is marked on the graph, and only those.
    marked = {n["id"] for n in graph["nodes"] if "truncated" in n["classes"]}
    assert marked == cut
    assert all(TRUNCATED_MARK in n["label"] for n in graph["nodes"] if n["id"] in cut)
    expect(page.get_by_test_id("truncated")).to_contain_text(f"cut at {MAX_NODES} nodes")

    # Expanding a marked node asks for its neighbourhood alone and draws it into the graph.
    node = sorted(cut)[0]
    neighbourhood = httpx.get(
        f"{base_url}/api/v2/lineage",
        params={"nodeId": node, "depth": 1, "direction": "both", "maxNodes": MAX_NODES},
    ).json()
    beyond = {n["id"] for n in neighbourhood["nodes"]} - first
    assert beyond
    recorder.clear()
    click_node(page, graph, node)
    expect(page.get_by_test_id("truncated-note")).to_be_visible()
    page.get_by_test_id("panel").locator("[data-action=expand-truncated]").click()
    page.wait_for_url(re.compile(r"[?&]x="))
    grown = wait_for_graph(page)
    assert recorder.lineage() == [
        {"nodeId": [node], "direction": ["both"], "depth": ["1"], "maxNodes": [str(MAX_NODES)]}
    ]
    assert_asked_once_each(recorder)
    drawn = {n["id"] for n in grown["nodes"]}
    assert drawn == first | beyond
    # The expanded node's own answer held all its neighbours: it is no longer marked.
    assert node not in neighbourhood["truncatedNodes"]
    assert "truncated" not in next(n for n in grown["nodes"] if n["id"] == node)["classes"]


def test_a_giant_max_nodes_in_the_url_is_bounded(page: Page, base_url: str) -> None:
    recorder = Recorder(page)
    page.goto(f"/lineage?nodeId={quote(ROOT)}&depth=100&maxNodes=100000")
    wait_for_graph(page)
    assert_bounded_v2(recorder, 2000)


@pytest.mark.parametrize("path", ["dataset", "run"])
def test_pages_ask_for_each_answer_once(page: Page, base_url: str, path: str) -> None:
    recorder = Recorder(page)
    if path == "dataset":
        page.goto(f"/datasets/{NAMESPACE}/d10_0")
        expect(page.get_by_test_id("versions").locator("tbody tr")).to_have_count(1)
    else:
        run_id = "00000000-0000-4000-8000-000010000000"  # job j10_0's run
        page.goto(f"/runs/{run_id}")
        expect(page.get_by_test_id("children-count")).to_have_text("No child runs.")
        wait_for_graph(page)
        assert_bounded_v2(recorder, 1000)
        assert recorder.lineage()
    page.wait_for_load_state("networkidle")
    assert recorder.api
    assert_asked_once_each(recorder)
