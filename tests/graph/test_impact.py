"""The impact walk on a hand-built graph: each case lists every impacted node, its depth
and how it is reached.

Column edges (namespace ``w``; D = DIRECT, I = INDIRECT)::

    a.x ─D─▶ b.x (j1)          b.x ─D─▶ c.y (j2)
    a.k ─I FILTER─▶ b.x (j1)   b.k ─I JOIN─▶ c.y (j2)
    a.k ─D─▶ b.k (j1)
    a.f ─I FILTER─▶ dataset d (j3, a dataset-level entry; d has fields p, q)
    d.p ─D─▶ e.p (j4)
    a.m ─I─▶ c.m (j5)          a.m ─D─▶ b.m (j1) ─D─▶ c.m (j2)    c.m ─D─▶ f.m (j6)
    a.u ─I─▶ dataset h (j8; h has no known fields)
    x.a ─D─▶ y.a (j9) ─D─▶ x.a (j9)   (a cycle)

Table edges: a ─▶ j1 ─▶ b ─▶ j2 ─▶ c, and a ─▶ j7 ─▶ g (j7 reports no column lineage).
"""

from __future__ import annotations

from collections.abc import Collection

import pytest

from headwater.graph.impact import Hop, Impact, ImpactFilter, edge_impact, impact
from headwater.graph.model import Edge, NodeId, Transformation
from headwater.graph.traverse import EdgeIndex

D, I = Impact.DIRECT, Impact.INDIRECT  # noqa: E741 - the kinds' initials


def c(name: str) -> str:
    dataset, field = name.split(".")
    return f"datasetField:w:{dataset}:{field}"


def ds(name: str) -> str:
    return f"dataset:w:{name}"


def j(name: str) -> str:
    return f"job:w:{name}"


def _edge(up: str, down: str, via: str, kind: str, subtype: str | None = None) -> Edge:
    return Edge(up, down, j(via), (Transformation(kind, subtype),))


COLUMN_EDGES = [
    _edge(c("a.x"), c("b.x"), "j1", "DIRECT", "IDENTITY"),
    _edge(c("a.k"), c("b.x"), "j1", "INDIRECT", "FILTER"),
    _edge(c("a.k"), c("b.k"), "j1", "DIRECT", "IDENTITY"),
    _edge(c("b.x"), c("c.y"), "j2", "DIRECT", "TRANSFORMATION"),
    _edge(c("b.k"), c("c.y"), "j2", "INDIRECT", "JOIN"),
    _edge(c("a.f"), ds("d"), "j3", "INDIRECT", "FILTER"),
    _edge(c("d.p"), c("e.p"), "j4", "DIRECT"),
    _edge(c("a.m"), c("c.m"), "j5", "INDIRECT", "GROUP_BY"),
    _edge(c("a.m"), c("b.m"), "j1", "DIRECT"),
    _edge(c("b.m"), c("c.m"), "j2", "DIRECT"),
    _edge(c("c.m"), c("f.m"), "j6", "DIRECT"),
    _edge(c("a.u"), ds("h"), "j8", "INDIRECT", "JOIN"),
    _edge(c("x.a"), c("y.a"), "j9", "DIRECT"),
    _edge(c("y.a"), c("x.a"), "j9", "DIRECT"),
]
FIELDS = {
    ds("a"): ["x", "k", "f", "m", "u"],
    ds("d"): ["p", "q"],
}
TABLE_EDGES = [
    Edge(ds("a"), j("j1")), Edge(j("j1"), ds("b")),
    Edge(ds("b"), j("j2")), Edge(j("j2"), ds("c")),
    Edge(ds("a"), j("j7")), Edge(j("j7"), ds("g")),
]


class Columns(EdgeIndex):
    """Column edges and the fields of datasets, in memory."""

    def fields_of(self, dataset_ids: Collection[str]) -> list[str]:
        return [f"datasetField:w:{NodeId.parse(d).name}:{f}" for d in dataset_ids
                for f in FIELDS.get(d, [])]


