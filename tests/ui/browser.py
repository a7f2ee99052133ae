"""Headless Debian chromium driven by Playwright, against a live ``headwater serve``.

Never ``playwright install``: the browser is the system's ``/usr/bin/chromium``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

__all__ = [
    "ARTIFACTS",
    "AXE",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "chromium",
    "click_node",
    "edges_of",
    "serious_violations",
    "wait_for_graph",
    "watch_csp",
]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Screenshots land here (git-ignored), for a person to look at after a run.
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"
#: axe-core, copied from the npm package by the frontend build (frontend/scripts/vendor-axe.mjs).
AXE = Path(__file__).resolve().parent / "assets" / "axe.min.js"


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


def watch_csp(page: Page) -> list[str]:
    """Every content-security-policy violation ``page`` reports from now on (a live list).

    Chromium reports each as a ``securitypolicyviolation`` event in the page and as a
    console error; both are collected, so a refused script, style, connection or
    form submission fails the test that watches.
    """
    violations: list[str] = []

    def report(text: str) -> None:
        violations.append(text)

    page.expose_function("__headwaterCspViolation", report)
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', (e) => "
        "window.__headwaterCspViolation(`${e.violatedDirective} ${e.blockedURI} "
        "at ${e.sourceFile}:${e.lineNumber}`));"
    )
    page.on(
        "console",
        lambda message: (
            violations.append(message.text)
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    return violations


def wait_for_graph(page: Page, decorated: bool = True) -> dict[str, Any]:
    """Wait until the lineage view has drawn (and decorated jobs); return what is drawn."""
    attribute = "decorated" if decorated else "ready"
    page.wait_for_selector(f"[data-testid=graph][data-{attribute}=true]", timeout=30_000)
    graph: dict[str, Any] = page.evaluate("window.headwater.graph()")
    return graph


def edges_of(graph: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in graph["edges"]}


def click_node(page: Page, graph: dict[str, Any], node_id: str, double: bool = False) -> None:
    """Click (or double-click) a node where it is drawn on the canvas, as a person would."""
    assert any(n["id"] == node_id for n in graph["nodes"]), node_id
    # Panned into view first when it is off the canvas (a big graph opens on its root).
    at = page.evaluate("(id) => window.headwater.reveal(id)", node_id)
    box = page.get_by_test_id("graph").bounding_box()
    assert box is not None
    x, y = box["x"] + at["x"], box["y"] + at["y"]
    if double:
        page.mouse.dblclick(x, y)
    else:
        page.mouse.click(x, y)


def serious_violations(page: Page) -> list[str]:
    """axe-core's serious and critical accessibility violations on the page as it is now.

    axe is evaluated through the DevTools protocol, which the page's content security
    policy does not govern (a <script> tag would be refused), so the page keeps its policy.
    """
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations"
        ".filter((v) => v.impact === 'serious' || v.impact === 'critical')"
        ".map((v) => ({ id: v.id, impact: v.impact,"
        " nodes: v.nodes.map((n) => n.target.join(' ')) }))"
    )
    return [f"{v['impact']} {v['id']}: {v['nodes'][:5]}" for v in found]
