"""``schema_contracts``: a consumer's declared schema against the producer's, derived on write."""

from __future__ import annotations

import itertools
from typing import Any

import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from headwater.store import Store, migrate
from headwater.store import tables as t
from tests.store.builders import dataset, record, run_event
from tests.store.dump import dump
from tests.store.properties import emptied_store, store_property

TOPIC = ("kafka://broker:9092", "orders")


def _value(fields: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {"name": "value", "type": "struct", "fields": [{"name": n, "type": ty} for n, ty in fields]}
    ]


def _write(number: int, second: int, fields: list[tuple[str, str]]) -> dict[str, Any]:
    """A producer run's COMPLETE event writing the topic with a ``value`` struct."""
    out = dataset(*TOPIC)
    out["facets"]["schema"] = {"_producer": "p", "_schemaURL": "s", "fields": _value(fields)}
    return run_event(
        "COMPLETE",
        f"2024-01-01T00:{second // 60:02d}:{second % 60:02d}Z",
        f"00000000-0000-0000-0000-{number:012d}",
        job="producer",
        outputs=[out],
    )


def _read(
    number: int, second: int, fields: list[tuple[str, str]], job: str = "consumer"
) -> dict[str, Any]:
    """A consumer run's COMPLETE event reading the topic with a declared ``value`` struct."""
    read = dataset(*TOPIC)
    read["inputFacets"] = {
        "declaredSchema": {"_producer": "p", "_schemaURL": "s", "fields": _value(fields)}
    }
    return run_event(
        "COMPLETE",
        f"2024-01-01T00:{second // 60:02d}:{second % 60:02d}Z",
        f"00000000-0000-0000-0001-{number:012d}",
        job=job,
        inputs=[read],
    )


WRITTEN_DOUBLE = [("order_id", "long"), ("amount", "double"), ("country", "string")]
WRITTEN_STRING = [("order_id", "long"), ("amount", "string"), ("country", "string")]
DECLARED = [("order_id", "long"), ("amount", "double")]


