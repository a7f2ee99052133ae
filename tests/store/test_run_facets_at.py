"""A run's facets as of a time: the store's answer as of ``T`` is its answer now had it
received only the events sent at or before ``T``, for runs whose START and COMPLETE
sit on either side of ``T`` and events recorded in any order, on both databases."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from headwater.store import Store
from headwater.store import tables as t
from headwater.store.namespace_rules import parse_rules
from headwater.store.reads.classification import column_edges
from headwater.store.reads.dataset_facets_at import newest_dataset_facets
from tests.store.builders import column_lineage, dataset, facet, record, run_event
from tests.store.properties import emptied_store, store_property

START = datetime(2024, 5, 1)
MID = "dataset:ns:mid"

#: The columnLineage an event may carry on its output (None: none).
LINEAGES = [
    None,
    column_lineage({"a": [("ns", "mid", "x")]}),
    column_lineage({"a": [("ns", "mid", "y")]}),
    column_lineage({"a": [("ns", "mid", "x"), ("ns", "mid", "y")], "b": [("ns", "mid", "y")]}),
]
#: Whether the assertions an event may carry on its input passed (None: none sent).
ASSERTIONS = [None, True, False]

# A run: its job, when it starts, how long it lasts and the facets of its
# START, RUNNING (if any) and COMPLETE (lineage and assertions indexes).
_events_of_run = st.tuples(st.integers(0, len(LINEAGES) - 1), st.integers(0, 2))
_runs = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.integers(0, 8),
        st.integers(1, 6),
        st.lists(_events_of_run, min_size=2, max_size=3),
    ),
    min_size=1,
    max_size=5,
)


def _time(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _events(runs: list[tuple[str, int, int, list[tuple[int, int]]]]) -> list[dict[str, Any]]:
    out = []
    for number, (job, start, length, sent) in enumerate(runs):
        types = ["START", "COMPLETE"] if len(sent) == 2 else ["START", "RUNNING", "COMPLETE"]
        times = [start, start + length / 2, start + length][:: 1 if len(sent) == 3 else 2]
        for event_type, at, (lineage, passed) in zip(types, times, sent, strict=True):
            read = dataset("ns", "mid")
            if ASSERTIONS[passed] is not None:
                read["inputFacets"] = {
                    "dataQualityAssertions": facet(
                        assertions=[{"assertion": "not_null", "success": ASSERTIONS[passed]}]
                    )
                }
            written = LINEAGES[lineage]
            out.append(
                run_event(
                    event_type,
                    _time(at),
                    f"00000000-0000-4000-8000-{number:012d}",
                    job=job,
                    inputs=[read],
                    outputs=[
                        dataset(
                            "ns",
                            f"out_{job}",
                            **({} if written is None else {"columnLineage": written}),
                        )
                    ],
                )
            )
    return out


def _answers(store: Store, as_of: datetime | None) -> tuple[Any, Any]:
    with store.engine.connect() as conn:
        edges = column_edges(conn, as_of)
        assertions = newest_dataset_facets(
            conn,
            [MID],
            "dataQualityAssertions",
            t.facets.c.kind.in_(("input", "output", "dataset")),
            as_of,
        )
    return edges, assertions


@store_property(15)
@given(runs=_runs, data=st.data())
def test_an_answer_as_of_a_time_is_the_answer_of_the_events_sent_by_then(
    db_url: str, runs: list[tuple[str, int, int, list[tuple[int, int]]]], data: st.DataObject
) -> None:
    events = _events(runs)
    order = data.draw(st.permutations(range(len(events))))
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(events)), max_size=3))))
    # Whole and half seconds: at an event's very time, and between two.
    moments = data.draw(st.lists(st.integers(0, 30), min_size=1, max_size=3, unique=True))
    shuffled = [events[i] for i in order]
    with emptied_store(db_url) as everything:
        for a, b in itertools.pairwise([0, *cuts, len(shuffled)]):
            if b > a:
                record(everything, shuffled[a:b])
        as_of = {m: _answers(everything, START + timedelta(seconds=m / 2)) for m in moments}
    for moment in moments:
        until = START + timedelta(seconds=moment / 2)
        sent = [e for e in events if datetime.fromisoformat(e["eventTime"][:-1]) <= until]
        with emptied_store(db_url) as by_then:
            if sent:
                record(by_then, sent)
            assert as_of[moment] == _answers(by_then, None), until


def test_the_generated_histories_straddle(db_url: str) -> None:
    """The property's runs do straddle a time: one whose START sent lineage x and whose
    COMPLETE sent y answers x between them."""
    runs = [("a", 0, 4, [(1, 2), (2, 1)])]
    with emptied_store(db_url) as store:
        record(store, _events(runs))
        edges, assertions = _answers(store, START + timedelta(seconds=2))
        assert [e.source for e in edges] == ["datasetField:ns:mid:x"]
        assert assertions[MID]["assertions"][0]["success"] is False
        edges, assertions = _answers(store, None)
        assert [e.source for e in edges] == ["datasetField:ns:mid:y"]
        assert assertions[MID]["assertions"][0]["success"] is True
        with store.engine.connect() as conn:
            assert conn.scalar(sa.select(sa.func.count()).select_from(t.events)) == 2


def test_a_straddling_run_writing_a_renamed_dataset_is_read_back_under_its_new_name(
    db_url: str,
) -> None:
    """The namespace rules map the output's name as sent to another dataset: the run's
    events, kept as sent, still give the facets of the dataset the store made of it."""
    rules = parse_rules('[[rename]]\nnamespace = "legacy"\nto_namespace = "ns"\n')
    sent = _events([("a", 0, 4, [(1, 2), (2, 1)])])
    for event in sent:
        event["outputs"][0]["namespace"] = "legacy"
        event["inputs"][0]["namespace"] = "legacy"
    with emptied_store(db_url, rules) as store:
        record(store, sent)
        edges, assertions = _answers(store, START + timedelta(seconds=2))
        assert [(e.source, e.target) for e in edges] == [
            ("datasetField:ns:mid:x", "datasetField:ns:out_a:a")
        ]
        assert assertions[MID]["assertions"][0]["success"] is False
