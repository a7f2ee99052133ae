"""Isolation: a bad event never costs the good events sent beside it.

Random traffic (``tests/server/event_factory.py``): the runs of a few jobs,
some events repeated, shuffled, mixed with events of every class the parser
refuses and with malformed facets, sent as batches and as single POSTs racing
from threads, on SQLite and PostgreSQL. Whatever the mix:

* every good event is stored exactly once;
* every bad event is answered 4xx (in a batch: by its index, naming its field,
  not retriable) and is in the quarantine, one row per distinct event that
  counts how often it came;
* the store holds exactly what a fresh store holds after receiving only the
  accepted events, in order (``tests/store/dump.py`` says what is compared).

A malformed facet may be stored or refused; either way it is answered, and
whatever the answer, the same content gets the same one.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from headwater.store import Store
from tests.server.event_factory import (
    BAD,
    DATASETS,
    JOBS,
    MALFORMED,
    RunPlan,
    content_key,
    good_events,
    limit_events,
    make_bad,
    make_malformed,
)
from tests.server.live import running_server
from tests.server.stores import Databases, comparable_dump, open_client, post, stored_payloads

PROPERTY_SETTINGS = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,  # the same examples on every run, so CI is reproducible
    database=None,
    # Shrinking a failure here replays whole stores for minutes; each problem
    # line already names the defect and the send that went wrong.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def databases(db_url: str, tmp_path: Path) -> Iterator[Databases]:
    with Databases(db_url, tmp_path) as made:
        yield made


# -- traffic -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    """One event as sent: good, bad (a BAD defect) or malformed (a MALFORMED facet)."""

    event: dict[str, Any]
    kind: str
    defect: str = ""

    @property
    def key(self) -> str:
        return content_key(self.event)

    def describe(self) -> str:
        return f"{self.kind} event ({self.defect})" if self.defect else f"{self.kind} event"


@dataclass
class Answer:
    """What the server said about one send."""

    status: int
    accepted: bool
    duplicate: bool | None = None
    failure: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Traffic:
    made: list[Send]  # in the order they were made: events in event-time order
    sent: list[Send]  # shuffled, with repeats

    def __repr__(self) -> str:
        # What went out, in order: the full events would bury the defects.
        order = ", ".join(s.defect or s.event.get("eventType", "?") for s in self.sent)
        return f"Traffic({len(self.made)} made, {len(self.sent)} sent: {order})"


RUN_PLANS = st.builds(
    RunPlan,
    job=st.integers(0, len(JOBS) - 1),
    source=st.integers(0, len(DATASETS) - 1),
    target=st.integers(0, len(DATASETS) - 1),
    terminal=st.sampled_from(["COMPLETE", "FAIL"]),
    running=st.booleans(),
    wide=st.booleans(),
)


@st.composite
def traffic(draw: st.DrawFn) -> Traffic:
    good = good_events(draw(st.lists(RUN_PLANS, min_size=1, max_size=5)))
    base = st.integers(0, len(good) - 1)
    made = [Send(event, "good") for event in good]
    for kind, i in draw(st.lists(st.tuples(st.sampled_from(sorted(BAD)), base),
                                 min_size=1, max_size=4)):
        made.append(Send(make_bad(kind, good[i]), "bad", kind))
    for kind, i in draw(st.lists(st.tuples(st.sampled_from(sorted(MALFORMED)), base),
                                 max_size=2)):
        made.append(Send(make_malformed(kind, good[i]), "malformed", kind))
    repeats = draw(st.lists(st.integers(0, len(made) - 1), max_size=5))
    sent = draw(st.permutations(made + [made[i] for i in repeats]))
    return Traffic(made, sent)


# -- sending ---------------------------------------------------------------------------------


def send_batches(client: TestClient, sent: list[Send], cuts: list[int],
                 stored: frozenset[str] = frozenset()) -> list[Answer]:
    """POST ``sent`` as batches split at ``cuts``; one answer per send, checked per batch.

    ``stored``: the keys of events the store holds already.
    """
    answers: list[Answer] = []
    held = set(stored)  # batches go one at a time, so 'duplicate' is well defined
    bounds = [0, *sorted(cuts), len(sent)]
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        batch = sent[lo:hi]
        response = post(client, "/api/v1/lineage/batch", [s.event for s in batch])
        assert response.status_code in (200, 400), (
            f"batch of {len(batch)} answered {response.status_code}: {response.text[:300]}")
        body = response.json()
        failed = {f["index"]: f for f in body.get("failed_events", [])}
        assert set(failed) <= set(range(len(batch))), f"failed_events indices: {sorted(failed)}"
        accepted = len(batch) - len(failed)
        expected_status = 200 if accepted else 400
        assert response.status_code == expected_status, (
            f"a batch with {accepted} accepted of {len(batch)} answered "
            f"{response.status_code}: {response.text[:300]}")
        duplicates = 0
        for i, send in enumerate(batch):
            if i not in failed:
                duplicates += send.key in held
                held.add(send.key)
        summary = body["summary"]
        assert (summary["received"], summary["successful"], summary["failed"],
                summary["non_retriable"], summary["retriable"], summary["duplicates"]) == (
            len(batch), accepted, len(failed), len(failed), 0, duplicates), f"summary {summary}"
        if response.status_code == 200:
            assert body["status"] == ("partial_success" if failed else "success")
        for i in range(len(batch)):
            answers.append(Answer(response.status_code, i not in failed,
                                  failure=failed.get(i, {})))
    return answers


def post_single(client: httpx.Client, send: Send) -> Answer:
    response = post(client, "/api/v1/lineage", send.event)
    body = response.json()
    if response.status_code == 200:
        return Answer(200, True, duplicate=body["duplicate"])
    return Answer(response.status_code, False, failure=body)


def send_singles(client: httpx.Client, sent: list[Send],
                 threads: int = 4) -> list[Answer]:
    """POST each of ``sent`` alone, ``threads`` requests in flight at once."""
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda send: post_single(client, send), sent))


# -- checking --------------------------------------------------------------------------------

_BATCH_INDEX = re.compile(r"^\[\d+\]\.?")


def names_field(reported: Any, expected: str) -> bool:
    """``reported`` is ``expected`` or a path inside it (a batch may prefix ``[index].``)."""
    if not isinstance(reported, str):
        return False
    path = _BATCH_INDEX.sub("", reported)
    return path == expected or path.startswith((f"{expected}.", f"{expected}["))


def answer_problems(sent: list[Send], answers: list[Answer], single: bool) -> list[str]:
    """What is wrong with the server's answers, one line per wrong answer."""
    problems = []
    for position, (send, answer) in enumerate(zip(sent, answers, strict=True)):
        where = f"send {position}: {send.describe()}"
        if answer.status >= 500:
            problems.append(f"{where} answered {answer.status}: {answer.failure}")
        elif send.kind == "good" and not answer.accepted:
            problems.append(f"{where} refused ({answer.status}): {answer.failure}")
        elif send.kind == "bad" and answer.accepted:
            problems.append(f"{where} accepted")
        elif not answer.accepted:
            failure = answer.failure
            if failure.get("retriable") is not False:
                problems.append(f"{where}: refusal not marked retriable: false: {failure}")
            if not (failure.get("reason") or failure.get("error")):
                problems.append(f"{where}: refusal gives no reason: {failure}")
            if send.kind == "bad" and not names_field(failure.get("field"), BAD[send.defect].field):
                problems.append(f"{where}: field {failure.get('field')!r}, expected "
                                f"{BAD[send.defect].field!r}")
            allowed = {400} if send.kind == "bad" else {400, 422}
            if single and answer.status not in allowed:
                problems.append(f"{where} answered {answer.status}, expected {sorted(allowed)}")
    by_content: dict[str, set[bool]] = {}
    for send, answer in zip(sent, answers, strict=True):
        by_content.setdefault(send.key, set()).add(answer.accepted)
    if any(len(outcomes) > 1 for outcomes in by_content.values()):
        problems.append("the same content was accepted once and refused another time")
    return problems


