"""``dataset_drifts``: derived when versions arrive, a function of the set of events."""

from __future__ import annotations

import itertools
from typing import Any

import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from headwater.store import Store, drift, migrate
from headwater.store import tables as t
from tests.store.builders import dataset, record, run_event
from tests.store.dump import dump
from tests.store.properties import emptied_store, store_property

SCHEMAS: list[list[tuple[str, str]] | None] = [
    None,  # no schema facet
    [("id", "int"), ("name", "string")],
    [("id", "long"), ("name", "string")],
    [("id", "long"), ("name", "string"), ("email", "string")],
    [("id", "long"), ("email", "string")],
    [("id", "int")],
]


def _run(number: int, start: int, end: int, name: str = "/out",
         start_schema: list[tuple[str, str]] | None = None,
         end_schema: list[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """The START and COMPLETE events of a run writing ``file:name``."""
    run_id = f"00000000-0000-0000-0000-{number:012d}"
    return [run_event(kind, f"2024-01-01T00:{second // 60:02d}:{second % 60:02d}Z", run_id,
                      outputs=[dataset("file", name, schema)])
            for kind, second, schema in (("START", start, start_schema),
                                         ("COMPLETE", end, end_schema))]


def _drifts(store: Store) -> list[tuple[Any, ...]]:
    """(newer run, older run, time, breaking, [(kind, path)]) by time, runs named by number."""
    runs = {}
    with store.engine.connect() as conn:
        for row in conn.execute(sa.select(t.dataset_versions.c.uuid, t.dataset_versions.c.run_uuid)):
            runs[row.uuid] = int(row.run_uuid.rsplit("-", 1)[1]) if row.run_uuid else None
        rows = conn.execute(sa.select(t.dataset_drifts).order_by(t.dataset_drifts.c.changed_at))
        return [(runs[r.version_uuid], runs[r.previous_version_uuid], r.changed_at.second,
                 r.breaking, [(c["kind"], c["path"]) for c in r.changes]) for r in rows]


def test_consecutive_versions_give_classified_drifts(store: Store) -> None:
    record(store, [
        *_run(1, 0, 1, end_schema=SCHEMAS[1]),
        *_run(2, 2, 3, end_schema=SCHEMAS[2]),  # id int -> long
        *_run(3, 4, 5, end_schema=SCHEMAS[2]),  # identical: no drift
        *_run(4, 6, 7),  # no schema facet: skipped
        *_run(5, 8, 9, end_schema=SCHEMAS[3]),  # email added
        *_run(6, 10, 11, end_schema=SCHEMAS[4]),  # name removed
    ])
    assert _drifts(store) == [
        (2, 1, 3, False, [("type_widened", "id")]),
        (5, 3, 9, False, [("added", "email")]),
        (6, 5, 11, True, [("removed", "name")]),
    ]


def test_a_late_version_recomputes_both_sides_of_it(store: Store) -> None:
    record(store, [*_run(1, 0, 1, end_schema=SCHEMAS[1]), *_run(3, 4, 5, end_schema=SCHEMAS[3])])
    assert _drifts(store) == [(3, 1, 5, False, [("added", "email"), ("type_widened", "id")])]
    record(store, _run(2, 2, 3, end_schema=SCHEMAS[5]))  # arrives last, sits in between
    assert _drifts(store) == [
        (2, 1, 3, True, [("removed", "name")]),
        (3, 2, 5, False, [("added", "email"), ("type_widened", "id"), ("added", "name")]),
    ]


def test_a_version_moving_later_leaves_its_old_neighbours_joined(store: Store) -> None:
    # Run 2's COMPLETE (time 9) arrives last: until then its version sits before run 3's.
    events = [*_run(1, 0, 1, end_schema=SCHEMAS[1]), *_run(2, 2, 9, start_schema=SCHEMAS[5]),
              *_run(3, 4, 5, end_schema=SCHEMAS[2])]
    record(store, events[:3] + events[4:])
    assert _drifts(store) == [(2, 1, 2, True, [("removed", "name")]),
                              (3, 2, 5, False, [("type_widened", "id"), ("added", "name")])]
    record(store, [events[3]])
    assert _drifts(store) == [(3, 1, 5, False, [("type_widened", "id")]),
                              (2, 3, 9, True, [("type_narrowed", "id"), ("removed", "name")])]


def test_a_later_schema_facet_of_the_same_version_replaces_its_drift(store: Store) -> None:
    record(store, [*_run(1, 0, 1, end_schema=SCHEMAS[1]),
                   *_run(2, 2, 3, start_schema=SCHEMAS[2])])
    assert _drifts(store) == [(2, 1, 3, False, [("type_widened", "id")])]
    # The run's COMPLETE carried another schema; the newest facet is the version's.
    record(store, [run_event("COMPLETE", "2024-01-01T00:00:04Z",
                             "00000000-0000-0000-0000-000000000002",
                             outputs=[dataset("file", "/out", SCHEMAS[1])])])
    assert _drifts(store) == []


def test_each_dataset_of_a_batch_is_recomputed_from_its_own_versions(store: Store) -> None:
    record(store, [*_run(1, 0, 1, "/a", end_schema=SCHEMAS[1]),
                   *_run(3, 10, 11, "/b", end_schema=SCHEMAS[1]),
                   *_run(4, 20, 21, "/b", end_schema=SCHEMAS[2])])
    # One batch: an early version of /a and a late one of /b.
    record(store, [*_run(2, 2, 3, "/a", end_schema=SCHEMAS[3]),
                   *_run(5, 30, 31, "/b", end_schema=SCHEMAS[5])])
    assert _drifts(store) == [
        (2, 1, 3, False, [("added", "email"), ("type_widened", "id")]),
        (4, 3, 21, False, [("type_widened", "id")]),
        (5, 4, 31, True, [("type_narrowed", "id"), ("removed", "name")]),
    ]


def test_rows_recomputed_unchanged_are_not_rewritten(store: Store) -> None:
    record(store, [*_run(1, 0, 1, end_schema=SCHEMAS[1]), *_run(2, 2, 3, end_schema=SCHEMAS[2])])
    writes: list[str] = []

    def on_execute(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith(("DELETE FROM DATASET_DRIFTS",
                                                   "INSERT INTO DATASET_DRIFTS")):
            writes.append(statement)

    sa.event.listen(store.engine, "before_cursor_execute", on_execute)
    try:
        # Starts before both versions, so both pairs are recomputed; neither changes.
        record(store, _run(3, 0, 5, end_schema=SCHEMAS[2]))
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", on_execute)
    assert writes == []
    assert _drifts(store) == [(2, 1, 3, False, [("type_widened", "id")])]


# -- the property: any order, any repeats, any lot split ------------------------------

_run_plans = st.lists(
    st.tuples(
        st.sampled_from(["/a", "/b", "/c"]),
        st.integers(0, 30),  # start second: runs overlap and tie
        st.integers(0, 6),  # duration
        st.sampled_from(range(len(SCHEMAS))),
        st.sampled_from(range(len(SCHEMAS))),
    ),
    min_size=2,
    max_size=12,
)


def _events(plans: list[tuple[str, int, int, int, int]]) -> list[dict[str, Any]]:
    return list(itertools.chain.from_iterable(
        _run(i + 1, start, start + length, name, SCHEMAS[s1], SCHEMAS[s2])
        for i, (name, start, length, s1, s2) in enumerate(plans)))


def _lots(events: list[dict[str, Any]], cuts: list[int]) -> list[list[dict[str, Any]]]:
    bounds = sorted({c % (len(events) + 1) for c in cuts} | {0, len(events)})
    return [events[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def _rows(conn: sa.Connection) -> list[tuple[Any, ...]]:
    return sorted((r.version_uuid, r.previous_version_uuid, r.changed_at, r.breaking,
                   repr(r.changes)) for r in conn.execute(sa.select(t.dataset_drifts)))


def _stored(store: Store) -> list[tuple[Any, ...]]:
    with store.engine.connect() as conn:
        return _rows(conn)


def _rebuilt(store: Store) -> list[tuple[Any, ...]]:
    """The drift rows recomputed from every whole chain (then rolled back)."""
    with store.engine.connect() as conn, conn.begin() as tx:
        drift.rebuild(conn)
        rows = _rows(conn)
        tx.rollback()
    return rows


@store_property(25)
@given(plans=_run_plans, data=st.data())
def test_drifts_are_a_function_of_the_set_of_events(
    db_url: str, plans: list[tuple[str, int, int, int, int]], data: st.DataObject
) -> None:
    events = _events(plans)
    order = data.draw(st.permutations(range(len(events))))
    repeats = data.draw(st.lists(st.sampled_from(range(len(events))), max_size=len(events)))
    shuffled = [events[i] for i in [*order, *repeats]]
    shuffled = [shuffled[i] for i in data.draw(st.permutations(range(len(shuffled))))]
    cuts = data.draw(st.lists(st.integers(0, len(shuffled)), max_size=6))

    with emptied_store(db_url) as in_order:
        record(in_order, events)
        expected = dump(in_order)
        assert _stored(in_order) == _rebuilt(in_order)
    with emptied_store(db_url) as replayed:
        for lot in _lots(shuffled, cuts):
            record(replayed, lot)
        actual = dump(replayed)
        assert _stored(replayed) == _rebuilt(replayed)
    assert actual["dataset_drifts"] == expected["dataset_drifts"]
    assert actual == expected


def test_the_generated_histories_drift() -> None:
    """The property's schemas do change: a history of them yields drifts of both classes."""
    from headwater.graph.drift import diff_schemas

    def fields(schema: list[tuple[str, str]] | None) -> list[dict[str, str]]:
        return [{"name": n, "type": ty} for n, ty in schema or ()]

    pairs = [diff_schemas(fields(a), fields(b)) for a, b in itertools.permutations(SCHEMAS[1:], 2)]
    assert any(d.breaking for d in pairs) and any(d and not d.breaking for d in pairs)


def test_the_migration_derives_the_drifts_of_versions_already_stored(store: Store) -> None:
    record(store, [*_run(1, 0, 1, end_schema=SCHEMAS[1]), *_run(2, 2, 3, end_schema=SCHEMAS[2]),
                   *_run(3, 4, 5, end_schema=SCHEMAS[4]), *_run(4, 6, 7, "/b", None, SCHEMAS[1]),
                   *_run(5, 8, 9, "/b", None, SCHEMAS[5])])
    derived = _stored(store)
    assert len(derived) == 3
    migrate.downgrade(store.engine, "0004")
    migrate.upgrade(store.engine)
    assert _stored(store) == derived
