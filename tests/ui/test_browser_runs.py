"""Run-level lineage in the browser: child runs folded under their parent run and unfolded
on demand, an application run's view built from its children, and the run page's list of
child runs read from ``/api/v1/jobs/runs/{id}/children``.

What the page should draw is worked out here from the API's own answers, so the tests
check the page against the server rather than against numbers written down by hand.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.ui.browser import click_node, edges_of, wait_for_graph

pytestmark = [pytest.mark.browser, pytest.mark.live]


def latest_run(base_url: str, job: str) -> str:
    runs = httpx.get(f"{base_url}/api/v1/namespaces/retail/jobs/{job}/runs", params={"limit": 1})
    return str(runs.json()["runs"][0]["id"])


def lineage(base_url: str, node_id: str, depth: int) -> dict[str, Any]:
    answer = httpx.get(f"{base_url}/api/v2/lineage", params={"nodeId": node_id, "depth": depth})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def folded(answer: dict[str, Any]) -> tuple[set[str], set[tuple[str, str]], dict[str, set[str]]]:
    """Nodes and edges once every run is folded into its parent run; each parent's children."""
    parent_of = {
        n["id"]: f"run:{n['data']['parentRun']}"
        for n in answer["nodes"]
        if n["type"] == "RUN" and n["data"].get("parentRun")
    }

    def top(node_id: str) -> str:
        return parent_of.get(node_id, node_id)

    nodes = {top(n["id"]) for n in answer["nodes"]}
    edges = {(top(e["upstream"]), top(e["downstream"])) for e in answer["edges"]}
    children: dict[str, set[str]] = {}
    for child, parent in parent_of.items():
        children.setdefault(parent, set()).add(child)
    return nodes, {e for e in edges if e[0] != e[1]}, children


def test_child_runs_fold_under_their_parent_run_and_unfold_on_demand(
    page: Page, base_url: str
) -> None:
    root = f"run:{latest_run(base_url, 'gold.daily_revenue')}"
    application = f"run:{latest_run(base_url, 'retail_nightly')}"
    answer = lineage(base_url, root, 6)
    nodes, edges, children = folded(answer)
    assert set(children) == {application}  # every run here is an action of the same night
    assert len(children[application]) >= 3

    page.goto(f"/lineage?nodeId={quote(root)}&depth=6&collapse=1")
    graph = wait_for_graph(page)
    assert {n["id"] for n in graph["nodes"]} == nodes
    assert edges_of(graph) == edges
    parent = next(n for n in graph["nodes"] if n["id"] == application)
    # The folded node stands for the root, and says which job's run it is and how many it holds.
    assert "root" in parent["classes"]
    assert f"(+{len(children[application])} runs)" in parent["label"]
    assert "retail_nightly" in parent["label"]  # fetched: the application run has no lineage itself
    assert parent["state"] == "COMPLETED"

    click_node(page, graph, application)
    expect(page.get_by_test_id("members").locator("li")).to_have_count(len(children[application]))
    page.get_by_test_id("panel").locator("[data-action=unfold]").click()
    page.wait_for_url(re.compile(r"open=run"))
    graph = wait_for_graph(page)
    unfolded = {n["id"] for n in graph["nodes"]}
    assert unfolded == {n["id"] for n in answer["nodes"]}
    assert edges_of(graph) == {(e["upstream"], e["downstream"]) for e in answer["edges"]}
    assert "root" in next(n for n in graph["nodes"] if n["id"] == root)["classes"]

    # Folding back from one of the children restores the single node.
    click_node(page, graph, root)
    page.get_by_test_id("panel").locator("[data-action=fold]").click()
    page.wait_for_url(lambda url: "open=" not in url)
    assert {n["id"] for n in wait_for_graph(page)["nodes"]} == nodes


def test_double_click_unfolds_a_folded_run(page: Page, base_url: str) -> None:
    root = f"run:{latest_run(base_url, 'gold.daily_revenue')}"
    application = f"run:{latest_run(base_url, 'retail_nightly')}"
    # Without the parent run's own details, the folded node is still named after its job:
    # the children's parentJob says which job the parent run belongs to.
    page.route(f"**/api/v1/jobs/runs/{application[4:]}", lambda route: route.abort())
    page.goto(f"/lineage?nodeId={quote(root)}&depth=6&collapse=1")
    graph = wait_for_graph(page)
    parent = next(n for n in graph["nodes"] if n["id"] == application)
    assert parent["label"].startswith("retail_nightly (+") and parent["state"] == ""
    click_node(page, graph, application, double=True)
    page.wait_for_url(re.compile(r"open=run"))
    assert root in {n["id"] for n in wait_for_graph(page)["nodes"]}