def _reached(answer) -> dict[str, tuple[int, Impact]]:  # type: ignore[no-untyped-def]
    return {n.id: (n.depth, n.impact) for n in answer.nodes}


CASES = [
    (
        "direct chain",
        c("a.x"), 10, ImpactFilter(),
        {c("b.x"): (1, D), ds("b"): (1, D), j("j1"): (1, D),
         c("c.y"): (2, D), ds("c"): (2, D), j("j2"): (2, D)},
    ),
    (
        "a filter column reaches what it filters indirectly, and onwards",
        c("a.k"), 10, ImpactFilter(),
        {c("b.x"): (1, I), c("b.k"): (1, D), ds("b"): (1, D), j("j1"): (1, D),
         c("c.y"): (2, I), ds("c"): (2, I), j("j2"): (2, I)},
    ),
    (
        "a dataset-level entry fans out to every field of its target",
        c("a.f"), 10, ImpactFilter(),
        {c("d.p"): (1, I), c("d.q"): (1, I), ds("d"): (1, I), j("j3"): (1, I),
         c("e.p"): (2, I), ds("e"): (2, I), j("j4"): (2, I)},
    ),
    (
        "a dataset-level entry to a dataset without known fields stops at the dataset",
        c("a.u"), 10, ImpactFilter(),
        {ds("h"): (1, I), j("j8"): (1, I)},
    ),
    (
        "a longer direct path wins over a shorter indirect one; beyond it, within depth",
        c("a.m"), 2, ImpactFilter(),
        {c("c.m"): (2, D), ds("c"): (2, D), j("j5"): (1, I), j("j2"): (2, D),
         c("b.m"): (1, D), ds("b"): (1, D), j("j1"): (1, D),
         # only the depth-1 indirect path leaves room for one more edge
         c("f.m"): (2, I), ds("f"): (2, I), j("j6"): (2, I)},
    ),
    (
        "one more level reaches f.m directly",
        c("a.m"), 3, ImpactFilter(),
        {c("c.m"): (2, D), ds("c"): (2, D), j("j5"): (1, I), j("j2"): (2, D),
         c("b.m"): (1, D), ds("b"): (1, D), j("j1"): (1, D),
         c("f.m"): (3, D), ds("f"): (3, D), j("j6"): (3, D)},
    ),
    (
        "edges=direct follows only direct edges",
        c("a.k"), 10, ImpactFilter(kinds=frozenset({D})),
        {c("b.k"): (1, D), ds("b"): (1, D), j("j1"): (1, D)},
    ),
    (
        "edges=indirect follows only indirect edges",
        c("a.k"), 10, ImpactFilter(kinds=frozenset({I})),
        {c("b.x"): (1, I), ds("b"): (1, I), j("j1"): (1, I)},
    ),
    (
        "a job filter",
        c("a.m"), 10, ImpactFilter(jobs=frozenset({j("j5"), j("j6")})),
        {c("c.m"): (1, I), ds("c"): (1, I), j("j5"): (1, I),
         c("f.m"): (2, I), ds("f"): (2, I), j("j6"): (2, I)},
    ),
    (
        "a namespace filter that excludes everything downstream",
        c("a.x"), 10, ImpactFilter(namespaces=frozenset({"elsewhere"})),
        {},
    ),
    ("depth 0 reaches nothing", c("a.x"), 0, ImpactFilter(), {}),
    (
        "a cycle ends, and the start is never its own impact",
        c("x.a"), 10, ImpactFilter(),
        {c("y.a"): (1, D), ds("y"): (1, D), j("j9"): (1, D)},
    ),
]


