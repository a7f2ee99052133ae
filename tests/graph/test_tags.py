"""Tag propagation: one titled (seeds, edges, blocks) -> expected pair per case.

Columns are short names (``raw.email``); each expected propagated tag is
(column, tag, origin, [hop targets, upstream first]) and each expected stop is
(tag, edge source, edge target, reason).
"""

from __future__ import annotations

import itertools
import random

import pytest

from headwater.graph.tags import (
    Block,
    ColumnEdge,
    Propagation,
    Seed,
    propagate,
    propagates,
)


def e(source: str, target: str, job: str = "j", kind: str = "DIRECT",
      subtype: str = "IDENTITY", masking: bool = False) -> ColumnEdge:
    return ColumnEdge(source, target, job, kind, subtype, masking)


def pii(column: str, origin: str | None = None, tag: str = "PII") -> Seed:
    return Seed(column, tag, origin or column)


Expected = list[tuple[str, str, str, list[str]]]
Stops = list[tuple[str, str, str, str]]

CASES: list[tuple[str, list[Seed], list[ColumnEdge], list[Block], Expected, Stops]] = [
    ("no edges: nothing propagates",
     [pii("raw.email")], [], [], [], []),
    ("identity copy carries the tag one hop",
     [pii("raw.email")], [e("raw.email", "silver.email")], [],
     [("silver.email", "PII", "raw.email", ["silver.email"])], []),
    ("transitive: two jobs, two hops, the path names both",
     [pii("raw.email")],
     [e("raw.email", "silver.email", "j1"), e("silver.email", "gold.contact", "j2",
                                              subtype="TRANSFORMATION")], [],
     [("gold.contact", "PII", "raw.email", ["silver.email", "gold.contact"]),
      ("silver.email", "PII", "raw.email", ["silver.email"])], []),
    ("aggregation still copies values",
     [pii("raw.email")], [e("raw.email", "agg.emails", subtype="AGGREGATION")], [],
     [("agg.emails", "PII", "raw.email", ["agg.emails"])], []),
    ("no transformation given (old facet): carried",
     [pii("raw.email")], [e("raw.email", "x.email", kind="", subtype="")], [],
     [("x.email", "PII", "raw.email", ["x.email"])], []),
    ("INDIRECT (filter, join) copies nothing and records nothing",
     [pii("raw.email")], [e("raw.email", "x.total", kind="INDIRECT", subtype="FILTER")], [],
     [], []),
    ("masking edge stops it, and the stop is recorded",
     [pii("raw.email")], [e("raw.email", "x.email_hash", subtype="TRANSFORMATION",
                            masking=True)], [],
     [], [("PII", "raw.email", "x.email_hash", "masking")]),
    ("masking stops only its own branch",
     [pii("raw.email")],
     [e("raw.email", "x.hash", masking=True), e("raw.email", "y.email"),
      e("x.hash", "z.hash")], [],
     [("y.email", "PII", "raw.email", ["y.email"])],
     [("PII", "raw.email", "x.hash", "masking")]),
    ("a masked and an unmasked edge into one column: still a copy",
     [pii("raw.email")],
     [e("raw.email", "x.email", subtype="IDENTITY"),
      e("raw.email", "x.email", subtype="TRANSFORMATION", masking=True)], [],
     [("x.email", "PII", "raw.email", ["x.email"])],
     [("PII", "raw.email", "x.email", "masking")]),
    ("per-edge block stops that edge only",
     [pii("raw.email")], [e("raw.email", "x.email"), e("raw.email", "x.email2")],
     [Block(7, "j", "raw.email", "x.email")],
     [("x.email2", "PII", "raw.email", ["x.email2"])],
     [("PII", "raw.email", "x.email", "blocked")]),
    ("per-job block stops every edge of the job, not other jobs'",
     [pii("raw.email")], [e("raw.email", "x.email", "j1"), e("raw.email", "y.email", "j2")],
     [Block(1, "j1")],
     [("y.email", "PII", "raw.email", ["y.email"])],
     [("PII", "raw.email", "x.email", "blocked")]),
    ("a block for another tag does not stop this one",
     [pii("raw.email")], [e("raw.email", "x.email")], [Block(1, "j", tag="GDPR")],
     [("x.email", "PII", "raw.email", ["x.email"])], []),
    ("a cycle terminates",
     [pii("a.x")], [e("a.x", "b.x"), e("b.x", "a.x")], [],
     [("b.x", "PII", "a.x", ["b.x"])], []),
    ("two tags walk independently; a block on one leaves the other",
     [pii("raw.email"), pii("raw.email", tag="GDPR")], [e("raw.email", "x.email")],
     [Block(3, "j", tag="PII")],
     [("x.email", "GDPR", "raw.email", ["x.email"])],
     [("PII", "raw.email", "x.email", "blocked")]),
    ("a dataset-level tag seeds its columns, one walk for the dataset origin",
     [pii("raw.email", "raw"), pii("raw.name", "raw")],
     [e("raw.email", "x.email"), e("raw.name", "x.name")], [],
     [("x.email", "PII", "raw", ["x.email"]), ("x.name", "PII", "raw", ["x.name"])], []),
    ("shortest path wins; equal lengths: the first in edge order",
     [pii("a")], [e("a", "b"), e("b", "d"), e("a", "c"), e("c", "d"), e("a", "d", "k")], [],
     [("b", "PII", "a", ["b"]), ("c", "PII", "a", ["c"]), ("d", "PII", "a", ["d"])], []),
]


