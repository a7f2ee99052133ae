"""``ListSelect`` runs a statement through the driver and must answer exactly what
SQLAlchemy answers for the same statement and parameters, on both databases.

The statements are real read statements over a store filled through its write
path; each answer is compared with ``conn.execute`` of the same Core statement.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from headwater.store import Store
from headwater.store import tables as t
from headwater.store.driver.listselect import ListSelect
from tests.store.builders import dataset, record, run_event

_j, _r, _ns, _jv = t.jobs, t.runs, t.namespaces, t.job_versions

# Jobs in two namespaces; a job with several runs; run times with and without
# microseconds (SQLite keeps DateTime as text, compared as text).
START = datetime(2024, 5, 1, 8, 0, 0)


def _events() -> list[dict]:
    events = []
    for k in range(12):
        namespace = "ns-a" if k % 2 else "ns-b"
        for r in range(3):
            at = START + timedelta(hours=k, minutes=10 * r, microseconds=(k * 7919) % 3 * 250)
            run_id = f"00000000-0000-4000-8000-{k:06d}{r:06d}"
            inputs = [dataset("s3://lake", f"in/{k}")]
            outputs = [dataset("s3://lake", f"out/{k}/{n}") for n in range(1 + k % 3)]
            stamp = at.isoformat(timespec="microseconds") + "Z"
            events.append(run_event("COMPLETE", stamp, run_id, f"job-{k}", namespace,
                                    inputs, outputs))
    return events


@pytest.fixture
def store(db_url: str):
    opened = Store.open(db_url)
    try:
        record(opened, _events())
        yield opened
    finally:
        opened.close()


def _runs_statement() -> sa.Select:
    """Scalar parameters (namespace, a DateTime), two lists, a literal, JSON and
    DateTime columns, and two selected columns both called ``name``."""
    return (
        sa.select(_ns.c.name, _j.c.name, _jv.c.outputs, _r.c.uuid, _r.c.created_at)
        .join(_ns, _ns.c.id == _j.c.namespace_id)
        .join(_r, _r.c.job_id == _j.c.id)
        .join(_jv, _jv.c.uuid == _r.c.job_version_uuid)
        .where(
            _ns.c.name == sa.bindparam("namespace"),
            _j.c.name.in_(sa.bindparam("names", expanding=True)),
            _r.c.uuid.in_(sa.bindparam("runs", expanding=True)),
            _r.c.created_at <= sa.bindparam("as_of"),
            _j.c.name != "no-such-job",
        )
        .order_by(_r.c.uuid)
    )


def _all_runs(store: Store) -> list[str]:
    with store.engine.connect() as conn:
        return list(conn.execute(sa.select(_r.c.uuid).order_by(_r.c.uuid)).scalars())


def test_rows_match_sqlalchemy_for_every_parameter_kind(store: Store) -> None:
    statement = _runs_statement()
    runs = _all_runs(store)
    selected = ListSelect(statement)
    # Every boundary exactly at a stored time (some with zero microseconds): SQLite
    # compares the stored text, so the parameter must be written the same way.
    with store.engine.connect() as conn:
        times = list(conn.execute(sa.select(_r.c.created_at).order_by(_r.c.created_at)).scalars())
        for as_of in [START - timedelta(days=1), *times]:
            for names in (["job-1"], ["job-1", "job-3", "job-5", "job-9"], ["job-2", "job-4"]):
                for namespace in ("ns-a", "ns-b"):
                    params = {"namespace": namespace, "names": names, "runs": runs,
                              "as_of": as_of}
                    expected = [tuple(row) for row in conn.execute(statement, params)]
                    got = selected.rows(conn, params)
                    assert [tuple(row) for row in got] == expected
    assert got, "the last case (ns-b, every run up to the last time) has rows"
    row = got[0]
    assert isinstance(row.created_at, datetime)
    assert isinstance(row.outputs, list) and row.outputs[0].startswith("dataset:s3://lake:out/")
    assert row.name in {"ns-a", "ns-b"} and row._1.startswith("job-")


def test_list_lengths_are_rendered_per_call(store: Store) -> None:
    statement = _runs_statement()
    runs = _all_runs(store)
    selected = ListSelect(statement)
    with store.engine.connect() as conn:
        for size in (1, 2, 5, 2, 1, len(runs)):
            params = {"namespace": "ns-a", "names": [f"job-{k}" for k in range(1, 12, 2)],
                      "runs": runs[:size], "as_of": START + timedelta(days=1)}
            expected = [tuple(row) for row in conn.execute(statement, params)]
            assert [tuple(row) for row in selected.rows(conn, params)] == expected


def test_rows_by_name_groups_namespaces_and_chunks(store: Store) -> None:
    selected = ListSelect(
        sa.select(_j.c.name, _j.c.id)
        .join(_ns, _ns.c.id == _j.c.namespace_id)
        .where(_ns.c.name == sa.bindparam("namespace"),
               _j.c.name.in_(sa.bindparam("names", expanding=True)))
    )
    keys = [("ns-a", f"job-{k}") for k in range(1, 12, 2)]
    keys += [("ns-b", f"job-{k}") for k in range(0, 12, 2)]
    keys += [("ns-b", "job-1"), ("ns-missing", "job-0")]  # absent: no row
    with store.engine.connect() as conn:
        expected = {
            (namespace, name): job_id
            for namespace, name, job_id in conn.execute(
                sa.select(_ns.c.name, _j.c.name, _j.c.id).join(_ns, _ns.c.id == _j.c.namespace_id)
            )
        }
        got = {(ns, row.name): row.id for ns, row in selected.rows_by_name(conn, keys, chunk=2)}
    assert got == expected
    assert len(got) == 12


def test_a_fresh_connection_reads_in_a_transaction(store: Store) -> None:
    selected = ListSelect(
        sa.select(_j.c.name).where(_j.c.name.in_(sa.bindparam("names", expanding=True)))
    )
    with store.engine.connect() as conn:
        assert not conn.in_transaction()
        assert [row.name for row in selected.rows(conn, {"names": ["job-0", "job-7"]})] in (
            ["job-0", "job-7"], ["job-7", "job-0"])
        assert conn.in_transaction()


def test_database_errors_come_out_as_sqlalchemy_errors(store: Store) -> None:
    selected = ListSelect(
        sa.select(_j.c.name).where(
            _j.c.name.in_(sa.bindparam("names", expanding=True)),
            _j.c.id == sa.bindparam("id"),
        )
    )
    with store.engine.connect() as conn, pytest.raises(sa.exc.DBAPIError):
        # A string where the database needs an integer fails on PostgreSQL; on SQLite
        # a value of an unsupported type fails in the driver.
        selected.rows(conn, {"names": ["job-0"], "id": object()})


def test_a_statement_without_a_list_is_refused(store: Store) -> None:
    selected = ListSelect(sa.select(_j.c.name).where(_j.c.id == sa.bindparam("id")))
    with store.engine.connect() as conn, pytest.raises(ValueError, match="expanding list"):
        selected.rows(conn, {"id": 1})


def test_a_list_of_tuples_keeps_exactly_the_asked_pairs(store: Store) -> None:
    # Two lists find rows through an index; the pairs cut their cross product.
    statement = (
        sa.select(_ns.c.name, _j.c.name)
        .join(_ns, _ns.c.id == _j.c.namespace_id)
        .where(
            _ns.c.name.in_(sa.bindparam("namespaces", expanding=True)),
            _j.c.name.in_(sa.bindparam("names", expanding=True)),
            sa.tuple_(_ns.c.name, _j.c.name).in_(sa.bindparam("pairs", expanding=True)),
        )
        .order_by(_ns.c.name, _j.c.name)
    )
    selected = ListSelect(statement)
    pairs = [("ns-a", "job-1"), ("ns-b", "job-2"), ("ns-a", "job-2"), ("ns-b", "job-11")]
    params = {"namespaces": ["ns-a", "ns-b"], "names": ["job-1", "job-2", "job-11"],
              "pairs": pairs}
    with store.engine.connect() as conn:
        expected = [tuple(row) for row in conn.execute(statement, params)]
        got = [tuple(row) for row in selected.rows(conn, params)]
        # Only the pairs that exist: job-2 is in ns-b, job-1 in ns-a, job-11 in ns-a.
        assert got == expected == [("ns-a", "job-1"), ("ns-b", "job-2")]
        one = selected.rows(conn, {**params, "pairs": [("ns-b", "job-2")]})
        assert [tuple(row) for row in one] == [("ns-b", "job-2")]
