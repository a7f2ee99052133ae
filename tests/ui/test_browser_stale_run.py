"""The run page marks a stale run: a producer known to beat a heartbeat went silent.

The module's own server treats one test producer as beating, stale after one second.
A run that sent START and two RUNNING events and then nothing shows its state,
RUNNING, and a STALE mark beside it; a run of the same producer that sent one
RUNNING, and a finished run, show none.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.server.live import running_server

pytestmark = [pytest.mark.browser, pytest.mark.live]

PRODUCER = "https://example.test/beating-producer"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("stale-ui") / "runs.db"
    with running_server("--db", f"sqlite:///{db}", "--stale-producer", f"{PRODUCER}=1s") as url:
        yield url


def _events(run: str, kinds: list[str]) -> list[dict[str, Any]]:
    start = datetime.now(UTC)
    return [
        {
            "eventType": kind,
            "eventTime": (start + timedelta(milliseconds=100 * i)).isoformat(),
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run},
            "job": {"namespace": "streams", "name": f"job_{run[:8]}"},
            "inputs": [],
            "outputs": [],
        }
        for i, kind in enumerate(kinds)
    ]


def test_run_page_marks_a_silent_heartbeat_run_stale(page: Page, base_url: str) -> None:
    silent, single, done = (str(uuid.uuid4()) for _ in range(3))
    events = (
        _events(silent, ["START", "RUNNING", "RUNNING"])
        + _events(single, ["START", "RUNNING"])
        + _events(done, ["START", "RUNNING", "RUNNING", "COMPLETE"])
    )
    posted = httpx.post(f"{base_url}/api/v1/lineage/batch", json=events, timeout=30)
    assert posted.status_code == 200, posted.text
    time.sleep(1.2)
    assert httpx.get(f"{base_url}/api/v2/runs/{silent}").json()["stale"] is True

    for run, stale, state in (
        (single, False, "RUNNING"),
        (done, False, "COMPLETED"),
        (silent, True, "RUNNING"),
    ):
        page.goto(f"/runs/{run}")
        expect(page.locator(".page-head .state").first).to_have_text(state)
        mark = page.get_by_test_id("stale")
        if stale:
            expect(mark).to_have_text("STALE")
            expect(mark).to_have_attribute("title", re.compile("not ended"))
        else:
            expect(page.locator(".page-head h1")).to_have_text(run)
            expect(mark).to_have_count(0)
