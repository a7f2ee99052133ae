"""Job owners and static-lineage declarations as of a time, in the store, on both
databases: the history is a function of the set of events (a property test permutes,
repeats and re-batches them and checks every answer against a model), retention keeps
what is in force at its cutoff, and the migration fills the history from the raw log."""

from __future__ import annotations

import copy
import itertools
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from headwater.events import parse_event
from headwater.store import Store, migrate
from headwater.store import tables as t
from headwater.store.job_ownership import job_ownership_history
from headwater.store.reads.classification import owners_at
from headwater.store.reads.declarations import declared_io_in_force
from headwater.store.retention import prune
from tests.server.test_retention import KEEP, NOW
from tests.store.builders import PRODUCER, facet, record, run_event
from tests.store.dump import dump
from tests.store.ownership_nights import DECLARED, OWNED_JOB, owned_nights
from tests.store.properties import emptied_store, store_property

JOB_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
HISTORY = ("job_ownership_history", "job_declaration_history", "job_declared_io_history")
START = datetime(2024, 1, 1)
JOBS = ("dash", "report")


def _declared_at(conn: sa.Connection, as_of: datetime) -> dict[str, list[str]]:
    """Job name -> the datasets its declaration in force at ``as_of`` reads."""
    io = declared_io_in_force()
    query = sa.select(t.jobs.c.name, t.datasets.c.name).select_from(
        io.join(t.jobs, t.jobs.c.id == io.c.job_id).join(
            t.datasets, t.datasets.c.id == io.c.dataset_id
        )
    )
    found: dict[str, list[str]] = {}
    for job, name in conn.execute(query, {"as_of": as_of}):
        found.setdefault(job, []).append(name)
    return {job: sorted(names) for job, names in found.items()}


def _owners_at(conn: sa.Connection, jobs: list[str], as_of: datetime) -> dict[str, list[str]]:
    return {
        job: [o["name"] for o in owners if o["source"] == "facet"]
        for job, owners in owners_at(conn, jobs, as_of).items()
    }


# (job, second, datasets read or None for a JobEvent with facets only)
_declarations = st.lists(
    st.tuples(
        st.sampled_from(JOBS),
        st.integers(0, 5),
        st.none() | st.lists(st.sampled_from("abc"), unique=True, max_size=3),
    ),
    max_size=6,
)
# (job, second, owner, sent in a run rather than a JobEvent)
_ownerships = st.lists(
    st.tuples(
        st.sampled_from(JOBS), st.integers(0, 5), st.sampled_from(["t1", "t2"]), st.booleans()
    ),
    max_size=6,
)


def _time(second: int) -> str:
    return f"2024-01-01T00:00:{second:02d}Z"


def _job_event(job: str, second: int, n: int, **extra: Any) -> dict[str, Any]:
    facets = {"documentation": facet(description=f"#{n}")}
    facets.update(extra.pop("facets", {}))
    return {
        "eventTime": _time(second),
        "producer": PRODUCER,
        "schemaURL": JOB_EVENT,
        "job": {"namespace": "bi", "name": job, "facets": facets},
        **extra,
    }


def _events(
    declarations: list[tuple[str, int, list[str] | None]],
    ownerships: list[tuple[str, int, str, bool]],
) -> list[dict[str, Any]]:
    events = []
    for n, (job, second, reads) in enumerate(declarations):
        inputs = {} if reads is None else {"inputs": [{"namespace": "f", "name": r} for r in reads]}
        events.append(_job_event(job, second, n, **inputs))
    for n, (job, second, owner, in_run) in enumerate(ownerships, start=100):
        owned = {"ownership": facet(owners=[{"name": owner, "type": "team"}])}
        if in_run:
            run = f"00000000-0000-0000-0000-{n:012d}"
            events.append(
                run_event("COMPLETE", _time(second), run, job=job, namespace="bi", job_facets=owned)
            )
        else:
            events.append(_job_event(job, second, n, facets=owned))
    return events