def accepted_keys(sent: list[Send], answers: list[Answer]) -> set[str]:
    return {s.key for s, a in zip(sent, answers, strict=True) if a.accepted}


def check_stored_once(store: Store, expected: set[str]) -> None:
    stored = Counter(content_key(p) for p in stored_payloads(store))
    twice = sum(1 for n in stored.values() if n > 1)
    missing = len(expected - set(stored))
    extra = len(set(stored) - expected)
    assert (missing, extra, twice) == (0, 0, 0), (
        f"raw event log: {missing} accepted event(s) missing, {extra} never accepted stored, "
        f"{twice} stored more than once (of {len(expected)} accepted)")


def quarantined(client: httpx.Client, page: int = 100) -> list[dict[str, Any]]:
    """Every quarantine row, read ``page`` rows at a time."""
    rows: list[dict[str, Any]] = []
    while True:
        response = client.get("/api/v2/quarantine", params={"limit": page, "offset": len(rows)})
        assert response.status_code == 200, (
            f"GET /api/v2/quarantine answered {response.status_code}: {response.text[:200]}")
        body = response.json()
        rows += body["events"]
        if not body["events"] or len(rows) >= body["totalCount"]:
            assert len(rows) == body["totalCount"], f"{len(rows)} rows, totalCount {body}"
            return rows


