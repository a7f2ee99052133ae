"""Retention on both databases: runs and raw events older than the window go; the current
graph, every ``asOf`` answer inside the window and the runs it needs stay; an old event sent
again is refused (422 naming eventTime), counted, and brings nothing back."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from fastapi.testclient import TestClient

from headwater.events import parse_event
from headwater.server.retention_job import RetentionJob
from headwater.store import Store
from headwater.store import tables as t
from headwater.store.retention import prune, read_floor
from tests.server.test_metrics import scrape, value
from tests.store.builders import dataset, run_event

NOW = datetime(2026, 6, 1, 12, 0)
KEEP = timedelta(days=90)
DAYS = 150  # one nightly application a day, the oldest 150 days ago
CHAIN = [
    ("raw.orders", None, "file:/lake/raw/orders"),
    ("clean.orders", "file:/lake/raw/orders", "file:/lake/clean/orders"),
    ("agg.revenue", "file:/lake/clean/orders", "file:/lake/gold/revenue"),
]


def _iso(moment: datetime) -> str:
    return moment.isoformat() + "Z"


def _night(day: int) -> list[dict[str, Any]]:
    """The application run of night ``day`` and its three actions; schemas change every 40 days."""
    start = NOW - timedelta(days=DAYS - day, hours=3)
    app = str(uuid.UUID(int=(day + 1) * 1000))
    parent = {
        "parent": {
            "_producer": "p",
            "_schemaURL": "https://x/ParentRunFacet.json",
            "run": {"runId": app},
            "job": {"namespace": "etl", "name": "nightly"},
        }
    }
    events = [run_event("START", _iso(start), app, job="nightly", namespace="etl")]
    fields = [("id", "long"), ("amount", "double")] + ([("era", "string")] * (day // 40 % 2))
    for step, (job, source, target) in enumerate(CHAIN):
        run_id = str(uuid.UUID(int=(day + 1) * 1000 + step + 1))
        at = start + timedelta(minutes=10 * (step + 1))
        inputs = [dataset(*source.split(":", 1), fields)] if source else []
        outputs = [dataset("file", target.split(":", 1)[1], fields)]
        for kind, when in (("START", at), ("COMPLETE", at + timedelta(minutes=5))):
            events.append(
                run_event(
                    kind,
                    _iso(when),
                    run_id,
                    job=job,
                    namespace="etl",
                    inputs=inputs,
                    outputs=outputs,
                    run_facets=parent,
                )
            )
    events.append(
        run_event("COMPLETE", _iso(start + timedelta(hours=1)), app, job="nightly", namespace="etl")
    )
    return events


def _answers(client: TestClient) -> dict[str, Any]:
    """What a user sees of the graph now and as of days inside the window."""
    cutoff = NOW - KEEP
    out: dict[str, Any] = {}
    nodes = [f"dataset:file:{target.split(':', 1)[1]}" for _, _, target in CHAIN]
    nodes += [f"job:etl:{job}" for job, _, _ in CHAIN]
    moments = [
        None,
        cutoff + timedelta(hours=1),
        cutoff + timedelta(days=7, hours=23),
        cutoff + timedelta(days=45),
    ]
    for node in nodes:
        for moment in moments:
            params = {"nodeId": node, "depth": 6, "direction": "both"}
            if moment is not None:
                params["asOf"] = _iso(moment)
            answer = client.get("/api/v2/lineage", params=params)
            assert answer.status_code == 200, answer.text
            out[f"{node}@{moment}"] = answer.json()
    for _, _, target in CHAIN:
        name = quote(target.split(":", 1)[1], safe="")
        current = client.get(f"/api/v1/namespaces/file/datasets/{name}").json()
        out[f"current {target}"] = current
        versions = client.get(
            f"/api/v1/namespaces/file/datasets/{name}/versions", params={"limit": 1000}
        ).json()["versions"]
        out[f"versions {target}"] = [v for v in versions if v["createdAt"] >= _iso(cutoff)]
    for job, _, _ in CHAIN + [("nightly", None, None)]:
        runs = client.get(f"/api/v1/namespaces/etl/jobs/{job}/runs", params={"limit": 1000})
        out[f"runs {job}"] = [r for r in runs.json()["runs"] if r["updatedAt"] >= _iso(cutoff)]
        out[f"job {job}"] = client.get(f"/api/v1/namespaces/etl/jobs/{job}").json()
    return out


def test_retention_keeps_the_window_and_the_current_graph(store: Store, client: TestClient) -> None:
    nights = [_night(day) for day in range(DAYS)]
    response = client.post("/api/v1/lineage/batch", json=[e for n in nights for e in n])
    assert response.json()["summary"]["failed"] == 0
    before = _answers(client)
    with store.engine.connect() as conn:
        runs_before = conn.scalar(sa.select(sa.func.count()).select_from(t.runs))
        events_before = conn.scalar(sa.select(sa.func.count()).select_from(t.events))

    done = prune(store.engine, KEEP, now=NOW, batch=37, settle=0)
    store.forget_floor()

    # The nights whose every event is before the cutoff (days 0-60) go, but for the
    # runs the window's first answers need: each dataset's version in force at the
    # cutoff, each job's latest run before it, and their application run (night 60).
    assert done.transactions >= 2
    assert (done.runs, done.protected) == (60 * 4, 4)
    # A new SQLite store is in incremental auto-vacuum mode: the pages go back.
    assert (done.vacuumed_pages > 0) == (store.dialect == "sqlite")
    after = _answers(client)
    assert after == before
    with store.engine.connect() as conn:
        assert read_floor(conn) == NOW - KEEP
        left = set(conn.scalars(sa.select(t.events.c.run_uuid)))
        assert (
            conn.scalar(sa.select(sa.func.count()).select_from(t.events))
            == events_before - done.events
        )
        assert (
            conn.scalar(sa.select(sa.func.count()).select_from(t.runs)) == runs_before - done.runs
        )
    # Raw events of everything kept are kept.
    with store.engine.connect() as conn:
        kept_runs = set(conn.scalars(sa.select(t.runs.c.uuid)))
    assert kept_runs == left

    # A spool replay of an old night: refused naming eventTime, counted, nothing resurrected.
    old = nights[3]
    single = client.post("/api/v1/lineage", json=old[1])
    assert single.status_code == 422 and single.json()["field"] == "eventTime"
    replay = client.post("/api/v1/lineage/batch", json=old + nights[-1][:1])
    summary = replay.json()["summary"]
    assert (summary["failed"], summary["successful"]) == (len(old), 1)
    assert {f["field"] for f in replay.json()["failed_events"]} == {"eventTime"}
    with store.engine.connect() as conn:
        assert set(conn.scalars(sa.select(t.runs.c.uuid))) == kept_runs
    assert value(scrape(client), "headwater_events_before_retention_total") == len(old) + 1
    assert _answers(client) == before

    # Running it again deletes nothing more.
    again = prune(store.engine, KEEP, now=NOW, settle=0)
    assert (again.runs, again.events) == (0, 0)


def test_retention_drops_the_drifts_queued_before_the_window(store: Store) -> None:
    # Without a webhook nothing else empties the queue.
    queued = [
        ("version:old", NOW - KEEP - timedelta(days=1)),
        ("version:new", NOW - timedelta(days=1)),
    ]
    with store.engine.begin() as conn:
        conn.execute(
            t.drift_outbox.insert(),
            [
                {"drift_key": key, "enqueued_at": at, "attempts": 0, "next_attempt_at": at}
                for key, at in queued
            ],
        )
    done = prune(store.engine, KEEP, now=NOW, settle=0)
    assert done.queued_drifts == 1
    with store.engine.connect() as conn:
        assert list(conn.scalars(sa.select(t.drift_outbox.c.drift_key))) == ["version:new"]


def test_the_server_setting_runs_retention_in_the_background(store: Store) -> None:
    recent = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=1)
    old, new = _night(0), [run_event("COMPLETE", _iso(recent), str(uuid.uuid4()), job="fresh")]
    store.record([parse_event(e) for e in old + new])
    job = RetentionJob(store, KEEP.total_seconds(), first_delay=0.01, interval=3600, settle=0)
    job.start()
    deadline = time.monotonic() + 60
    while job.runs == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    job.close()
    assert job.runs == 1
    with store.engine.connect() as conn:
        left = set(conn.scalars(sa.select(t.runs.c.uuid)))
    # Night 0 is the latest of its jobs (its runs stay, protected); nothing newer came.
    assert new[0]["run"]["runId"] in left
    refused = store.record(
        [
            parse_event(
                run_event("START", _iso(NOW - timedelta(days=400)), str(uuid.uuid4()), job="late")
            )
        ]
    )
    assert refused[0].field == "eventTime"
