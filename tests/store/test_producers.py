"""Per-producer figures: arrivals, duplicates, refusals, the emission facet (both databases)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from headwater.events import parse_event
from headwater.store import Store, producers, quarantine, tables
from tests.store.builders import facet, run_event

JAVA = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"
AGENT = "https://github.com/headwater/headwater/agent"


def _emission(queued: int, spooled: int = 0) -> dict[str, Any]:
    return facet(
        queued=queued,
        sent=queued - spooled,
        spooled=spooled,
        dropped=0,
        sendMs={"count": 1, "p50": 3.0, "p95": 9.0, "max": 9.0},
    )


def _events(n: int, producer: str, namespace: str, **kw: Any) -> list[dict[str, Any]]:
    return [
        run_event(
            "COMPLETE",
            f"2026-01-01T00:{i % 60:02d}:00Z",
            str(uuid.uuid4()),
            job=f"job{i}",
            namespace=namespace,
            producer=producer,
            **kw,
        )
        for i in range(n)
    ]


def test_every_producer_is_counted_per_namespace(db_url: str) -> None:
    with Store.open(db_url) as store:
        java = _events(5, JAVA, "emr")
        ours = _events(3, AGENT, "etl")
        store.record([parse_event(e) for e in java + ours])
        # The same events again: seen, not counted twice.
        store.record([parse_event(e) for e in java[:2]])
        quarantine.keep(
            store.engine,
            [
                quarantine.Refused(
                    {"producer": JAVA, "job": {"namespace": "emr"}}, "bad", "run", 400
                ),
                quarantine.Refused([1, 2], "not an object", "", 400),
            ],
        )
        with store.engine.connect() as conn:
            found = {
                (f.producer, f.namespace): f
                for f in producers.read(conn, datetime.now(UTC).replace(tzinfo=None))
            }
    assert set(found) == {(JAVA, "emr"), (AGENT, "etl"), ("", "")}
    java_figures = found[(JAVA, "emr")]
    assert (java_figures.events, java_figures.rejected) == (5, 1)
    assert java_figures.events_last_day == 5 and java_figures.events_last_hour == 5
    assert java_figures.agent is None
    assert (found[("", "")].events, found[("", "")].rejected) == (0, 1)
    assert datetime.now(UTC).replace(tzinfo=None) - java_figures.last_seen < timedelta(minutes=5)


def test_the_latest_emission_facet_by_event_time_is_kept(db_url: str) -> None:
    def app_end(time: str, queued: int, spooled: int) -> dict[str, Any]:
        return run_event(
            "COMPLETE",
            time,
            str(uuid.uuid4()),
            job="app",
            namespace="etl",
            producer=AGENT,
            run_facets={"headwater_emission": _emission(queued, spooled)},
        )

    with Store.open(db_url) as store:
        # The later application end arrives first: it still wins.
        store.record([parse_event(app_end("2026-01-02T00:00:00Z", 40, 7))])
        store.record([parse_event(app_end("2026-01-01T00:00:00Z", 10, 0))])
        with store.engine.connect() as conn:
            (only,) = producers.read(conn, datetime.now(UTC).replace(tzinfo=None))
            rows = conn.execute(sa.select(producers.producer_agents)).all()
    assert only.agent is not None
    assert only.agent["figures"]["queued"] == 40 and only.agent["figures"]["spooled"] == 7
    assert "_producer" not in only.agent["figures"]
    assert only.events == 2 and len(rows) == 1


def test_events_last_hour_counts_the_previous_hour_pro_rata(tmp_path: Any) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'h.db'}") as store:
        now = datetime(2026, 3, 1, 10, 15)
        with store.engine.begin() as conn:
            conn.execute(
                producers.producer_hours.insert(),
                [
                    {
                        "producer": JAVA,
                        "namespace": "emr",
                        "hour": datetime(2026, 3, 1, h),
                        "events": n,
                        "rejected": 0,
                        "last_seen": datetime(2026, 3, 1, h, 59),
                    }
                    for h, n in ((8, 100), (9, 40), (10, 10))
                ],
            )
            (figures,) = producers.read(conn, now)
    # 10:00-10:15 (10) and three quarters of 09:00-10:00 (30).
    assert figures.events_last_hour == 40
    assert figures.events_last_day == 150 and figures.events == 150


def test_a_refused_event_with_unstorable_names_is_counted_and_kept(db_url: str) -> None:
    # A lone surrogate or a NUL makes text no database column takes; the refusal is
    # still counted (under the names with those characters replaced) and quarantined.
    with Store.open(db_url) as store:
        quarantine.keep(
            store.engine,
            [
                quarantine.Refused(
                    {"producer": "p\x00roducer", "job": {"namespace": "ns\ud800"}}, "bad", "job", 400
                ),
            ],
        )
        with store.engine.connect() as conn:
            found = {
                (f.producer, f.namespace): f
                for f in producers.read(conn, datetime.now(UTC).replace(tzinfo=None))
            }
            kept = conn.execute(sa.select(sa.func.count()).select_from(tables.quarantine)).scalar()
    assert {k: (f.events, f.rejected) for k, f in found.items()} == {("p\ufffdroducer", "ns?"): (0, 1)}
    assert kept == 1
