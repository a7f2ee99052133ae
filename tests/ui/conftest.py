"""Browser-test fixtures: a live ``headwater serve`` with the retail sample, chromium, a page.

``base_url`` is the sample server, shared by the whole session; a module that needs other
data overrides ``base_url`` with its own server. Every ``page`` fails its test on an
uncaught page error, a violation of the server's content security policy or a serious or
critical accessibility violation (axe-core) on the page it ends on, and leaves a screenshot
in test-artifacts/ui/<test name>.png.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from playwright.sync_api import Browser, Page

from headwater.cli import main
from tests.server.live import running_server
from tests.ui.browser import ARTIFACTS, chromium, serious_violations, watch_csp


@pytest.fixture(scope="session")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("ui") / "hw"
    loaded = CliRunner().invoke(main, ["sample", "--no-serve", "--data-dir", str(data_dir)], env={})
    assert loaded.exit_code == 0, loaded.output
    with running_server("--data-dir", str(data_dir), env={"HEADWATER_DB_URL": ""}) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser, base_url: str, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(base_url=base_url, viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    violations = watch_csp(opened)
    try:
        yield opened
        assert not errors, errors
        assert not violations, violations
        # The API documentation pages (/docs, /redoc) are Swagger UI's and ReDoc's own.
        if not opened.url.split("?")[0].endswith(("/docs", "/redoc")):
            inaccessible = serious_violations(opened)
            assert not inaccessible, (opened.url, inaccessible)
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        opened.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"))
        context.close()
