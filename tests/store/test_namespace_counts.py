"""The kept counts (``namespace_counts``) equal what the namespace lists show, after
every kind of write: new datasets and jobs, symlink folds and namespace aliases,
soft deletes of datasets, jobs and namespaces, undeletes by a later event, late
events, retention -- in any sequence, on SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from headwater.errors import NotFoundError
from headwater.events.parse import parse_event
from headwater.store import Store, admin, namespace_counts, retention
from headwater.store import tables as t
from headwater.store.reads.common import Page
from headwater.store.reads.datasets import dataset_rows_page
from headwater.store.reads.jobs import job_rows_page
from headwater.store.reads.visibility import visible
from tests.store.properties import emptied_store, store_property
from tests.store.test_namespace_fold import HIVE, RULES

# RULES fold a catalog name (HIVE) into its location's dataset; s3a:// is s3://.
# The location written by Spark, naming the catalog table it is.
LOCATION = {
    "namespace": "s3a://lake",
    "name": "silver/orders/",
    "facets": {"symlinks": {"identifiers": [{**HIVE, "type": "TABLE"}]}},
}
DATASETS: list[dict[str, Any]] = [
    {"namespace": "s3://lake", "name": "bronze/orders"},
    LOCATION,
    HIVE,
    {"namespace": "hive://metastore", "name": "silver.x"},
    {"namespace": "postgres://db:5432", "name": "public.t"},
]
JOBS = [("etl", "a"), ("etl", "b"), ("ops", "c")]
NAMESPACES = ["etl", "ops", "s3://lake", "hive://metastore", "postgres://db:5432"]
# Event times lie after the wall clock, so a soft delete (deleted_at: the later of
# now and the row's latest event time) is undone by a later event and not by an
# earlier one.
BASE = datetime.now(UTC).replace(microsecond=0, tzinfo=None) + timedelta(days=400)

# An operation's time is 10 s after the one before, moved by this: mostly later than
# every event before it (it shows what it names again), sometimes earlier (late).
_offset = st.integers(-25, 5)
_subset = st.lists(st.integers(0, len(DATASETS) - 1), min_size=1, max_size=3, unique=True)
_PER_KIND = {
    "run": st.tuples(st.just("run"), st.integers(0, len(JOBS) - 1), _subset, _subset, _offset),
    "dataset": st.tuples(st.just("dataset"), st.integers(0, len(DATASETS) - 1), _offset),
    "hide_dataset": st.tuples(st.just("hide_dataset"), st.integers(0, len(DATASETS) - 1)),
    "hide_job": st.tuples(st.just("hide_job"), st.integers(0, len(JOBS) - 1)),
    "hide_namespace": st.tuples(st.just("hide_namespace"), st.sampled_from(NAMESPACES)),
    "retention": st.tuples(st.just("retention"), _offset),
}
# Runs most often, so what a delete hides is often named again, later or earlier.
_ops = st.sampled_from(
    [
        "run",
        "run",
        "run",
        "hide_dataset",
        "hide_job",
        "run",
        "dataset",
        "hide_dataset",
        "hide_namespace",
        "retention",
    ]
).flatmap(_PER_KIND.__getitem__)


def _time(number: int, offset: int) -> str:
    return (BASE + timedelta(seconds=10 * number + offset)).isoformat() + "Z"


def _event(number: int, op: tuple[Any, ...]) -> dict[str, Any]:
    if op[0] == "dataset":
        return {
            "eventTime": _time(number, op[2]),
            "producer": "https://example.com/catalog",
            "schemaURL": "https://x/DatasetEvent",
            "dataset": DATASETS[op[1]],
        }
    _, job, inputs, outputs, offset = op
    return {
        "eventType": "COMPLETE",
        "eventTime": _time(number, offset),
        "producer": "https://example.com/spark",
        "schemaURL": "https://x/RunEvent",
        "run": {"runId": f"0195e0c5-0000-7000-8000-{number:012d}"},
        "job": {"namespace": JOBS[job][0], "name": JOBS[job][1]},
        "inputs": [DATASETS[i] for i in inputs],
        "outputs": [DATASETS[i] for i in outputs],
    }


def _apply(store: Store, number: int, op: tuple[Any, ...]) -> None:
    kind = op[0]
    with contextlib.suppress(NotFoundError):  # a delete of what is not stored yet
        if kind in ("run", "dataset"):
            store.record([parse_event(_event(number, op))])
        elif kind == "hide_dataset":
            key = DATASETS[op[1]]
            admin.hide_dataset(store.engine, key["namespace"], key["name"])
        elif kind == "hide_job":
            admin.hide_job(store.engine, *JOBS[op[1]])
        elif kind == "hide_namespace":
            admin.hide_namespace(store.engine, op[1])
        else:
            now = BASE + timedelta(seconds=10 * number + op[1])
            retention.prune(store.engine, timedelta(0), now=now, settle=0)


def _kept(conn: sa.Connection) -> dict[str, tuple[int, int]]:
    nc = namespace_counts.namespace_counts
    return {
        row.name: (row.datasets, row.jobs)
        for row in conn.execute(
            sa.select(t.namespaces.c.name, nc.c.datasets, nc.c.jobs).join(
                nc, nc.c.namespace_id == t.namespaces.c.id, isouter=True
            )
        )
    }


def _counted(conn: sa.Connection) -> dict[str, tuple[int, int]]:
    """count(*) of each namespace's shown rows, and the lists' own items."""
    found: dict[str, tuple[int, int]] = {}
    for ns_id, name in conn.execute(sa.select(t.namespaces.c.id, t.namespaces.c.name)):
        counts = []
        for table, rows_page in ((t.datasets, dataset_rows_page), (t.jobs, job_rows_page)):
            direct = conn.execute(
                sa.select(sa.func.count()).where(table.c.namespace_id == ns_id, visible(table))
            ).scalar_one()
            items, total = rows_page(conn, name, Page(limit=1000))
            assert len(items) == total == direct, (name, table.name, len(items), total, direct)
            counts.append(direct)
        found[name] = (counts[0], counts[1])
    return found


@store_property(30)
@given(ops=st.lists(_ops, min_size=4, max_size=14))
def test_kept_counts_equal_what_the_lists_show(db_url: str, ops: list[tuple[Any, ...]]) -> None:
    with emptied_store(db_url, RULES) as store:
        for number, op in enumerate(ops):
            _apply(store, number, op)
            with store.engine.connect() as conn:
                assert _kept(conn) == _counted(conn), (number, op)


def test_the_sequences_fold_hide_and_show_again(db_url: str) -> None:
    """The property's operations do what it needs: a fold takes a dataset out of its
    namespace, a delete hides one, a later event shows it again, an earlier one not."""
    run = ("run", 0, [2], [], 0)  # the catalog table, named alone
    spark = ("run", 1, [0], [1], 0)  # its location, with the symlink: the table folds in
    with emptied_store(db_url, RULES) as store:
        _apply(store, 0, run)
        with store.engine.connect() as conn:
            assert _kept(conn)["hive://metastore"] == (1, 0)
        _apply(store, 1, spark)
        with store.engine.connect() as conn:
            assert _kept(conn).get("hive://metastore", (0, 0)) == (0, 0)
            assert _kept(conn)["s3://lake"] == (2, 0) == _counted(conn)["s3://lake"]
        _apply(store, 2, ("hide_dataset", 0))
        _apply(store, 3, ("hide_job", 1))
        with store.engine.connect() as conn:
            assert _kept(conn)["s3://lake"] == (1, 0) and _kept(conn)["etl"] == (0, 1)
        _apply(store, 4, ("run", 1, [0], [], -35))  # earlier than the job's latest event
        with store.engine.connect() as conn:
            assert _kept(conn)["s3://lake"] == (1, 0) and _kept(conn)["etl"] == (0, 1)
        _apply(store, 5, ("run", 1, [0], [], 0))
        with store.engine.connect() as conn:
            assert _kept(conn)["s3://lake"] == (2, 0) and _kept(conn)["etl"] == (0, 2)
            assert _kept(conn) == _counted(conn)


def test_refill_counts_what_the_triggers_kept(db_url: str) -> None:
    """The bulk loader's refill (triggers off) gives the counts the triggers keep."""
    with emptied_store(db_url, RULES) as store:
        for number, op in enumerate(
            [
                ("run", 0, [0, 3], [4], 0),
                ("hide_dataset", 3),
                ("run", 2, [], [1], 0),
                ("hide_namespace", "etl"),
            ]
        ):
            _apply(store, number, op)
        with store.engine.begin() as conn:
            kept = _kept(conn)
            namespace_counts.refill(conn)
            assert _kept(conn) == kept == _counted(conn)