def check_quarantine(client: httpx.Client, sent: list[Send],
                     answers: list[Answer], page: int = 100) -> None:
    """Each refused content is one row, seen as often as it was sent, with its field."""
    refused = Counter(s.key for s, a in zip(sent, answers, strict=True) if not a.accepted)
    defects = {s.key: s for s in sent}
    rows: dict[str, dict[str, Any]] = {}
    for row in quarantined(client, page):
        payload = row["payload"]
        key = content_key(json.loads(payload) if isinstance(payload, str) else payload)
        assert key not in rows, f"two quarantine rows for one event: {row['reason']}"
        rows[key] = row
    missing = [defects[k].describe() for k in refused if k not in rows]
    assert not missing, f"refused but not quarantined: {missing}"
    assert set(rows) == set(refused), f"{len(set(rows) - set(refused))} unexpected quarantine rows"
    for key, times in refused.items():
        row, send = rows[key], defects[key]
        assert row["timesSeen"] == times, (
            f"{send.describe()}: timesSeen {row['timesSeen']}, sent {times} times")
        assert row["reason"] and row["receivedAt"] and row["id"] is not None
        # The status the producer was answered: the parser's 400, or the store's 422.
        assert row["status"] in ({400} if send.kind == "bad" else {400, 422}), row["status"]
        if send.kind == "bad":
            assert names_field(row["field"], BAD[send.defect].field), (
                f"{send.describe()}: quarantine field {row['field']!r}")


def check_same_as_reference(store: Store, made: list[Send], accepted: set[str],
                            databases: Databases) -> None:
    """``store`` holds what a fresh store holds after only the accepted events, in order."""
    actual = comparable_dump(store)
    in_order, seen = [], set()
    for send in made:
        if send.key in accepted and send.key not in seen:
            seen.add(send.key)
            in_order.append(send.event)
    with databases.store() as reference, open_client(reference) as client:
        response = post(client, "/api/v1/lineage/batch", in_order)
        assert response.status_code == 200, response.text[:300]
        assert response.json()["summary"]["successful"] == len(in_order), response.text[:300]
        expected = comparable_dump(reference)
    for table in expected:
        only_here = sorted(set(actual[table]) - set(expected[table]))[:3]
        only_there = sorted(set(expected[table]) - set(actual[table]))[:3]
        assert actual[table] == expected[table], (
            f"{table} differs from the store fed only the accepted events: "
            f"extra {only_here}, missing {only_there}")


# -- properties ------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(mix=traffic(), data=st.data())
def test_batches_keep_every_good_event_whatever_else_they_hold(
    mix: Traffic, data: st.DataObject, databases: Databases
) -> None:
    cuts = data.draw(st.lists(st.integers(1, max(1, len(mix.sent) - 1)), max_size=3,
                              unique=True), label="batch cuts")
    with databases.store() as store, open_client(store) as client:
        answers = send_batches(client, mix.sent, [c for c in cuts if c < len(mix.sent)])
        problems = answer_problems(mix.sent, answers, single=False)
        assert not problems, "\n".join(problems)
        accepted = accepted_keys(mix.sent, answers)
        check_stored_once(store, accepted)
        check_quarantine(client, mix.sent, answers)
        check_same_as_reference(store, mix.made, accepted, databases)


@PROPERTY_SETTINGS
@given(mix=traffic())
def test_racing_single_posts_keep_every_good_event(mix: Traffic, databases: Databases) -> None:
    with databases.store() as store, open_client(store) as client:
        answers = send_singles(client, mix.sent)
        problems = answer_problems(mix.sent, answers, single=True)
        assert not problems, "\n".join(problems)
        # Exactly one answer per stored event says it was new, whoever won the race.
        fresh = Counter(s.key for s, a in zip(mix.sent, answers, strict=True)
                        if a.accepted and a.duplicate is False)
        accepted = accepted_keys(mix.sent, answers)
        assert fresh == Counter(accepted), "duplicate flags: an event new twice or never"
        check_stored_once(store, accepted)
        check_quarantine(client, mix.sent, answers)
        check_same_as_reference(store, mix.made, accepted, databases)


# -- deterministic cases ---------------------------------------------------------------------


