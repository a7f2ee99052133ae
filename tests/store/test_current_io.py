"""``job_current_io`` holds each job's current version's inputs and outputs.

Checked against an independent reading of the same fact (the current version's
``inputs``/``outputs`` lists in ``job_versions``), after in-order, shuffled and
duplicated ingestion, after jobs change shape and late events arrive, and after
the migration fills it on a database that had events before it existed.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from headwater.server.routes.graph_v2 import directed_lineage
from headwater.store import Store, migrate
from headwater.store import tables as t
from tests.store.builders import dataset, record, run_event
from tests.store.generate import generate

Row = tuple[str, str, str]  # (job node id, direction, dataset node id)


def _table_rows(store: Store) -> set[Row]:
    io, ds, j = t.job_current_io, t.datasets, t.jobs
    ds_ns, job_ns = t.namespaces.alias("ds_ns"), t.namespaces.alias("job_ns")
    query = (
        sa.select(job_ns.c.name, j.c.name, io.c.direction, ds_ns.c.name, ds.c.name)
        .select_from(io)
        .join(j, j.c.id == io.c.job_id)
        .join(job_ns, job_ns.c.id == j.c.namespace_id)
        .join(ds, ds.c.id == io.c.dataset_id)
        .join(ds_ns, ds_ns.c.id == ds.c.namespace_id)
    )
    with store.engine.connect() as conn:
        rows = [
            (f"job:{jn}:{job}", direction, f"dataset:{dn}:{name}")
            for jn, job, direction, dn, name in conn.execute(query)
        ]
    assert len(rows) == len(set(rows)), "duplicate rows"
    return set(rows)


def _from_versions(store: Store) -> set[Row]:
    """The same fact read from each job's current version's JSON lists."""
    j, jv, ns = t.jobs, t.job_versions, t.namespaces
    query = (
        sa.select(ns.c.name, j.c.name, jv.c.inputs, jv.c.outputs)
        .join(ns, ns.c.id == j.c.namespace_id)
        .join(jv, jv.c.uuid == j.c.current_version_uuid)
    )
    rows: set[Row] = set()
    with store.engine.connect() as conn:
        for namespace, job, inputs, outputs in conn.execute(query):
            rows |= {(f"job:{namespace}:{job}", "input", d) for d in inputs}
            rows |= {(f"job:{namespace}:{job}", "output", d) for d in outputs}
    return rows


def _declared(store: Store) -> set[Row]:
    """What JobEvents declare (``job_declared_io``): current lineage beside the runs'."""
    io, ds, j = t.job_declared_io, t.datasets, t.jobs
    ds_ns, job_ns = t.namespaces.alias("ds_ns"), t.namespaces.alias("job_ns")
    query = (
        sa.select(job_ns.c.name, j.c.name, io.c.direction, ds_ns.c.name, ds.c.name)
        .select_from(io)
        .join(j, j.c.id == io.c.job_id)
        .join(job_ns, job_ns.c.id == j.c.namespace_id)
        .join(ds, ds.c.id == io.c.dataset_id)
        .join(ds_ns, ds_ns.c.id == ds.c.namespace_id)
    )
    with store.engine.connect() as conn:
        return {
            (f"job:{jn}:{job}", direction, f"dataset:{dn}:{name}")
            for jn, job, direction, dn, name in conn.execute(query)
        }


