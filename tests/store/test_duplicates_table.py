"""``column_fingerprints``, the write-time index of duplicate work: a function of the
stored column edges whatever order events arrive in, the same after a rebuild from
the raw log, after the migration's backfill and after retention; and the
``/api/v2/duplicates`` answer read through it equals one computed from every
column edge of the store (soft deletes and namespace scopes included)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from headwater.cli import main
from headwater.server.routes.duplicates import duplicates_answer
from headwater.store import Store, admin, fingerprints, migrate
from headwater.store import tables as t
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.retention import prune
from tests.store.builders import dataset, facet, record, run_event
from tests.store.dump import dump
from tests.store.duplicates_reference import every_edge, reference_answer
from tests.store.properties import emptied_store, store_property

SOURCES = [("wh", "orders"), ("wh", "customers"), ("lake", "clicks")]
KINDS = [("DIRECT", "IDENTITY"), ("DIRECT", "AGGREGATION"), ("INDIRECT", "FILTER"), ("", "")]
JOBS = [("wh", "a"), ("wh", "b"), ("team2", "c"), ("team2", "d"), ("lake", "e")]
TARGETS = [("wh", "t0"), ("wh", "t1"), ("team2", "t2"), ("lake", "t3")]


def _input(rng: random.Random) -> dict[str, Any]:
    namespace, name = rng.choice(SOURCES)
    kind, subtype = rng.choice(KINDS)
    return {
        "namespace": namespace,
        "name": name,
        "field": rng.choice("xyz"),
        "transformations": [{"type": kind, "subtype": subtype}],
    }


def _lineage(seed: int) -> dict[str, Any]:
    """A columnLineage facet drawn from few choices, so that jobs often share columns."""
    rng = random.Random(seed)
    fields = {
        f"f{i}": {"inputFields": [_input(rng) for _ in range(rng.randint(1, 2))]}
        for i in range(rng.randint(1, 3))
    }
    body: dict[str, Any] = {"fields": fields}
    if rng.random() < 0.3:
        body["dataset"] = [_input(rng)]
    return facet(**body)


def _run(n: int, job: int, target: int, seed: int, day: int) -> dict[str, Any]:
    namespace, name = JOBS[job]
    out = dataset(*TARGETS[target], [("f0", "string")], columnLineage=_lineage(seed))
    return run_event(
        "COMPLETE",
        (datetime(2026, 1, 1) + timedelta(days=day)).isoformat() + "Z",
        f"00000000-0000-4000-9000-{n:012d}",
        job=name,
        namespace=namespace,
        inputs=[dataset(*s) for s in SOURCES],
        outputs=[out],
    )


def _history(plans: list[tuple[int, int, int, int]]) -> list[dict[str, Any]]:
    return [_run(i + 1, *plan) for i, plan in enumerate(plans)]


def _from_edges(store: Store) -> list[str]:
    """The table's rows recomputed from every stored edge, as :func:`dump` gives them."""
    d, ns, j = t.datasets, t.namespaces, t.jobs
    with store.engine.connect() as conn:
        names = {
            (table.name, row.id): [row.namespace, row.name]
            for table in (d, j)
            for row in conn.execute(
                sa.select(table.c.id, ns.c.name.label("namespace"), table.c.name).join(
                    ns, ns.c.id == table.c.namespace_id
                )
            )
        }
        edges = every_edge(conn)
    found = fingerprints.digests(
        (
            e.job_id,
            e.target_dataset_id,
            e.target_field,
            fingerprints.edge_input(
                *names[("datasets", e.source_dataset_id)],
                e.source_field,
                e.transformation_type,
                e.transformation_subtype,
            ),
        )
        for e in edges
    )
    return sorted(
        json.dumps(
            {
                "dataset_id": names[("datasets", target)],
                "field": field,
                "job_id": names[("jobs", job)],
                "key_hash": key,
                "print_hash": whole,
            },
            sort_keys=True,
        )
        for (target, field, job), (key, whole) in found.items()
    )


def _table(store: Store) -> list[str]:
    return dump(store)["column_fingerprints"]


_plans = st.lists(
    st.tuples(
        st.integers(0, len(JOBS) - 1),
        st.integers(0, len(TARGETS) - 1),
        st.integers(0, 12),
        st.integers(0, 9),
    ),
    min_size=2,
    max_size=10,
)


