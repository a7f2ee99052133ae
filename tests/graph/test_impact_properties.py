"""The impact walk on random column graphs against the definition it implements.

A column is **directly** impacted at the depth of its shortest all-direct path from
the start (when one exists within ``depth``), else **indirectly** at the depth of its
shortest path of any kind; a dataset takes the best of its reached columns. The
expected answer here comes from two plain breadth-first distances over the fanned-out
edges, computed without the walk's (node, impact) states, pruning or bookkeeping.
Each answered path is checked edge by edge, and ``max_nodes`` against the uncut answer.
"""

from __future__ import annotations

from collections.abc import Collection

from hypothesis import given, settings
from hypothesis import strategies as st

from headwater.graph.impact import Impact, ImpactAnswer, ImpactFilter, edge_impact, impact
from headwater.graph.model import Edge, NodeId, Transformation
from headwater.graph.traverse import EdgeIndex

D, I = Impact.DIRECT, Impact.INDIRECT  # noqa: E741 - the kinds' initials
DATASETS = ["a", "b", "c", "d", "e"]
FIELDS = ["f0", "f1", "f2"]
# Dataset "e" has no known fields: a dataset-level entry into it stops at the dataset.
KNOWN = {
    f"dataset:w:{name}": [f"datasetField:w:{name}:{f}" for f in FIELDS]
    for name in DATASETS
    if name != "e"
}
KINDS = [("DIRECT", "IDENTITY"), ("DIRECT", None), ("INDIRECT", "FILTER"), ("INDIRECT", "JOIN")]


class Columns(EdgeIndex):
    def fields_of(self, dataset_ids: Collection[str]) -> list[str]:
        return [f for d in dataset_ids for f in KNOWN.get(d, [])]


def _field(draw: st.DrawFn) -> str:
    return f"datasetField:w:{draw(st.sampled_from(DATASETS[:4]))}:{draw(st.sampled_from(FIELDS))}"


@st.composite
def graphs(draw: st.DrawFn) -> list[Edge]:
    edges, seen = [], set()
    for _ in range(draw(st.integers(0, 25))):
        up = _field(draw)
        if draw(st.integers(0, 5)) == 0:  # a dataset-level entry
            down = f"dataset:w:{draw(st.sampled_from(DATASETS))}"
        else:
            down = _field(draw)
        via = f"job:w:j{draw(st.integers(0, 3))}"
        if down == up or (up, down, via) in seen:
            continue  # the store answers one edge per (upstream, downstream, job)
        seen.add((up, down, via))
        kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=2, unique=True))
        trs = tuple(Transformation(kind, subtype) for kind, subtype in kinds)
        edges.append(Edge(up, down, via, trs))
    return edges


def _fanned(edges: list[Edge]) -> list[Edge]:
    out = []
    for e in edges:
        targets = (
            KNOWN.get(e.downstream, [e.downstream])
            if e.downstream.startswith("dataset:")
            else [e.downstream]
        )
        out += [Edge(e.upstream, t, e.via, e.transformations) for t in targets]
    return out


def _distances(
    edges: list[Edge], start: str, kinds: frozenset[Impact], direct_only: bool
) -> dict[str, int]:
    """Fewest edges from ``start`` to each node, over admitted (and, with
    ``direct_only``, direct) edges; a dataset node ends a path."""
    dist = {start: 0}
    frontier = [start]
    while frontier:
        nxt = []
        for e in edges:
            if e.upstream not in frontier or e.downstream in dist:
                continue
            kind = edge_impact(e)
            if kind not in kinds or (direct_only and kind is not D):
                continue
            dist[e.downstream] = dist[e.upstream] + 1
            if not e.downstream.startswith("dataset:"):
                nxt.append(e.downstream)
        frontier = nxt
    return dist


def _dataset_of(node_id: str) -> str:
    return str(NodeId.parse(node_id).dataset_id)


