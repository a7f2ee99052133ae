"""Headless Debian chromium driven by Playwright, against a live ``headwater serve``.

Never ``playwright install``: the browser is the system's ``/usr/bin/chromium``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

__all__ = ["ARTIFACTS", "CHROMIUM", "CHROMIUM_ARGS", "chromium", "wait_for_graph"]

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


def wait_for_graph(page: Page, decorated: bool = True) -> dict[str, Any]:
    """Wait until the lineage view has drawn (and decorated jobs); return what is drawn."""
    attribute = "decorated" if decorated else "ready"
    page.wait_for_selector(f"[data-testid=graph][data-{attribute}=true]", timeout=30_000)
    graph: dict[str, Any] = page.evaluate("window.headwater.graph()")
    return graph