@pytest.mark.parametrize(
    ("start", "depth", "filters", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_impact(start: str, depth: int, filters: ImpactFilter, expected: dict[str, object]) -> None:
    answer = impact(Columns(COLUMN_EDGES), start, depth, filters=filters)
    assert _reached(answer) == expected
    assert not answer.truncated


def test_paths_go_from_the_start_through_jobs_and_columns() -> None:
    answer = impact(Columns(COLUMN_EDGES), c("a.k"), 10)
    by_id = {n.id: n for n in answer.nodes}
    # Two shortest paths reach c.y, both indirect; the one through the directly
    # reached column comes first.
    assert by_id[c("c.y")].path == [c("a.k"), j("j1"), c("b.k"), j("j2"), c("c.y")]
    assert by_id[c("c.y")].hops == (
        Hop(c("a.k"), c("b.k"), j("j1"), D, ("IDENTITY",)),
        Hop(c("b.k"), c("c.y"), j("j2"), I, ("JOIN",)),
    )
    assert by_id[c("b.x")].hops == (Hop(c("a.k"), c("b.x"), j("j1"), I, ("FILTER",)),)
    assert by_id[c("c.y")].path_edges == ["direct:IDENTITY", "indirect:JOIN"]
    assert by_id[j("j2")].path_edges == ["direct:IDENTITY", "indirect:JOIN"]
    # A dataset's path ends at it, after its best-reached column; a job's at the job.
    assert by_id[ds("b")].path == [c("a.k"), j("j1"), c("b.k"), ds("b")]
    assert by_id[j("j2")].path == [c("a.k"), j("j1"), c("b.k"), j("j2")]


def test_a_direct_node_shows_its_direct_path() -> None:
    answer = impact(Columns(COLUMN_EDGES), c("a.m"), 3)
    by_id = {n.id: n for n in answer.nodes}
    assert by_id[c("c.m")].path == [c("a.m"), j("j1"), c("b.m"), j("j2"), c("c.m")]
    assert [h.impact for h in by_id[c("c.m")].hops] == [D, D]


def test_a_dataset_start_walks_all_its_fields_and_table_lineage() -> None:
    answer = impact(Columns(COLUMN_EDGES), ds("a"), 10, tables=EdgeIndex(TABLE_EDGES))
    reached = _reached(answer)
    # Columns decide where column lineage exists ...
    assert reached[c("b.x")] == (1, D)
    assert reached[c("d.q")] == (1, I)
    assert reached[ds("c")] == (2, D)
    # ... and table lineage adds the outputs of jobs that report none, as direct.
    assert reached[j("j7")] == (1, D)
    assert reached[ds("g")] == (1, D)
    by_id = {n.id: n for n in answer.nodes}
    assert by_id[ds("g")].path == [ds("a"), j("j7"), ds("g")]
    assert by_id[j("j7")].path == [ds("a"), j("j7")]
    assert ds("a") not in reached and c("a.x") not in reached
    summary = answer.summary()
    assert summary["datasets"] == len([n for n in reached if n.startswith("dataset:")])
    assert summary["direct"] + summary["indirect"] == len(reached)


def test_max_nodes_cuts_and_says_so() -> None:
    answer = impact(Columns(COLUMN_EDGES), c("a.k"), 10, max_nodes=3)
    assert answer.truncated
    assert len(answer.nodes) <= 3
    # What is kept is complete: every node on a kept node's path is kept too.
    kept = {n.id for n in answer.nodes} | {c("a.k")}
    for node in answer.nodes:
        assert set(node.path) <= kept


def test_summary_counts_types_and_kinds() -> None:
    summary = impact(Columns(COLUMN_EDGES), c("a.k"), 10).summary()
    assert summary == {"datasets": 2, "columns": 3, "jobs": 2, "direct": 3, "indirect": 4}


@pytest.mark.parametrize(
    ("types", "expected"),
    [((), D), (("DIRECT",), D), (("INDIRECT",), I), (("INDIRECT", "DIRECT"), D), (("",), D)],
)
def test_edge_impact(types: tuple[str, ...], expected: Impact) -> None:
    edge = Edge("a", "b", None, tuple(Transformation(t) for t in types))
    assert edge_impact(edge) is expected


def test_start_must_be_a_dataset_or_a_column() -> None:
    with pytest.raises(ValueError, match="dataset or a dataset field"):
        impact(Columns(COLUMN_EDGES), j("j1"), 3)