def _contracts(store: Store) -> list[tuple[Any, ...]]:
    """(job, differs, breaking, [(kind, path, old, new)], changed second) per row."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(t.schema_contracts, t.jobs.c.name.label("job"))
            .join(t.jobs, t.jobs.c.id == t.schema_contracts.c.job_id)
            .order_by(t.jobs.c.name)
        )
        return [
            (
                r.job,
                r.differs,
                r.breaking,
                [(c["kind"], c["path"], c["old"], c["new"]) for c in r.changes],
                r.changed_at.second,
            )
            for r in rows
        ]


def test_a_subset_read_matches_and_a_changed_type_is_flagged_when_both_facts_exist(
    store: Store,
) -> None:
    record(store, [_read(1, 1, DECLARED)])
    assert _contracts(store) == [("consumer", False, False, [], 1)]  # nothing written yet
    record(store, [_write(1, 2, WRITTEN_DOUBLE)])
    assert _contracts(store) == [("consumer", False, False, [], 2)]  # a subset: no difference
    record(store, [_write(2, 5, WRITTEN_STRING)])
    assert _contracts(store) == [
        ("consumer", True, True, [("type_narrowed", "value.amount", "string", "double")], 5)
    ]


def test_a_declared_field_not_written_is_breaking_unless_nullable(store: Store) -> None:
    read = _read(1, 3, [*DECLARED, ("coupon", "string")])
    nullable = _read(2, 4, [*DECLARED, ("note", "string")], job="lenient")
    nullable["inputs"][0]["inputFacets"]["declaredSchema"]["fields"][0]["fields"][2]["nullable"] = (
        True
    )
    record(
        store,
        [
            _write(1, 1, WRITTEN_DOUBLE),
            read,
            nullable,
            _read(3, 5, [("order_id", "int")], job="narrow"),
            _read(4, 6, [("amount", "double"), ("order_id", "decimal(30,0)")], job="wide"),
        ],
    )
    assert _contracts(store) == [
        ("consumer", True, True, [("not_written", "value.coupon", None, "string")], 3),
        ("lenient", True, False, [("not_written", "value.note", None, "string")], 4),
        ("narrow", True, True, [("type_narrowed", "value.order_id", "long", "int")], 5),
        ("wide", True, False, [("type_widened", "value.order_id", "long", "decimal(30,0)")], 6),
    ]


def test_the_latest_declaration_of_the_job_counts(store: Store) -> None:
    record(store, [_write(1, 1, WRITTEN_STRING), _read(2, 9, [("amount", "string")])])
    record(store, [_read(1, 4, DECLARED)])  # an older run of the job, arriving late
    assert _contracts(store) == [("consumer", False, False, [], 9)]
    record(store, [_read(3, 12, DECLARED)])
    assert _contracts(store) == [
        ("consumer", True, True, [("type_narrowed", "value.amount", "string", "double")], 12)
    ]


def test_a_late_older_version_does_not_replace_the_latest(store: Store) -> None:
    record(store, [_read(1, 1, DECLARED), _write(2, 8, WRITTEN_STRING)])
    flagged = _contracts(store)
    record(store, [_write(1, 3, WRITTEN_DOUBLE)])
    assert _contracts(store) == flagged and flagged[0][1] is True


# -- a function of the set of events --------------------------------------------------

_WRITES = [WRITTEN_DOUBLE, WRITTEN_STRING, [("order_id", "int")]]
_DECLARES = [DECLARED, [("amount", "string")], [("order_id", "long"), ("coupon", "string")]]


_plans = st.lists(
    st.tuples(
        st.booleans(), st.integers(0, 2), st.integers(0, 50), st.sampled_from(["consumer", "other"])
    ),
    min_size=1,
    max_size=7,
)


def _writing_run(number: int, second: int, fields: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A producer run whose START carries the schema and whose COMPLETE, 3 to 25 s
    later, carries none: the version moves later (past other versions) without a
    schema facet in its batch."""
    start = _write(number, second, fields)
    start["eventType"] = "START"
    complete = _write(number, second + 3 + 11 * (number % 3), fields)
    del complete["outputs"][0]["facets"]["schema"]
    return [start, complete]


def _events(plans: list[tuple[bool, int, int, str]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, (writes, schema, second, job) in enumerate(plans):
        if writes:
            out.extend(_writing_run(i, second, _WRITES[schema]))
        else:
            out.append(_read(i, second, _DECLARES[schema], job=job))
    return out


@store_property(25)
@given(plans=_plans, data=st.data())
def test_contracts_are_a_function_of_the_set_of_events(
    db_url: str, plans: list[tuple[bool, int, int, str]], data: st.DataObject
) -> None:
    events = _events(plans)
    order = data.draw(st.permutations(range(len(events))))
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(events)), max_size=4))))
    shuffled = [events[i] for i in order]
    with emptied_store(db_url) as in_order:
        record(in_order, events)
        expected = dump(in_order)
    with emptied_store(db_url) as replayed:
        for a, b in itertools.pairwise([0, *cuts, len(shuffled)]):
            if b > a:
                record(replayed, shuffled[a:b])
        actual = dump(replayed)
    assert actual["schema_contracts"] == expected["schema_contracts"]
    assert actual == expected


def test_the_generated_histories_flag_contracts(store: Store) -> None:
    """The property's schemas do differ: breaking and compatible rows both come out."""
    record(store, _events([(True, 0, 1, "x"), (False, 2, 2, "consumer"), (False, 1, 3, "other")]))
    assert [row[1:3] for row in _contracts(store)] == [(True, True), (True, False)]


def test_the_migration_derives_the_contracts_of_declarations_already_stored(store: Store) -> None:
    record(
        store,
        [
            _read(1, 1, DECLARED),
            _write(2, 8, WRITTEN_STRING),
            _read(3, 9, [("amount", "string")], job="other"),
        ],
    )
    derived = dump(store)["schema_contracts"]
    assert len(derived) == 2
    migrate.downgrade(store.engine, "0012")
    migrate.upgrade(store.engine)
    assert dump(store)["schema_contracts"] == derived