def _expected(
    edges: list[Edge], start: str, depth: int, kinds: frozenset[Impact]
) -> dict[str, tuple[int, Impact]]:
    fanned = _fanned(edges)
    direct = _distances(fanned, start, kinds, direct_only=True)
    anyhow = _distances(fanned, start, kinds, direct_only=False)
    columns: dict[str, tuple[int, Impact]] = {}
    for node, d in anyhow.items():
        if node == start:
            continue
        if node in direct and direct[node] <= depth:
            columns[node] = (direct[node], D)
        elif d <= depth:
            columns[node] = (d, I)
    expected = {n: v for n, v in columns.items() if not n.startswith("dataset:")}
    excluded = _dataset_of(start)
    for node, (d, kind) in columns.items():
        dataset = _dataset_of(node)
        if dataset == excluded:
            continue
        known = expected.get(dataset)
        # A direct arrival beats any indirect one; among one kind, the shallowest.
        if known is None or (known[1] is I and kind is D) or (known[1] is kind and d < known[0]):
            expected[dataset] = (d, kind)
    return expected


def _check_paths(answer: ImpactAnswer, edges: list[Edge], start: str) -> None:
    fanned = {(e.upstream, e.downstream, e.via): edge_impact(e) for e in _fanned(edges)}
    for node in answer.nodes:
        hops = node.hops
        assert hops and hops[0].upstream == start
        for before, after in zip(hops, hops[1:], strict=False):
            assert before.downstream == after.upstream
        for hop in hops:
            if hop.downstream.startswith("job:"):  # the last step into a job
                assert hop is hops[-1] and hop.downstream == node.id
                continue
            assert fanned[(hop.upstream, hop.downstream, hop.via)] is hop.impact
        # One hop per job crossed; a job's path ends with the step into it.
        assert len(hops) == node.depth
        impacts = {h.impact for h in hops}
        assert node.impact is (I if I in impacts else D)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    graphs(),
    st.sampled_from(DATASETS[:4]),
    st.sampled_from(FIELDS),
    st.integers(0, 5),
    st.sampled_from([frozenset(Impact), frozenset({D}), frozenset({I})]),
)
def test_columns_and_datasets_are_reached_as_defined(
    edges: list[Edge], dataset: str, field: str, depth: int, kinds: frozenset[Impact]
) -> None:
    start = f"datasetField:w:{dataset}:{field}"
    answer = impact(
        Columns(edges), start, depth, max_nodes=100_000, filters=ImpactFilter(kinds=kinds)
    )
    reached = {n.id: (n.depth, n.impact) for n in answer.nodes if not n.id.startswith("job:")}
    assert reached == _expected(edges, start, depth, kinds)
    assert not answer.truncated
    _check_paths(answer, edges, start)
    # Every job answered is crossed by an admitted edge out of a reached column.
    jobs = {n.id for n in answer.nodes if n.id.startswith("job:")}
    assert jobs <= {e.via for e in edges if edge_impact(e) in kinds}


@settings(max_examples=100, deadline=None, derandomize=True)
@given(graphs(), st.sampled_from(FIELDS), st.integers(1, 5), st.integers(1, 12))
def test_max_nodes_keeps_a_part_of_the_whole_answer(
    edges: list[Edge], field: str, depth: int, max_nodes: int
) -> None:
    start = f"datasetField:w:a:{field}"
    whole = impact(Columns(edges), start, depth, max_nodes=100_000)
    cut = impact(Columns(edges), start, depth, max_nodes=max_nodes)
    assert len(cut.nodes) <= max_nodes
    assert cut.truncated == (len(whole.nodes) > max_nodes)
    assert {n.id for n in cut.nodes} <= {n.id for n in whole.nodes}
    kept = {n.id for n in cut.nodes} | {start}
    for node in cut.nodes:
        assert set(node.path) <= kept
    _check_paths(cut, edges, start)
