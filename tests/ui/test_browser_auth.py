"""The web UI on a server that needs a token, in Chromium under the server's content
security policy: the page asks once, keeps the token in the tab's sessionStorage and
sends it only as an Authorization header; the API documentation pages load from the
package and read the document with the same token.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from playwright.sync_api import Browser, Page, Request, expect

from headwater.cli import main
from tests.server.live import running_server
from tests.ui.browser import ARTIFACTS, wait_for_graph, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.live]

SECRET = "hw_browser-test-secret-0123456789"
ORDERS = "dataset:file:/warehouse/retail/silver/orders"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("ui-auth") / "hw"
    loaded = CliRunner().invoke(main, ["sample", "--no-serve", "--data-dir", str(data_dir)], env={})
    assert loaded.exit_code == 0, loaded.output
    with running_server("--data-dir", str(data_dir), "--api-key", SECRET,
                        env={"HEADWATER_DB_URL": ""}) as url:
        yield url


def _token_form(page: Page) -> None:
    expect(page.get_by_test_id("token-form")).to_be_visible(timeout=15_000)


def _enter(page: Page, token: str) -> None:
    page.get_by_test_id("token-input").fill(token)
    page.get_by_role("button", name="Use token").click()


def test_the_page_asks_for_a_token_once_and_sends_it_as_a_header(
    page: Page, browser: Browser, base_url: str,
) -> None:
    requests: list[Request] = []
    page.on("request", lambda request: requests.append(request))
    page.goto("/")
    _token_form(page)
    expect(page.get_by_text("Namespace retail")).to_have_count(0)

    _enter(page, "hw_wrong")
    _token_form(page)
    expect(page.get_by_text("was refused")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('headwater.token')") is None

    _enter(page, SECRET)
    expect(page.get_by_text("Namespace retail")).to_be_visible(timeout=15_000)
    expect(page.get_by_test_id("token-form")).to_have_count(0)
    # Reloading and moving about the tab keep the token: it is asked for once.
    page.goto(f"/lineage?nodeId={quote(ORDERS)}&direction=both&depth=2")
    graph = wait_for_graph(page)
    assert ORDERS in {n["id"] for n in graph["nodes"]}
    page.reload()
    wait_for_graph(page)
    expect(page.get_by_test_id("token-form")).to_have_count(0)

    api_calls = [r for r in requests if "/api/" in r.url]
    after = [r for r in api_calls if r.headers.get("authorization") == f"Bearer {SECRET}"]
    assert len(after) >= 5
    assert all(r.headers.get("authorization") in (None, "Bearer hw_wrong", f"Bearer {SECRET}")
               for r in api_calls)
    assert not [r.url for r in requests if SECRET in r.url or "hw_wrong" in r.url]
    assert not [r for r in requests if r.post_data and SECRET in r.post_data]
    assert SECRET not in page.url
    assert page.context.cookies() == []
    assert page.evaluate("sessionStorage.getItem('headwater.token')") == SECRET
    assert page.evaluate("localStorage.length") == 0

    # Another tab (a new browsing context here) asks again.
    other = browser.new_context(base_url=base_url).new_page()
    violations = watch_csp(other)
    try:
        other.goto("/")
        _token_form(other)
        assert not violations, violations
    finally:
        other.context.close()

    # "forget token" drops it from the tab: the next call asks again.
    page.get_by_test_id("forget-token").click()
    _token_form(page)
    assert page.evaluate("sessionStorage.getItem('headwater.token')") is None
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "token_prompt.png"))


def test_the_api_docs_pages_load_from_the_package_and_use_the_tabs_token(
    page: Page, base_url: str,
) -> None:
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto("/redoc")
    expect(page.locator(".docs-error")).to_contain_text("needs a token", timeout=15_000)

    page.goto("/")
    _token_form(page)
    _enter(page, SECRET)
    expect(page.get_by_text("Namespace retail")).to_be_visible(timeout=15_000)

    page.goto("/docs")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible(timeout=30_000)
    expect(page.locator(".swagger-ui .title").first).to_contain_text("headwater")
    page.screenshot(path=str(ARTIFACTS / "api_docs_swagger.png"))
    page.goto("/redoc")
    expect(page.get_by_role("heading", name="headwater").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("/api/v1/lineage").first).to_be_attached()
    page.screenshot(path=str(ARTIFACTS / "api_docs_redoc.png"))
    foreign = [u for u in requests
               if not u.startswith((base_url, "data:", "blob:", "about:"))]
    assert not foreign, foreign
