"""A big answer in the browser: past the draw limit the explorer draws the hops nearest the
root first, says so, marks the frontier, and grows one hop at a time or to everything.

The graph is generated here (a lattice of jobs, each reading two datasets of the layer
before) and posted to a live ``headwater serve``; ``limit`` is set low so the test stays
small, and what should be drawn is worked out from the server's own answer.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.server.live import running_server
from tests.ui.browser import ARTIFACTS, edges_of, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.live]

LAYERS = 20
WIDTH = 12
LIMIT = 60
NAMESPACE = "lattice"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
ROOT = f"dataset:{NAMESPACE}:d10_0"


def lattice_events() -> list[dict[str, Any]]:
    """START and COMPLETE of one run per job.

    Job ``j<l>_<i>`` reads ``d<l-1>_<i>`` and ``d<l-1>_<i+1>`` and writes ``d<l>_<i>``.
    """
    events: list[dict[str, Any]] = []
    start = datetime(2026, 11, 1, tzinfo=UTC)
    for layer in range(1, LAYERS + 1):
        for i in range(WIDTH):
            run_id = f"00000000-0000-4000-8000-{layer:06d}{i:06d}"
            inputs = [
                {"namespace": NAMESPACE, "name": f"d{layer - 1}_{(i + k) % WIDTH}"} for k in (0, 1)
            ]
            for offset, kind in ((0, "START"), (30, "COMPLETE")):
                events.append(
                    {
                        "eventType": kind,
                        "eventTime": (start + timedelta(minutes=layer, seconds=offset)).isoformat(),
                        "run": {"runId": run_id},
                        "job": {"namespace": NAMESPACE, "name": f"j{layer}_{i}"},
                        "inputs": inputs,
                        "outputs": [{"namespace": NAMESPACE, "name": f"d{layer}_{i}"}],
                        "producer": "https://github.com/headwater/tests/ui",
                        "schemaURL": SCHEMA_URL,
                    }
                )
    return events


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = Path(tmp_path_factory.mktemp("large")) / "lattice.db"
    with running_server("--db", f"sqlite:///{db}") as url:
        posted = httpx.post(f"{url}/api/v1/lineage/batch", json=lattice_events(), timeout=60)
        assert posted.status_code < 300, posted.text
        yield url


def hop_levels(answer: dict[str, Any]) -> dict[str, int]:
    """Hops from the root: upstream against the edges, downstream along them (never sideways)."""
    down: dict[str, list[str]] = {}
    up: dict[str, list[str]] = {}
    for e in answer["edges"]:
        down.setdefault(e["upstream"], []).append(e["downstream"])
        up.setdefault(e["downstream"], []).append(e["upstream"])
    levels: dict[str, int] = {}
    for step in (up, down):
        seen = {ROOT: 0}
        queue = deque([ROOT])
        while queue:
            node = queue.popleft()
            levels[node] = min(levels.get(node, seen[node]), seen[node])
            for neighbour in step.get(node, []):
                if neighbour not in seen:
                    seen[neighbour] = seen[node] + 1
                    queue.append(neighbour)
    return levels


def within(levels: dict[str, int], hops: int) -> set[str]:
    return {node for node, level in levels.items() if level <= hops}


def test_a_big_answer_is_drawn_nearest_hops_first_and_grows(page: Page, base_url: str) -> None:
    answer = httpx.get(f"{base_url}/api/v2/lineage", params={"nodeId": ROOT, "depth": 100}).json()
    levels = hop_levels(answer)
    assert len(levels) == len(answer["nodes"]) > 3 * LIMIT
    fits = max(h for h in range(max(levels.values()) + 1) if len(within(levels, h)) <= LIMIT)

    page.goto(f"/lineage?nodeId={quote(ROOT)}&depth=100&limit={LIMIT}")
    graph = wait_for_graph(page)
    drawn = {n["id"] for n in graph["nodes"]}
    assert drawn == within(levels, fits)
    all_edges = {(e["upstream"], e["downstream"]) for e in answer["edges"]}
    assert edges_of(graph) == {(a, b) for a, b in all_edges if a in drawn and b in drawn}
    expect(page.get_by_test_id("limited")).to_contain_text(
        f"showing {len(drawn)} of {len(levels)} nodes: {fits} of {max(levels.values())} hops"
    )
    # The frontier, the drawn nodes with neighbours left out, is marked.
    frontier = {a for a, b in all_edges if a in drawn and b not in drawn}
    frontier |= {b for a, b in all_edges if b in drawn and a not in drawn}
    assert frontier
    assert {n["id"] for n in graph["nodes"] if "more" in n["classes"]} == frontier
    # Left to right still holds in the cut view.
    x = {n["id"]: n["x"] for n in graph["nodes"]}
    assert all(x[a] < x[b] for a, b in edges_of(graph))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "large_graph_limited_view.png"))

    # Growing the view redraws from the answer already in the page: no API request.
    asked: list[str] = []
    page.on("request", lambda request: "/api/" in request.url and asked.append(request.url))
    page.locator("[data-action=grow]").click()
    page.wait_for_url(re.compile(rf"level={fits + 1}"))
    assert {n["id"] for n in wait_for_graph(page)["nodes"]} == within(levels, fits + 1)

    page.locator("[data-action=show-all]").click()
    page.wait_for_url(re.compile(r"limit=0"))
    graph = wait_for_graph(page)
    assert {n["id"] for n in graph["nodes"]} == set(levels)
    assert edges_of(graph) == all_edges
    expect(page.get_by_test_id("limited")).to_have_count(0)
    assert asked == []


def test_expanding_a_frontier_node_draws_its_neighbours(page: Page, base_url: str) -> None:
    answer = httpx.get(f"{base_url}/api/v2/lineage", params={"nodeId": ROOT, "depth": 100}).json()
    levels = hop_levels(answer)
    page.goto(f"/lineage?nodeId={quote(ROOT)}&depth=100&limit={LIMIT}&level=2")
    graph = wait_for_graph(page)
    assert {n["id"] for n in graph["nodes"]} == within(levels, 2)
    edge = next(
        e for e in answer["edges"] if levels[e["upstream"]] == 2 and levels[e["downstream"]] == 3
    )
    node = edge["upstream"]
    assert "more" in next(n for n in graph["nodes"] if n["id"] == node)["classes"]
    page.goto(
        f"/lineage?nodeId={quote(ROOT)}&depth=100&limit={LIMIT}&level=2&selected={quote(node)}"
    )
    wait_for_graph(page)
    expect(page.get_by_test_id("frontier-note")).to_be_visible()
    page.get_by_test_id("panel").locator("[data-action=expand-downstream]").click()
    page.wait_for_url(re.compile(r"x=downstream"))
    drawn = {n["id"] for n in wait_for_graph(page)["nodes"]}
    assert within(levels, 2) | {edge["downstream"]} <= drawn


def test_small_answers_are_drawn_whole(page: Page, base_url: str) -> None:
    answer = httpx.get(f"{base_url}/api/v2/lineage", params={"nodeId": ROOT, "depth": 2}).json()
    page.goto(f"/lineage?nodeId={quote(ROOT)}&depth=2&limit={LIMIT}")
    graph = wait_for_graph(page)
    # d10_0; its writer and the writer's two inputs; its two readers and their outputs
    assert {n["id"] for n in graph["nodes"]} == {n["id"] for n in answer["nodes"]}
    assert len(graph["nodes"]) == 8
    expect(page.get_by_test_id("limited")).to_have_count(0)
    assert not [n for n in graph["nodes"] if "more" in n["classes"]]


def on_canvas(page: Page, graph: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The ids of the nodes whose box is (partly) on the canvas, and of the others."""
    box = page.get_by_test_id("graph").bounding_box()
    assert box is not None
    # A node is 170 × 44 graph units at most; its half, at the current zoom, in pixels.
    half_w, half_h = 85 * graph["zoom"], 22 * graph["zoom"]
    shown = {
        n["id"]
        for n in graph["nodes"]
        if -half_w < n["x"] < box["width"] + half_w and -half_h < n["y"] < box["height"] + half_h
    }
    return shown, {n["id"] for n in graph["nodes"]} - shown


