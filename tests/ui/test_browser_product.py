"""The explorer and pages as a product, in the browser, checked by geometry and the DOM:
the legend, labels readable at every zoom the view offers, run ids that are never
ambiguous, long lists a page at a time, an orchestrator run's page and graph, the
accessibility of every page (axe-core), keyboard use and deep links with the back button.

The store is made here and posted to a live ``headwater serve``: a job with more than
1,000 runs (two of them sharing all but the last character of their ids) writing one
dataset, 250 datasets a search finds, and an orchestrator run over two application runs
over their action runs, as the demo sends. What the page should show is worked out from
the API's own answers.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.server.live import running_server
from tests.ui.browser import click_node, edges_of, serious_violations, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.live]

NS = "product"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
PRODUCER = "https://github.com/headwater/tests/ui"
BUSY_RUNS = 1_050
# The two newest runs of the busy job: the same but for the last character.
TWINS = ("3f2a9c4e-7b1d-4e8a-9c3b-5d6e7f8a9b01", "3f2a9c4e-7b1d-4e8a-9c3b-5d6e7f8a9b02")
ORCHESTRATOR = "0a0a0a0a-0000-4000-8000-000000000001"
LONG = "warehouse/a_dataset_with_a_name_far_longer_than_any_node_box_can_hold_in_one_line"
#: The smallest on-screen label font size the view allows (frontend/src/graph/labels.ts).
FLOOR_PX = 8


def event(
    kind: str,
    at: datetime,
    run: str,
    job: str,
    inputs: list[str],
    outputs: list[str],
    parent: tuple[str, str] | None = None,
    output_type: str | None = None,
) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if parent:
        facets["parent"] = {
            "_producer": PRODUCER,
            "_schemaURL": SCHEMA_URL,
            "run": {"runId": parent[0]},
            "job": {"namespace": NS, "name": parent[1]},
        }
    dataset_facets = (
        {
            "datasetType": {
                "_producer": PRODUCER,
                "_schemaURL": SCHEMA_URL,
                "datasetType": output_type,
            }
        }
        if output_type
        else {}
    )
    return {
        "eventType": kind,
        "eventTime": at.isoformat(),
        "run": {"runId": run, "facets": facets},
        "job": {"namespace": NS, "name": job},
        "inputs": [{"namespace": NS, "name": n} for n in inputs],
        "outputs": [{"namespace": NS, "name": n, "facets": dataset_facets} for n in outputs],
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }


def store_events() -> list[dict[str, Any]]:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    events = []
    # A busy job: 1,050 runs, each writing a version of busy_out; the twins last.
    ids = [str(uuid.UUID(int=(i + 1) * 7919, version=4)) for i in range(BUSY_RUNS - 2)]
    for i, run in enumerate([*ids, *TWINS]):
        events.append(
            event("COMPLETE", start + timedelta(minutes=i), run, "busy", ["raw"], ["busy_out"])
        )
    # 250 datasets named item_*, written by one run.
    items = [f"item_{i:04d}" for i in range(250)]
    events.append(event("COMPLETE", start, str(uuid.uuid4()), "make_items", [], items))
    # The demo's shape: orchestrator run -> application runs -> action runs with the I/O.
    at = start + timedelta(days=2)
    apps = {"app_orders": ["raw", "orders", LONG], "app_model": [LONG, "features", "scores"]}
    events.append(event("START", at, ORCHESTRATOR, "nightly", [], []))
    for a, (app, (first, middle, last)) in enumerate(apps.items()):
        app_run = f"0a0a0a0a-0000-4000-8000-0000000001{a:02d}"
        events.append(event("START", at, app_run, app, [], [], parent=(ORCHESTRATOR, "nightly")))
        steps = [
            (f"{app}.step_one_with_a_long_action_name_{first}", first, middle),
            (f"{app}.step_two", middle, last),
        ]
        for s, (job, read, written) in enumerate(steps):
            action = f"0a0a0a0a-0000-4000-8000-0000000002{a}{s}"
            kind = "MODEL" if written == "scores" else "TOPIC" if written == "orders" else None
            events.append(
                event(
                    "COMPLETE",
                    at + timedelta(minutes=s + 1),
                    action,
                    job,
                    [read],
                    [written],
                    parent=(app_run, app),
                    output_type=kind,
                )
            )
        events.append(
            event(
                "COMPLETE",
                at + timedelta(minutes=5),
                app_run,
                app,
                [],
                [],
                parent=(ORCHESTRATOR, "nightly"),
            )
        )
    events.append(event("COMPLETE", at + timedelta(minutes=6), ORCHESTRATOR, "nightly", [], []))
    return events


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = Path(tmp_path_factory.mktemp("product")) / "product.db"
    with running_server("--db", f"sqlite:///{db}") as url:
        posted = httpx.post(f"{url}/api/v1/lineage/batch", json=store_events(), timeout=120)
        assert posted.status_code < 300, posted.text
        yield url


def api(base_url: str, path: str, **params: Any) -> Any:
    answer = httpx.get(f"{base_url}{path}", params=params, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def accessible(page: Page) -> None:
    violations = serious_violations(page)
    assert not violations, violations


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]


def orchestrator_view(page: Page) -> dict[str, Any]:
    page.goto(f"/lineage?nodeId={quote('run:' + ORCHESTRATOR)}&depth=2")
    return wait_for_graph(page)


def test_the_legend_names_every_node_and_edge_kind(page: Page) -> None:
    graph = orchestrator_view(page)
    # Topics and models are drawn as their own kinds, from the datasetType facet.
    types = {n["id"].split("#")[0]: n["datasetType"] for n in graph["nodes"]}
    assert types[f"dataset:{NS}:orders"] == "TOPIC"
    assert types[f"dataset:{NS}:scores"] == "MODEL"
    assert types[f"dataset:{NS}:features"] == ""
    entries = page.get_by_test_id("legend").locator("[data-legend]")
    kinds = {str(entries.nth(i).get_attribute("data-legend")) for i in range(entries.count())}
    assert {f"node:{k}" for k in ("dataset", "topic", "model", "job", "run", "field")} <= kinds
    assert {
        f"edge:{k}" for k in ("table", "identity", "transformation", "aggregation", "indirect")
    } <= kinds
    for i in range(entries.count()):
        expect(entries.nth(i)).to_be_visible()
        assert entries.nth(i).inner_text().strip()
    text = page.get_by_test_id("legend").inner_text()
    assert "DIRECT" in text and "INDIRECT" in text and "topic" in text and "model" in text
    accessible(page)


def test_labels_stay_readable_inside_their_box_at_every_zoom(page: Page) -> None:
    graph = orchestrator_view(page)
    long_node = next(n for n in graph["nodes"] if n["id"] == f"dataset:{NS}:{LONG}")
    assert long_node["label"].endswith("…") and LONG in long_node["full"]
    for level in (graph["minZoom"], graph["maxZoom"], 1.0):
        page.evaluate("(z) => window.headwater.zoomTo(z)", level)
        labels = page.evaluate("window.headwater.labels()")
        assert labels
        for label in labels:
            assert label["fontPx"] >= FLOOR_PX - 1e-6, label
            box, node = label["label"], label["node"]
            assert node["x1"] <= box["x1"] and box["x2"] <= node["x2"], label  # not cut
            assert node["y1"] <= box["y1"] and box["y2"] <= node["y2"], label
            assert box["w"] > 0 and box["h"] > 0, label  # never vanished
        for a, b in combinations(labels, 2):
            assert not overlap(a["label"], b["label"]), (a["id"], b["id"])
    # The zoom buttons never leave that range.
    out = page.locator("[data-action=zoom-out]")
    for _ in range(12):
        out.click()
    assert page.evaluate("window.headwater.graph().zoom") >= graph["minZoom"] - 1e-9
    # Hovering a node shows its whole name.
    page.evaluate("() => window.headwater.zoomTo(1)")
    at = page.evaluate("(id) => window.headwater.reveal(id)", long_node["id"])
    box = page.get_by_test_id("graph").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + at["x"], box["y"] + at["y"])
    expect(page.get_by_test_id("graph")).to_have_attribute("title", re.compile(re.escape(LONG)))


def test_run_ids_are_unique_on_the_page_with_the_full_id_on_hover_and_copy(page: Page) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"/jobs/{NS}/busy")
    links = page.get_by_test_id("runs").locator("[data-run-id]")
    expect(links).to_have_count(100)
    shown = {
        str(links.nth(i).get_attribute("data-run-id")): links.nth(i).inner_text()
        for i in range(links.count())
    }
    assert set(TWINS) <= set(shown)
    assert len(set(shown.values())) == len(shown)  # unique on the page
    for full, short in shown.items():
        assert full.startswith(short) and len(short) >= 8
    assert shown[TWINS[0]] != shown[TWINS[1]]
    twin = page.locator(f"[data-run-id='{TWINS[1]}']")
    expect(twin).to_have_attribute("title", TWINS[1])
    twin.locator("xpath=..").get_by_role("button").click()
    assert page.evaluate("navigator.clipboard.readText()") == TWINS[1]
    accessible(page)


def pager_shows(page: Page, rows: str, first: int, last: int, total: int, noun: str) -> None:
    expect(page.locator(rows)).to_have_count(last - first + 1)
    expect(page.locator(".pager-status").first).to_have_text(
        f"{first:,}–{last:,} of {total:,} {noun}"
    )
    # No page of the site ever holds more than a few hundred table rows.
    assert page.locator("tr").count() <= 300


def test_every_long_list_is_paged(page: Page, base_url: str) -> None:
    runs = api(base_url, f"/api/v1/namespaces/{NS}/jobs/busy/runs", limit=1)["totalCount"]
    assert runs == BUSY_RUNS
    page.goto(f"/jobs/{NS}/busy")
    pager_shows(page, "[data-testid=runs] tbody tr", 1, 100, runs, "runs")
    page.locator("[data-action=next-page]").click()
    pager_shows(page, "[data-testid=runs] tbody tr", 101, 200, runs, "runs")
    expected = api(base_url, f"/api/v1/namespaces/{NS}/jobs/busy/runs", limit=1, offset=100)
    expect(page.get_by_test_id("runs").locator("[data-run-id]").first).to_have_attribute(
        "data-run-id", expected["runs"][0]["id"]
    )
    accessible(page)

    versions = api(base_url, f"/api/v1/namespaces/{NS}/datasets/busy_out/versions", limit=1)
    assert versions["totalCount"] >= 1_000
    page.goto(f"/datasets/{NS}/busy_out")
    pager_shows(page, "[data-testid=versions] tbody tr", 1, 100, versions["totalCount"], "versions")
    accessible(page)

    page.goto("/search?q=item_0")
    pager_shows(page, ".search-results tbody tr", 1, 100, 250, "results")
    page.locator("[data-action=next-page]").click()
    page.locator("[data-action=next-page]").click()
    pager_shows(page, ".search-results tbody tr", 201, 250, 250, "results")
    accessible(page)

    page.goto("/")
    datasets = api(base_url, f"/api/v1/namespaces/{NS}/datasets", limit=1)["totalCount"]
    pager_shows(page, f"[data-testid=datasets-{NS}] tbody tr", 1, 100, datasets, "datasets")
    accessible(page)


def test_an_orchestrator_runs_page_and_graph_show_its_runs_and_their_data(
    page: Page, base_url: str
) -> None:
    children = api(base_url, f"/api/v1/jobs/runs/{ORCHESTRATOR}/children")["runs"]
    assert len(children) == 2
    page.goto(f"/runs/{ORCHESTRATOR}")
    listed = page.get_by_test_id("children").locator("[data-run-id]")
    expect(listed).to_have_count(2)
    assert {listed.nth(i).get_attribute("data-run-id") for i in range(2)} == {
        r["id"] for r in children
    }
    accessible(page)
    # The graph: every action run under the application runs, with what they read and wrote.
    expected: set[tuple[str, str]] = set()
    for app in children:
        for action in api(base_url, f"/api/v1/jobs/runs/{app['id']}/children")["runs"]:
            answer = api(base_url, "/api/v2/lineage", nodeId=f"run:{action['id']}", depth=2)
            expected |= {(e["upstream"], e["downstream"]) for e in answer["edges"]}
    assert len(expected) >= 8
    # The run page embeds that graph; the explorer draws it too.
    assert edges_of(wait_for_graph(page)) == expected
    accessible(page)
    page.get_by_role("link", name="view run lineage").click()
    graph = wait_for_graph(page)
    assert edges_of(graph) == expected
    expect(page.get_by_test_id("child-runs")).to_contain_text("6 runs under it")
    accessible(page)


def test_every_page_passes_the_accessibility_scan(page: Page) -> None:
    for url in (
        "/",
        "/producers",
        f"/jobs/{NS}/app_orders",
        f"/lineage?nodeId={quote(f'dataset:{NS}:orders')}&direction=both&depth=2",
    ):
        page.goto(url)
        expect(page.locator("#app")).not_to_have_attribute("data-loading", "true")
        if "lineage" in url:
            wait_for_graph(page)
        violations = serious_violations(page)
        assert not violations, (url, violations)


def test_keyboard_search_list_and_graph_selection(page: Page) -> None:
    page.goto("/")
    search = page.get_by_role("combobox", name="Search").first
    search.focus()
    page.keyboard.type("item_000")
    expect(page.locator(".suggestions li").first).to_be_visible()
    page.keyboard.press("ArrowDown")
    expect(search).to_have_attribute("aria-activedescendant", re.compile(r".+"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/lineage\?nodeId=dataset"))
    wait_for_graph(page)
    # Graph selection from the keyboard: the canvas takes focus, arrows move the selection.
    page.get_by_test_id("graph").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_test_id("panel")).not_to_contain_text("Click a node for details.")
    selected = page.evaluate("window.headwater.selected()")
    assert selected
    page.keyboard.press("Enter")  # opens the selection's page
    page.wait_for_url(re.compile(r"/(datasets|jobs)/"))
    # Lists: the pager's buttons are reachable and work with the keyboard.
    page.goto(f"/jobs/{NS}/busy")
    following = page.locator("[data-action=next-page]")
    following.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".pager-status")).to_have_text(f"101–200 of {BUSY_RUNS:,} runs")


def test_deep_links_and_the_back_button(page: Page) -> None:
    node = f"dataset:{NS}:features"
    page.goto(f"/lineage?nodeId={quote(node)}&direction=upstream&depth=2&asOf=2026-11-10T00:00:00Z")
    graph = wait_for_graph(page)
    expect(page.get_by_label("direction")).to_have_value("upstream")
    expect(page.get_by_label("depth")).to_have_value("2")
    expect(page.get_by_label("as of")).to_have_value("2026-11-10T00:00:00Z")
    first = {n["id"] for n in graph["nodes"]}
    page.get_by_label("direction").select_option("downstream")
    page.wait_for_url(re.compile(r"direction=downstream"))
    assert {n["id"] for n in wait_for_graph(page)["nodes"]} != first
    click_node(page, wait_for_graph(page), node)
    page.wait_for_url(re.compile(r"selected="))
    page.go_back()
    page.wait_for_url(re.compile(r"direction=upstream"))
    expect(page.get_by_label("direction")).to_have_value("upstream")
    assert {n["id"] for n in wait_for_graph(page)["nodes"]} == first