def many_good(count: int) -> list[dict[str, Any]]:
    plans = [RunPlan(k % len(JOBS), k % len(DATASETS), (k + 1) % len(DATASETS), "COMPLETE",
                     running=True, wide=k % 2 == 0) for k in range(count // 3 + 1)]
    return good_events(plans)[:count]


def test_every_bad_class_is_refused_naming_its_field(databases: Databases) -> None:
    """Each class alone and all in one batch: 400 naming the field, quarantined once, seen twice."""
    good = many_good(len(BAD))
    bad = [Send(make_bad(kind, good[i]), "bad", kind) for i, kind in enumerate(sorted(BAD))]
    with databases.store() as store, open_client(store) as client:
        singles = send_singles(client, bad, threads=1)
        problems = answer_problems(bad, singles, single=True)
        assert not problems, "\n".join(problems)
        mixed = [s for pair in zip([Send(e, "good") for e in good], bad, strict=True) for s in pair]
        answers = send_batches(client, mixed, [])
        problems = answer_problems(mixed, answers, single=False)
        assert not problems, "\n".join(problems)
        check_stored_once(store, {content_key(e) for e in good})
        check_quarantine(client, bad + mixed, singles + answers, page=5)


BATCH_DEFECTS = [
    ("bad", "NUL in job name", 0),
    ("bad", "integer over int64", 250),
    ("bad", "eventTime past 9999 in UTC", 499),
    ("bad", "dataset name over 1024 bytes", 123),
    ("malformed", "schema fields a number", 321),
]


@pytest.mark.parametrize(("kind", "defect", "position"), BATCH_DEFECTS,
                         ids=[d for _, d, _ in BATCH_DEFECTS])
def test_one_bad_event_in_a_batch_of_500_costs_only_itself(
    kind: str, defect: str, position: int, databases: Databases
) -> None:
    good = [Send(e, "good") for e in many_good(499)]
    make = make_bad if kind == "bad" else make_malformed
    odd = Send(make(defect, good[position % len(good)].event), kind, defect)
    sent = good[:position] + [odd] + good[position:]
    with databases.store() as store, open_client(store) as client:
        answers = send_batches(client, sent, [])
        problems = answer_problems(sent, answers, single=False)
        assert not problems, "\n".join(problems)
        check_stored_once(store, accepted_keys(sent, answers))
        assert store.counts()["events"] == 499 + answers[position].accepted


def test_malformed_facets_cost_no_neighbour(databases: Databases) -> None:
    """Facets of the wrong shape, in one batch with good events and alone."""
    good = many_good(2 * len(MALFORMED))
    odd = [Send(make_malformed(kind, good[2 * i]), "malformed", kind)
           for i, kind in enumerate(sorted(MALFORMED))]
    mixed = [Send(e, "good") for e in good] + odd
    with databases.store() as store, open_client(store) as client:
        answers = send_batches(client, mixed, [])
        singles = send_singles(client, odd, threads=1)
        problems = (answer_problems(mixed, answers, single=False)
                    + answer_problems(odd, singles, single=True))
        assert not problems, "\n".join(problems)
        check_stored_once(store, accepted_keys(mixed, answers))


def test_events_at_each_limit_are_stored(databases: Databases) -> None:
    """Exactly at a limit is inside it: names, integers and event times at the edge."""
    events = [Send(e, "good") for e in limit_events()]
    with databases.store() as store, open_client(store) as client:
        answers = send_singles(client, events, threads=1)
        problems = answer_problems(events, answers, single=True)
        assert not problems, "\n".join(problems)
        again = send_batches(client, events, [], stored=frozenset(s.key for s in events))
        assert all(a.accepted for a in again)
        check_stored_once(store, {s.key for s in events})


RACE_DEFECTS = ["eventTime past 9999 in UTC", "NUL in job name", "integer over int64",
                "dataset name over 1024 bytes", "runId not a UUID"]
RACE_TIMEOUT = 30.0  # seconds; a lot of 41 single events takes well under one


@pytest.mark.live
@pytest.mark.slow
def test_good_posts_racing_a_bad_one_are_all_stored(db_url: str) -> None:
    """A live server, five rounds of 40 good single POSTs released at once with 1 bad one."""
    good = [Send(e, "good") for e in many_good(40 * len(RACE_DEFECTS))]
    sent: list[Send] = []
    answers: list[Answer] = []
    with running_server("--db", db_url) as base, httpx.Client(
        base_url=base, timeout=RACE_TIMEOUT, limits=httpx.Limits(max_connections=64)
    ) as client:
        for round_, defect in enumerate(RACE_DEFECTS):
            lot = good[40 * round_ : 40 * (round_ + 1)]
            lot.insert(17, Send(make_bad(defect, lot[0].event), "bad", defect))
            lot_answers = race(client, lot)
            problems = answer_problems(lot, lot_answers, single=True)
            assert not problems, f"round {round_} ({defect}):\n" + "\n".join(problems)
            sent += lot
            answers += lot_answers
        check_quarantine(client, sent, answers)
    with Store.open(db_url) as store:
        assert store.counts()["events"] == len(good)
        check_stored_once(store, {s.key for s in good})


def race(client: httpx.Client, lot: list[Send]) -> list[Answer]:
    """POST every event of ``lot`` from its own thread, all released together."""
    gate = threading.Barrier(len(lot))

    def one(send: Send) -> Answer:
        gate.wait()
        try:
            return post_single(client, send)
        except httpx.TimeoutException:
            return Answer(0, False, failure={"error": f"no answer in {RACE_TIMEOUT:.0f} s"})

    with ThreadPoolExecutor(len(lot)) as pool:
        return list(pool.map(one, lot))