def assert_labelled(page: Page, ids: set[str]) -> None:
    """Each node of ``ids`` has its label drawn: inside its box, at least 8 px on screen."""
    labels = {x["id"]: x for x in page.evaluate("window.headwater.labels()")}
    graph = page.evaluate("window.headwater.graph()")
    classes = {n["id"]: n["classes"] for n in graph["nodes"]}
    for node_id in ids:
        assert "offscreen" not in classes[node_id], node_id
        label, node = labels[node_id]["label"], labels[node_id]["node"]
        assert label["w"] > 0 and label["h"] > 0, node_id
        assert node["x1"] <= label["x1"] and label["x2"] <= node["x2"], node_id
        assert labels[node_id]["fontPx"] >= 8, node_id


def test_a_big_graph_labels_every_node_in_view_and_the_rest_as_the_view_reaches_them(
    page: Page,
) -> None:
    # Everything downstream of the first layer, drawn whole: past the size where labels are
    # measured and drawn only near the view.
    page.goto(
        f"/lineage?nodeId={quote(f'dataset:{NAMESPACE}:d0_0')}"
        "&direction=downstream&depth=100&limit=0"
    )
    graph = wait_for_graph(page)
    assert len(graph["nodes"]) > 300
    shown, hidden = on_canvas(page, graph)
    assert shown and hidden
    assert_labelled(page, shown)
    far = [n for n in graph["nodes"] if "offscreen" in n["classes"]]
    assert far, "nodes far from the view wait for their label"
    assert {n["id"] for n in far} <= hidden
    # Panned to a far node: it and everything then on the canvas has its label.
    target = max(far, key=lambda n: n["x"])["id"]
    page.evaluate("(id) => window.headwater.reveal(id)", target)
    graph = page.evaluate("window.headwater.graph()")
    shown, _ = on_canvas(page, graph)
    assert target in shown
    assert_labelled(page, shown)
    # At the smallest and the largest zoom the view offers, too.
    for zoom in (graph["minZoom"], graph["maxZoom"]):
        page.evaluate("(z) => window.headwater.zoomTo(z)", zoom)
        graph = page.evaluate("window.headwater.graph()")
        shown, _ = on_canvas(page, graph)
        assert_labelled(page, shown)