def _reshaping_job_events(rng: random.Random) -> list[dict[str, Any]]:
    """Runs of one job whose inputs and outputs change from run to run."""
    start = datetime(2024, 3, 1, tzinfo=UTC)
    names = [f"shape/{i}" for i in range(6)]
    events = []
    for hour in range(40):
        run_id = f"00000000-0000-4000-8000-{hour:012d}"
        inputs = [dataset("s3://shapes", n) for n in rng.sample(names, rng.randint(0, 3))]
        outputs = [dataset("s3://shapes", n) for n in rng.sample(names, rng.randint(1, 2))]
        at = start + timedelta(hours=hour)
        events.append(run_event("START", _iso(at), run_id, "reshaping", "jobs", inputs))
        events.append(
            run_event("COMPLETE", _iso(at + timedelta(minutes=5)), run_id, "reshaping", "jobs",
                      inputs, outputs)
        )
    return events


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def test_table_matches_current_versions_whatever_the_order(db_url: str) -> None:
    rng = random.Random(5)
    events = generate(3_000, seed=3) + _reshaping_job_events(rng)
    with Store.open(db_url) as in_order:
        for i in range(0, len(events), 500):
            record(in_order, events[i : i + 500])
        expected = _table_rows(in_order)
        declared = _declared(in_order)
        # The generator's manual.backfill job is declared by JobEvents and never runs.
        assert {job for job, _, _ in declared} == {"job:spark://prod:manual.backfill"}
        assert expected == _from_versions(in_order) | declared
        migrate.downgrade(in_order.engine, "base")
    # Not vacuous: many jobs, both directions, and the reshaping job's last shape.
    assert len({job for job, _, _ in expected}) > 5
    assert {direction for _, direction, _ in expected} == {"input", "output"}
    assert any(job == "job:jobs:reshaping" for job, _, _ in expected)

    replay = events + rng.sample(events, len(events) // 5)
    rng.shuffle(replay)
    with Store.open(db_url) as shuffled:
        i = 0
        while i < len(replay):
            size = rng.choice((1, 9, 120, 500))
            record(shuffled, replay[i : i + size])
            i += size
        assert _table_rows(shuffled) == expected
        assert _from_versions(shuffled) | _declared(shuffled) == expected
        assert _declared(shuffled) == declared


def _run_id(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def _run(store: Store, run_id: str, at: str, inputs: list[str], outputs: list[str]) -> None:
    record(store, [
        run_event("COMPLETE", at, run_id, "job", "ns",
                  [dataset("ns", n) for n in inputs], [dataset("ns", n) for n in outputs])
    ])


def _upstream_jobs(store: Store, dataset_name: str, as_of: str | None = None) -> list[str]:
    when = datetime.fromisoformat(as_of) if as_of else None
    with store.engine.connect() as conn:
        answer = directed_lineage(conn, f"dataset:ns:{dataset_name}", "upstream", 1, when, 100)
    return sorted(n["id"] for n in answer["nodes"] if n["id"].startswith("job:"))


def test_rows_follow_the_latest_run_as_events_keep_arriving(db_url: str) -> None:
    job = "job:ns:job"
    with Store.open(db_url) as store:
        _run(store, _run_id(1), "2024-01-01T01:00:00Z", ["a"], ["b"])
        first = {(job, "input", "dataset:ns:a"), (job, "output", "dataset:ns:b")}
        assert _table_rows(store) == first
        assert _upstream_jobs(store, "b") == [job]

        # A later run with another shape becomes the current version.
        _run(store, _run_id(3), "2024-01-01T03:00:00Z", ["a", "c"], ["d"])
        now = {(job, "input", "dataset:ns:a"), (job, "input", "dataset:ns:c"),
               (job, "output", "dataset:ns:d")}
        assert _table_rows(store) == now
        assert _upstream_jobs(store, "b") == []
        assert _upstream_jobs(store, "d") == [job]

        # A late run from before it changes nothing, nor does a duplicate.
        _run(store, _run_id(2), "2024-01-01T02:00:00Z", ["x"], ["y"])
        _run(store, _run_id(3), "2024-01-01T03:00:00Z", ["a", "c"], ["d"])
        assert _table_rows(store) == now

        # The latest run's shape grows with a further event.
        _run(store, _run_id(3), "2024-01-01T03:10:00Z", ["a"], ["e"])
        now |= {(job, "output", "dataset:ns:e")}
        assert _table_rows(store) == now
        assert _upstream_jobs(store, "e") == [job]

        # A run without datasets leaves the job with none.
        _run(store, _run_id(4), "2024-01-01T04:00:00Z", [], [])
        assert _table_rows(store) == set()
        assert _upstream_jobs(store, "d") == []
        assert _table_rows(store) == _from_versions(store)

        # asOf still answers with the version current then (through the runs).
        assert _upstream_jobs(store, "b", "2024-01-01T01:30:00+00:00") == [job]
        assert _upstream_jobs(store, "b", "2024-01-01T02:30:00+00:00") == []
        assert _upstream_jobs(store, "y", "2024-01-01T02:30:00+00:00") == [job]
        assert _upstream_jobs(store, "e", "2024-01-01T03:30:00+00:00") == [job]
        assert _upstream_jobs(store, "e", "2024-01-01T04:30:00+00:00") == []


def test_upgrade_fills_the_table_from_existing_runs(db_url: str) -> None:
    events = generate(1_500, seed=9) + _reshaping_job_events(random.Random(8))
    with Store.open(db_url) as store:
        record(store, events)
        maintained = _table_rows(store)
        assert maintained
        migrate.downgrade(store.engine, "0002")
        with store.engine.connect() as conn:
            assert "job_current_io" not in sa.inspect(conn).get_table_names()
        migrate.upgrade(store.engine)
        assert _table_rows(store) == maintained
