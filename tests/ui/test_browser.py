"""The web UI in a real browser (headless chromium) against a live server loaded with the
retail sample (src/headwater/samples): graph, expansion, path, collapse, column view, pages.

The server, browser and page fixtures are in conftest.py; screenshots are saved under
test-artifacts/ui/.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from tests.ui.browser import click_node, edges_of, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.live]

ROOT = "/warehouse/retail"


def ds(path: str) -> str:
    return f"dataset:file:{ROOT}/{path}"


def field(path: str, name: str) -> str:
    return f"datasetField:file:{ROOT}/{path}:{name}"


def job(name: str) -> str:
    return f"job:retail:{name}"


def test_graph_shows_the_directed_neighbourhood(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote(ds('silver/orders'))}&direction=both&depth=2")
    graph = wait_for_graph(page)
    assert {n["id"] for n in graph["nodes"]} == {
        ds("bronze/orders"), job("silver.clean_orders"), ds("silver/orders"),
        job("silver.build_order_lines"), ds("silver/order_lines"),
        job("gold.customer_lifetime_value"), ds("gold/customer_ltv"),
    }
    assert edges_of(graph) == {
        (ds("bronze/orders"), job("silver.clean_orders")),
        (job("silver.clean_orders"), ds("silver/orders")),
        (ds("silver/orders"), job("silver.build_order_lines")),
        (job("silver.build_order_lines"), ds("silver/order_lines")),
        (ds("silver/orders"), job("gold.customer_lifetime_value")),
        (job("gold.customer_lifetime_value"), ds("gold/customer_ltv")),
    }
    nodes = {n["id"]: n for n in graph["nodes"]}
    # Left to right: data flows towards larger x.
    x = {node_id: node["x"] for node_id, node in nodes.items()}
    assert x[ds("bronze/orders")] < x[ds("silver/orders")] < x[ds("gold/customer_ltv")]
    assert "root" in nodes[ds("silver/orders")]["classes"]
    # Job nodes carry their latest run's state and start time.
    assert nodes[job("silver.clean_orders")]["state"] == "COMPLETED"
    assert "2026-11-03" in nodes[job("silver.clean_orders")]["label"]
    expect(page.get_by_test_id("graph-status")).to_contain_text("7 nodes, 6 edges")


def test_fast_layered_layout_draws_left_to_right(page: Page) -> None:
    # Graphs past 150 nodes get headwater's layered layout; ?layout=layered forces it here.
    root = quote(ds("silver/order_lines"))
    page.goto(f"/lineage?nodeId={root}&direction=both&depth=10&layout=layered")
    graph = wait_for_graph(page)
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert len(nodes) == 14  # everything upstream and downstream of silver/order_lines
    for edge in graph["edges"]:
        assert nodes[edge["source"]]["x"] < nodes[edge["target"]]["x"], edge
    # No two nodes drawn on top of each other.
    spots = {(round(n["x"]), round(n["y"])) for n in nodes.values()}
    assert len(spots) == len(nodes)


def test_expand_downstream_one_hop_from_a_clicked_node(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote(ds('silver/orders'))}&direction=both&depth=2")
    graph = wait_for_graph(page)
    assert job("gold.daily_revenue") not in {n["id"] for n in graph["nodes"]}
    click_node(page, graph, ds("silver/order_lines"))
    expect(page.get_by_test_id("panel")).to_contain_text("silver/order_lines")
    page.get_by_test_id("panel").locator("[data-action=expand-downstream]").click()
    page.wait_for_url(re.compile(r"x=downstream"))
    graph = wait_for_graph(page)
    ids = {n["id"] for n in graph["nodes"]}
    assert {job("gold.daily_revenue"), job("gold.product_performance")} <= ids
    # one hop: the jobs, not yet their outputs
    assert ds("gold/daily_revenue") not in ids
    expect(page.get_by_test_id("panel")).to_contain_text("silver/order_lines")  # still selected
    # The URL holds the view: reloading draws the same graph.
    page.reload()
    assert {n["id"] for n in wait_for_graph(page)["nodes"]} == ids


def test_path_between_two_nodes_is_highlighted(page: Page) -> None:
    page.goto(
        f"/lineage?nodeId={quote(ds('silver/order_lines'))}&direction=both&depth=4"
        f"&from={quote(ds('bronze/orders'))}&to={quote(ds('gold/daily_revenue'))}"
    )
    graph = wait_for_graph(page)
    on_path = {n["id"] for n in graph["nodes"] if "on-path" in n["classes"]}
    assert on_path == {
        ds("bronze/orders"), job("silver.clean_orders"), ds("silver/orders"),
        job("silver.build_order_lines"), ds("silver/order_lines"),
        job("gold.daily_revenue"), ds("gold/daily_revenue"),
    }
    dimmed = {n["id"] for n in graph["nodes"] if "dimmed" in n["classes"]}
    assert ds("bronze/products") in dimmed and job("gold.product_performance") in dimmed


def test_path_chosen_with_the_panel_buttons(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote(ds('gold/customer_ltv'))}&direction=upstream&depth=6")
    graph = wait_for_graph(page)
    click_node(page, graph, ds("gold/customer_ltv"))
    page.get_by_test_id("panel").locator("[data-action=path-to]").click()
    page.wait_for_url(re.compile(r"to="))
    graph = wait_for_graph(page)
    click_node(page, graph, ds("bronze/customers"))
    page.get_by_test_id("panel").locator("[data-action=path-from]").click()
    page.wait_for_url(re.compile(r"from="))
    graph = wait_for_graph(page)
    on_path = {n["id"] for n in graph["nodes"] if "on-path" in n["classes"]}
    assert on_path == {
        ds("bronze/customers"), job("silver.clean_customers"), ds("silver/customers"),
        job("gold.customer_lifetime_value"), ds("gold/customer_ltv"),
    }
    assert {(e["source"], e["target"]) for e in graph["edges"] if "on-path" in e["classes"]} == {
        (ds("bronze/customers"), job("silver.clean_customers")),
        (job("silver.clean_customers"), ds("silver/customers")),
        (ds("silver/customers"), job("gold.customer_lifetime_value")),
        (job("gold.customer_lifetime_value"), ds("gold/customer_ltv")),
    }


def test_collapse_folds_child_jobs_under_their_parent(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote(ds('silver/orders'))}&direction=both&depth=2&collapse=1")
    graph = wait_for_graph(page)
    jobs = [n for n in graph["nodes"] if n["kind"] == "JOB"]
    assert [n["id"] for n in jobs] == [job("retail_nightly")]
    assert "+3 jobs" in jobs[0]["label"]
    assert (ds("bronze/orders"), job("retail_nightly")) in edges_of(graph)
    assert (job("retail_nightly"), ds("gold/customer_ltv")) in edges_of(graph)
    # The folded job shows its own latest run (fetched: it has no lineage of its own).
    assert jobs[0]["state"] == "COMPLETED" and "2026-11-03" in jobs[0]["label"]
    # Unfolded on demand, the child jobs are back.
    click_node(page, graph, job("retail_nightly"))
    page.get_by_test_id("panel").locator("[data-action=unfold]").click()
    page.wait_for_url(re.compile(r"open=job"))
    graph = wait_for_graph(page)
    assert {n["id"] for n in graph["nodes"] if n["kind"] == "JOB"} == {
        job("silver.clean_orders"), job("silver.build_order_lines"),
        job("gold.customer_lifetime_value"),
    }


def test_column_view_shows_column_edges_with_transformations(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote(field('silver/order_lines', 'line_total'))}&depth=5")
    graph = wait_for_graph(page, decorated=False)
    labelled = {(e["source"], e["target"]): e["label"] for e in graph["edges"]}
    raw, bronze, silver = "raw/orders.csv", "bronze/orders", "silver/orders"
    lines, revenue = "silver/order_lines", "gold/daily_revenue"
    products = "gold/product_performance"
    assert labelled == {
        (field(raw, "quantity"), field(bronze, "quantity")): "transformation",
        (field(raw, "unit_price"), field(bronze, "unit_price")): "transformation",
        (field(bronze, "quantity"), field(silver, "quantity")): "identity",
        (field(bronze, "unit_price"), field(silver, "unit_price")): "identity",
        (field(silver, "quantity"), field(lines, "line_total")): "transformation",
        (field(silver, "unit_price"), field(lines, "line_total")): "transformation",
        (field(lines, "line_total"), field(revenue, "revenue")): "aggregation",
        (field(lines, "line_total"), field(products, "revenue")): "aggregation",
    }
    # Fields are grouped in a box per dataset.
    parents = {n["id"]: n["parent"] for n in graph["nodes"] if n["kind"] == "DATASET_FIELD"}
    assert parents[field("silver/orders", "quantity")] == ds("silver/orders")
    vias = {e["via"] for e in graph["edges"]}
    assert job("silver.build_order_lines") in vias


def test_pick_a_column_from_the_dataset_page(page: Page) -> None:
    page.goto(f"/datasets/file/{quote(ROOT + '/gold/daily_revenue', safe='')}")
    page.get_by_test_id("schema").locator("a[data-field=revenue]").click()
    graph = wait_for_graph(page, decorated=False)
    revenue = (field("silver/order_lines", "line_total"), field("gold/daily_revenue", "revenue"))
    assert revenue in edges_of(graph)


def test_dataset_page_shows_versions_and_their_schema_diff(page: Page) -> None:
    page.goto(f"/datasets/file/{quote(ROOT + '/silver/orders', safe='')}")
    expect(page.get_by_role("heading", name=f"{ROOT}/silver/orders")).to_be_visible()
    expect(page.get_by_test_id("schema")).to_contain_text("is_weekend")
    versions = page.get_by_test_id("versions").locator("tbody tr")
    expect(versions.first).to_be_visible()  # the list is drawn after the page's other reads
    assert versions.count() >= 2
    diff = page.get_by_test_id("diff")
    expect(diff).to_contain_text("1 change(s)")
    expect(diff.locator("[data-change=added]")).to_have_text("is_weekend")
    # Any two versions: the two oldest are identical.
    count = versions.count()
    options = page.get_by_test_id("version-a").locator("option")
    oldest = options.nth(count - 1).get_attribute("value")
    second = options.nth(count - 2).get_attribute("value")
    page.get_by_test_id("version-b").select_option(second)
    page.get_by_test_id("version-a").select_option(oldest)
    expect(page.get_by_test_id("diff")).to_contain_text("No schema change")
    assert f"a={oldest}" in page.url and f"b={second}" in page.url


def test_job_page_shows_runs_sql_and_io(page: Page) -> None:
    page.goto("/jobs/retail/gold.customer_lifetime_value")
    runs = page.get_by_test_id("runs")
    expect(runs.locator("tbody tr")).to_have_count(4)  # three nights, one failed attempt retried
    expect(runs).to_contain_text("FAILED")
    expect(runs).to_contain_text("COMPLETED")
    expect(page.get_by_test_id("sql")).to_contain_text("GROUP BY o.customer_id")
    expect(page.get_by_text(f"{ROOT}/silver/customers")).to_be_visible()


def test_run_page_shows_error_versions_and_parent_child_runs(page: Page) -> None:
    page.goto("/jobs/retail/gold.customer_lifetime_value")
    page.get_by_test_id("runs").locator("tr", has_text="FAILED").locator("a").click()
    expect(page.get_by_test_id("error-message")).to_contain_text("executor lost (OOM)")
    expect(page.get_by_test_id("inputs")).to_contain_text(f"{ROOT}/silver/orders")
    page.get_by_role("link", name=re.compile(r"^[0-9a-f]{8}$")).first.click()  # the parent run
    expect(page.get_by_test_id("children")).to_contain_text("gold.customer_lifetime_value")
    expect(page.get_by_test_id("children").locator("tbody tr")).to_have_count(10)
    expect(page.get_by_test_id("outputs")).to_have_count(1)


def test_search_box_suggests_and_opens_the_graph(page: Page) -> None:
    page.goto("/")
    box = page.locator("#search-slot input")
    box.fill("order_lines")
    suggestion = page.locator("#search-slot li[data-node-id]", has_text="silver/order_lines")
    expect(suggestion).to_be_visible()
    suggestion.click()
    page.wait_for_url(re.compile(r"/lineage\?nodeId="))
    graph = wait_for_graph(page)
    assert ds("silver/order_lines") in {n["id"] for n in graph["nodes"]}


def test_search_results_page(page: Page) -> None:
    page.goto("/search?q=orders")
    results = page.locator(".search-results tbody tr")
    expect(results.first).to_be_visible()
    assert results.count() >= 4
    expect(page.locator(".search-results")).to_contain_text("silver.clean_orders")


def test_unknown_node_shows_the_servers_message(page: Page) -> None:
    page.goto(f"/lineage?nodeId={quote(ds('nope'))}")
    expect(page.get_by_role("alert")).to_contain_text("not found")