@store_property(15)
@given(plans=_plans, data=st.data())
def test_the_table_is_a_function_of_the_set_of_events(
    db_url: str, plans: list[tuple[int, int, int, int]], data: st.DataObject
) -> None:
    events = _history(plans)
    order = data.draw(st.permutations(range(len(events))))
    repeats = data.draw(st.lists(st.sampled_from(range(len(events))), max_size=3))
    shuffled = [events[i] for i in [*order, *repeats]]
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(shuffled)), max_size=4))))
    with emptied_store(db_url) as in_order:
        record(in_order, events)
        expected = _table(in_order)
        assert expected == _from_edges(in_order)
        assert expected
    with emptied_store(db_url) as replayed:
        for a, b in itertools.pairwise([0, *cuts, len(shuffled)]):
            if b > a:
                record(replayed, shuffled[a:b])
        assert _table(replayed) == expected


# Two jobs write t0 (the later run's edges move to its job), each team copies columns.
HISTORY = _history(
    [(0, 0, 1, 1), (1, 0, 1, 2), (2, 2, 1, 3), (3, 2, 4, 3), (4, 3, 1, 4), (0, 1, 5, 5)]
    + [
        (j, t_, s, 6 + i)
        for i, (j, t_, s) in enumerate(itertools.product(range(5), (1, 3), (2, 7)))
    ]
)


def _migrate_again(store: Store) -> None:
    """Drop the table and run revision 0018's upgrade (its backfill) again; later
    revisions are left as they are."""
    path = Path(migrate.__file__).parent / "migrations/versions/0018_column_fingerprints.py"
    spec = importlib.util.spec_from_file_location("revision_0018", path)
    assert spec is not None and spec.loader is not None
    revision = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(revision)
    with store.engine.begin() as conn:
        t.column_fingerprints.drop(conn)
        with Operations.context(MigrationContext.configure(conn)):
            revision.upgrade()


def test_the_backfill_and_a_rebuild_from_the_raw_log_give_the_same_rows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'headwater.db'}"
    with Store.open(url) as store:
        record(store, HISTORY)
        written = _table(store)
        assert len(written) >= 8 and written == _from_edges(store)
        _migrate_again(store)
        assert _table(store) == written
    result = CliRunner().invoke(main, ["rebuild", "--from-raw", "--db", url])
    assert result.exit_code == 0, result.output
    [built] = tmp_path.glob("headwater.rebuilt-*.db")
    with Store.open(f"sqlite:///{built}") as rebuilt:
        assert _table(rebuilt) == written


def test_retention_drops_the_columns_whose_edges_lose_their_run(db_url: str) -> None:
    # Job a writes t0 three times with other columns each time; the first run is
    # neither its latest nor its latest before the cutoff, nor does it produce a
    # version retention keeps, so it goes, and with it the edges only it asserted.
    events = [_run(1, 0, 0, 1, 0), _run(2, 0, 0, 2, 1), _run(3, 0, 0, 3, 200)]
    with Store.open(db_url) as store:
        record(store, events)
        before = _table(store)
        done = prune(
            store.engine,
            timedelta(days=100),
            now=datetime(2026, 1, 1) + timedelta(days=201),
            settle=0,
        )
        assert done.runs == 1
        after = _table(store)
        assert after == _from_edges(store)
        assert after != before  # a column lost the input only the deleted run asserted


# -- the answer --------------------------------------------------------------------------


@pytest.fixture
def shared_store(db_url: str) -> Iterator[Store]:
    rng = random.Random(18)
    plans = [(rng.randrange(5), rng.randrange(4), rng.randrange(14), day) for day in range(40)]
    with Store.open(db_url) as store:
        record(store, _history(plans))
        yield store


QUESTIONS = [
    (share, job, namespace)
    for share in (0.0, 0.5, 1.0)
    for job, namespace in [
        (None, None),
        ("job:wh:a", None),
        ("job:team2:d", None),
        (None, "team2"),
        ("job:wh:b", "lake"),
    ]
]


def _compare(store: Store, scope: NamespaceScope) -> int:
    found = 0
    for share, job, namespace in QUESTIONS:
        if job is not None and not scope.sees_node(job):
            continue
        with store.engine.connect() as conn:
            answer = duplicates_answer(conn, namespace, job, share, 100, scope)
        assert answer == reference_answer(store.engine, scope, share, job, namespace), (
            share,
            job,
            namespace,
        )
        found += answer["totalCount"]
    return found


def test_the_answer_equals_the_one_from_every_column_edge(shared_store: Store) -> None:
    assert _compare(shared_store, EVERYTHING) > 3
    assert _compare(shared_store, NamespaceScope.of(["wh", "team2"])) > 0
    # A source that is soft-deleted leaves the inputs of the columns reading it.
    admin.hide_dataset(shared_store.engine, "lake", "clicks")
    admin.hide_job(shared_store.engine, "team2", "c")
    assert _compare(shared_store, EVERYTHING) > 0
    assert _compare(shared_store, NamespaceScope.of(["wh"])) >= 0