def test_an_application_runs_view_is_its_children_lineage(page: Page, base_url: str) -> None:
    application = latest_run(base_url, "retail_nightly")
    children = httpx.get(f"{base_url}/api/v1/jobs/runs/{application}/children").json()
    child_ids = {f"run:{r['id']}" for r in children["runs"]}
    assert children["totalCount"] == len(child_ids) >= 3
    # The application run reads and writes nothing itself ...
    assert lineage(base_url, f"run:{application}", 2)["edges"] == []

    # ... so its view merges its children's lineage.
    page.goto(f"/lineage?nodeId={quote('run:' + application)}&depth=2")
    graph = wait_for_graph(page)
    drawn = {n["id"] for n in graph["nodes"]}
    assert child_ids <= drawn
    expected_edges: set[tuple[str, str]] = set()
    for child in child_ids:
        child_edges = lineage(base_url, child, 2)["edges"]
        expected_edges |= {(e["upstream"], e["downstream"]) for e in child_edges}
    assert edges_of(graph) == expected_edges
    expect(page.get_by_test_id("child-runs")).to_have_text(
        f" — with the lineage of its {len(child_ids)} child runs"
    )

    # Collapsed, the application run is one node with its datasets around it.
    page.goto(f"/lineage?nodeId={quote('run:' + application)}&depth=2&collapse=1")
    graph = wait_for_graph(page)
    runs = [n for n in graph["nodes"] if n["kind"] == "RUN"]
    assert [n["id"] for n in runs] == [f"run:{application}"]
    assert f"(+{len(child_ids)} runs)" in runs[0]["label"]
    assert any(source == f"run:{application}" for source, _ in edges_of(graph))


def test_run_page_lists_children_from_the_api_a_page_at_a_time(page: Page, base_url: str) -> None:
    application = latest_run(base_url, "retail_nightly")
    children = httpx.get(f"{base_url}/api/v1/jobs/runs/{application}/children").json()
    total = children["totalCount"]
    page.goto(f"/runs/{application}?childLimit=4")
    rows = page.get_by_test_id("children").locator("tbody tr")
    expect(rows).to_have_count(4)
    expect(page.get_by_test_id("children-count")).to_have_text(f"{total} child run(s)")
    listed: list[str] = []
    following = page.locator("[data-action=next-page]")
    for start in range(0, total, 4):
        shown = min(4, total - start)
        expect(page.locator(".pager-status")).to_have_text(
            f"{start + 1}–{start + shown} of {total} child runs"
        )
        expect(rows).to_have_count(shown)
        listed += [
            str(rows.nth(i).locator("[data-run-id]").get_attribute("data-run-id"))
            for i in range(shown)
        ]
        if start + 4 < total:
            following.click()
    expect(following).to_be_disabled()
    assert listed == [r["id"] for r in children["runs"]]
    # Each row names its job, linked to the job page.
    page.locator("[data-action=previous-page]").click()
    first = children["runs"][(total - 1) // 4 * 4 - 4]
    expect(rows.first.get_by_role("link", name=first["job"]["name"], exact=True)).to_have_attribute(
        "href", f"/jobs/retail/{first['job']['name']}"
    )


def test_an_application_runs_page_draws_its_childrens_lineage(page: Page, base_url: str) -> None:
    application = latest_run(base_url, "retail_nightly")
    children = httpx.get(f"{base_url}/api/v1/jobs/runs/{application}/children").json()["runs"]
    assert len(children) >= 3
    expected_edges: set[tuple[str, str]] = set()
    for child in children:
        child_edges = lineage(base_url, f"run:{child['id']}", 2)["edges"]
        expected_edges |= {(e["upstream"], e["downstream"]) for e in child_edges}
    assert expected_edges

    # The run page itself embeds the graph: every child run, named by its job, and the
    # datasets they read and wrote, with the edges between them.
    page.goto(f"/runs/{application}")
    graph = wait_for_graph(page)
    section = page.get_by_test_id("run-lineage")
    expect(section.get_by_role("heading", name="Lineage")).to_be_visible()
    drawn = {n["id"]: n for n in graph["nodes"]}
    for child in children:
        node = drawn[f"run:{child['id']}"]
        assert node["kind"] == "RUN"
        assert child["job"]["name"] in node["full"]
    assert edges_of(graph) == expected_edges
    expect(section.get_by_test_id("child-runs")).to_have_text(
        f" — with the lineage of its {len(children)} child runs"
    )
    # Selecting a node shows its details without leaving the run page.
    click_node(page, graph, f"run:{children[0]['id']}")
    expect(section.get_by_test_id("panel")).to_contain_text(children[0]["job"]["name"])
    assert page.url.endswith(f"/runs/{application}")
    # The whole explorer is one link away, at the same view.
    section.get_by_test_id("open-explorer").click()
    page.wait_for_url(re.compile(r"/lineage\?nodeId=run%3A"))
    assert edges_of(wait_for_graph(page)) == expected_edges
