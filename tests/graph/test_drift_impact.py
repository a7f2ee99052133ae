"""A drift's impact on the hand-built graph of ``test_impact``: which columns a change
starts at, a contract drift's single consumer, and the table walk through readers
without column lineage only.

Extra edges here: ``a.s`` (a struct field ``s.amount`` changes) ─D─▶ ``b.s`` (j1), and
``a.k`` ─D─▶ ``z.k`` (j10), a second consumer of ``a.k``.
"""

from __future__ import annotations

import pytest

from headwater.graph.drift_impact import DriftSubject, changed_columns, drift_impact
from headwater.graph.impact import Impact
from headwater.graph.traverse import EdgeIndex
from tests.graph.test_impact import COLUMN_EDGES, TABLE_EDGES, Columns, _edge, c, ds, j

EDGES = [
    *COLUMN_EDGES,
    _edge(c("a.s"), c("b.s"), "j1", "DIRECT"),
    _edge(c("a.k"), c("z.k"), "j10", "DIRECT"),
]


def _reached(subject: DriftSubject, depth: int = 10, max_nodes: int = 1_000) -> dict[str, Impact]:
    answer = drift_impact(subject, Columns(EDGES), EdgeIndex(TABLE_EDGES), depth, max_nodes)
    return {node.id: node.impact for node in answer.nodes}


def test_a_nested_path_starts_at_the_field_and_every_field_enclosing_it() -> None:
    assert changed_columns(ds("a"), ["s.amount", "x"]) == [
        c("a.s"),
        "datasetField:w:a:s.amount",
        c("a.x"),
    ]


def test_a_drift_id_that_is_not_a_dataset_is_refused() -> None:
    with pytest.raises(ValueError, match="dataset id"):
        changed_columns(c("a.x"), ["x"])


@pytest.mark.parametrize(
    ("title", "subject", "expected"),
    [
        (
            "a version drift of a.x: its direct chain and the readers without column lineage",
            DriftSubject(ds("a"), ("x",)),
            {
                c("b.x"): Impact.DIRECT,
                ds("b"): Impact.DIRECT,
                j("j1"): Impact.DIRECT,
                c("c.y"): Impact.DIRECT,
                ds("c"): Impact.DIRECT,
                j("j2"): Impact.DIRECT,
                # j7 reads a and reports no column lineage: it may use x
                j("j7"): Impact.DIRECT,
                ds("g"): Impact.DIRECT,
            },
        ),
        (
            "a nested field's change reaches what its top-level column reaches",
            DriftSubject(ds("a"), ("s.amount",)),
            {
                c("b.s"): Impact.DIRECT,
                ds("b"): Impact.DIRECT,
                j("j1"): Impact.DIRECT,
                j("j7"): Impact.DIRECT,
                ds("g"): Impact.DIRECT,
            },
        ),
        (
            "a contract drift of a.k seen by j10 reaches only what j10 carries it to",
            DriftSubject(ds("a"), ("k",), consumer=j("j10")),
            {c("z.k"): Impact.DIRECT, ds("z"): Impact.DIRECT, j("j10"): Impact.DIRECT},
        ),
        (
            "a contract drift of a consumer without column lineage: the table walk through it",
            DriftSubject(ds("a"), ("k",), consumer=j("j7")),
            {j("j7"): Impact.DIRECT, ds("g"): Impact.DIRECT},
        ),
        (
            "an added column nothing reads reaches only the readers without column lineage",
            DriftSubject(ds("a"), ("new",)),
            {j("j7"): Impact.DIRECT, ds("g"): Impact.DIRECT},
        ),
    ],
)
def test_drift_impact(title: str, subject: DriftSubject, expected: dict[str, Impact]) -> None:
    assert _reached(subject) == expected, title


def test_the_column_path_of_a_drift_names_each_job() -> None:
    answer = drift_impact(
        DriftSubject(ds("a"), ("x",)), Columns(EDGES), EdgeIndex(TABLE_EDGES), 10, 1_000
    )
    (node,) = [n for n in answer.nodes if n.id == c("c.y")]
    assert node.path == [c("a.x"), j("j1"), c("b.x"), j("j2"), c("c.y")]
    assert node.path_edges == ["direct:IDENTITY", "direct:TRANSFORMATION"]


def test_max_nodes_cuts_the_answer_and_says_so() -> None:
    answer = drift_impact(
        DriftSubject(ds("a"), ("x",)), Columns(EDGES), EdgeIndex(TABLE_EDGES), 10, 2
    )
    assert answer.truncated and len(answer.nodes) <= 2


def test_of_reads_an_api_drift_item() -> None:
    item = {
        "datasetId": ds("a"),
        "changes": [{"path": "k"}, {"path": "s.amount"}],
        "consumer": {"jobId": j("j10")},
    }
    assert DriftSubject.of(item) == DriftSubject(ds("a"), ("k", "s.amount"), j("j10"))
    assert DriftSubject.of({**item, "consumer": None}).consumer is None