@pytest.mark.parametrize(("title", "seeds", "edges", "blocks", "expected", "stops"), CASES,
                         ids=[case[0] for case in CASES])
def test_propagation(title: str, seeds: list[Seed], edges: list[ColumnEdge],
                     blocks: list[Block], expected: Expected, stops: Stops) -> None:
    result = propagate(seeds, edges, blocks)
    got = [(p.column, p.tag, p.origin, [hop.target for hop in p.path]) for p in result.tags]
    assert got == expected
    assert [(s.tag, s.edge.source, s.edge.target, s.reason) for s in result.stops] == stops
    assert not result.truncated


def test_blocked_stop_names_its_block() -> None:
    result = propagate([pii("a")], [e("a", "b")], [Block(42, "j", "a", "b")])
    assert [s.block for s in result.stops] == [42]


def test_provenance_names_job_and_transformation() -> None:
    result = propagate([pii("raw.customers.email")],
                       [e("raw.customers.email", "silver.customers.email", "job:ns:silver",
                          subtype="IDENTITY")])
    (item,) = result.tags
    assert item.as_dict()["path"] == [{
        "source": "raw.customers.email", "target": "silver.customers.email",
        "job": "job:ns:silver", "transformationType": "DIRECT",
        "transformationSubtype": "IDENTITY", "masking": False}]


def test_max_nodes_truncates() -> None:
    chain = [e(f"c{i}", f"c{i + 1}") for i in range(10)]
    result = propagate([pii("c0")], chain, max_nodes=3)
    assert result.truncated and len(result.tags) == 3


@pytest.mark.parametrize(("tag", "definitions", "expected"), [
    ("PII", {}, True), ("pii", {}, True), ("GDPR", {}, True), ("Confidential", {}, True),
    ("finance", {}, False), ("PII", {"PII": False}, False), ("finance", {"finance": True}, True),
])
def test_which_tags_propagate(tag: str, definitions: dict[str, bool], expected: bool) -> None:
    assert propagates(tag, definitions) is expected


def _random_case(rng: random.Random) -> tuple[list[Seed], list[ColumnEdge], list[Block]]:
    columns = [f"c{i}" for i in range(8)]
    edges = [e(rng.choice(columns), rng.choice(columns), rng.choice(["j1", "j2"]),
               rng.choice(["DIRECT", "INDIRECT"]), rng.choice(["IDENTITY", "HASH"]),
               rng.random() < 0.2) for _ in range(14)]
    seeds = [pii(rng.choice(columns), tag=rng.choice(["PII", "GDPR"])) for _ in range(3)]
    blocks = [Block(i, rng.choice(["j1", "j2"]), tag=rng.choice([None, "PII"]))
              for i in range(rng.randint(0, 1))]
    return seeds, edges, blocks


def test_answer_is_a_function_of_the_sets() -> None:
    rng = random.Random(7)
    for _ in range(200):
        seeds, edges, blocks = _random_case(rng)
        expected: Propagation = propagate(seeds, edges, blocks)
        for _ in range(3):
            shuffled = edges + rng.sample(edges, k=len(edges) // 2)  # repeats too
            rng.shuffle(shuffled)
            again = propagate(list(reversed(seeds)) * 2, shuffled, blocks[::-1])
            assert again == expected


def test_every_reached_column_is_reachable_through_carrying_edges() -> None:
    rng = random.Random(11)
    for _ in range(100):
        seeds, edges, blocks = _random_case(rng)
        result = propagate(seeds, edges, blocks)
        for item in result.tags:
            assert all(not hop.masking and hop.transformation_type != "INDIRECT"
                       for hop in item.path)
            for first, second in itertools.pairwise(item.path):
                assert first.target == second.source