def _model(
    events: list[dict[str, Any]], as_of: datetime
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What each job declares and who owns it at ``as_of``, from the events alone: the
    latest (event time, hash) at or before it."""
    declared: dict[str, tuple[Any, ...]] = {}
    owned: dict[str, tuple[Any, ...]] = {}
    for event in events:
        parsed = parse_event(copy.deepcopy(event))
        if parsed.time > as_of:
            continue
        key, job = (parsed.time, parsed.event_hash), event["job"]["name"]
        if "inputs" in event and event.get("run") is None:
            if job not in declared or key > declared[job][0]:
                declared[job] = (key, sorted(i["name"] for i in event["inputs"]))
        ownership = event["job"]["facets"].get("ownership")
        if ownership is not None and (job not in owned or key > owned[job][0]):
            owned[job] = (key, [o["name"] for o in ownership["owners"]])
    return (
        {job: names for job, (_, names) in declared.items() if names},
        {f"job:bi:{job}": owned[job][1] if job in owned else [] for job in JOBS},
    )


def _answers(store: Store) -> dict[datetime, Any]:
    out = {}
    with store.engine.connect() as conn:
        for second in range(-1, 7):
            moment = START + timedelta(seconds=second)
            out[moment] = (
                _declared_at(conn, moment),
                _owners_at(conn, [f"job:bi:{job}" for job in JOBS], moment),
            )
    return out


@store_property(15)
@given(declarations=_declarations, ownerships=_ownerships, data=st.data())
def test_the_history_is_a_function_of_the_set_of_events(
    store: Store,
    declarations: list[tuple[str, int, list[str] | None]],
    ownerships: list[tuple[str, int, str, bool]],
    data: st.DataObject,
) -> None:
    events = _events(declarations, ownerships)
    order = data.draw(st.permutations(range(len(events))))
    repeats = data.draw(st.lists(st.sampled_from(range(len(events))), max_size=3)) if events else []
    shuffled = [events[i] for i in [*order, *repeats]]
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(shuffled)), max_size=4))))
    url = store.engine.url.render_as_string(hide_password=False)
    with emptied_store(url) as in_order:
        record(in_order, events)
        expected, answers = dump(in_order), _answers(in_order)
    for moment, answer in answers.items():
        assert answer == _model(events, moment), moment
    with emptied_store(url) as replayed:
        for a, b in itertools.pairwise([0, *cuts, len(shuffled)]):
            if b > a:
                record(replayed, shuffled[a:b])
        actual = dump(replayed)
    assert {n: actual[n] for n in HISTORY} == {n: expected[n] for n in HISTORY}
    assert actual == expected


def _in_force(store: Store, moments: list[datetime]) -> dict[datetime, Any]:
    with store.engine.connect() as conn:
        return {
            moment: (
                _owners_at(conn, [OWNED_JOB], moment)[OWNED_JOB],
                _declared_at(conn, moment).get("orders_dashboard", []),
            )
            for moment in moments
        }


def test_retention_keeps_the_owners_and_declaration_in_force_at_its_cutoff(store: Store) -> None:
    record(store, [event for night in owned_nights() for event in night])
    cutoff = NOW - KEEP
    moments = [cutoff, cutoff + timedelta(days=20), NOW]
    before = _in_force(store, moments)
    assert before[cutoff] == (["team:2"], sorted(DECLARED[40]))
    assert before[NOW] == (["team:5"], sorted(DECLARED[100]))
    h = job_ownership_history
    with store.engine.connect() as conn:
        kept_before = conn.scalar(sa.select(sa.func.count()).select_from(h))
    done = prune(store.engine, KEEP, now=NOW, settle=0)
    assert done.runs > 0
    assert _in_force(store, moments) == before
    with store.engine.connect() as conn:
        # Nights 0 and 25 sent owners replaced before the cutoff: their rows went.
        assert conn.scalar(sa.select(sa.func.count()).select_from(h)) == kept_before - 2
        declared = conn.scalar(sa.select(sa.func.count()).select_from(t.job_declaration_history))
        assert declared == len(DECLARED)


def test_the_migration_fills_the_history_from_the_raw_log(store: Store) -> None:
    record(store, [event for night in owned_nights()[:80] for event in night])
    record(store, _events([("dash", 1, ["a"]), ("dash", 3, [])], [("dash", 2, "t1", True)]))
    expected = dump(store)
    assert all(expected[name] for name in HISTORY)
    migrate.downgrade(store.engine, "0020")
    migrate.upgrade(store.engine)
    again = dump(store)
    assert {n: again[n] for n in HISTORY} == {n: expected[n] for n in HISTORY}
