"""Duplicate work: fingerprints and the pairs of jobs they find, table by table."""

from __future__ import annotations

import pytest

from headwater.graph.duplicates import (
    ColumnInput,
    OutputColumn,
    Relation,
    duplicates,
    fingerprints,
)

ORDERS = "dataset:wh:orders"


def _in(field: str, kind: str = "DIRECT", subtype: str = "IDENTITY") -> ColumnInput:
    return ColumnInput(ORDERS, field, kind, subtype)


FILTER_STATUS = _in("status", "INDIRECT", "FILTER")
FILTER_REGION = _in("region", "INDIRECT", "FILTER")
GROUP_CUSTOMER = _in("customer", "INDIRECT", "GROUP_BY")


def _job(name: str, out: str, columns: dict[str, list[ColumnInput]]) -> list[OutputColumn]:
    return [
        OutputColumn(f"job:wh:{name}", f"dataset:wh:{out}", field, frozenset(inputs))
        for field, inputs in columns.items()
    ]


# Revenue per customer over paid orders, as the reference job computes it.
REVENUE = {
    "customer": [_in("customer"), GROUP_CUSTOMER, FILTER_STATUS],
    "total": [_in("amount", subtype="AGGREGATION"), GROUP_CUSTOMER, FILTER_STATUS],
}

# (title, other job's columns, relation, contained, (left share, right share),
#  (left value share, right value share)); left is job "a" (REVENUE), right job "b".
CASES = [
    (
        "same columns under other names",
        {"cust": REVENUE["customer"], "revenue": REVENUE["total"]},
        Relation.EQUAL,
        None,
        (1.0, 1.0),
        (1.0, 1.0),
    ),
    (
        "inputs in another order, types in lower case",
        {
            "customer": [FILTER_STATUS, _in("customer", "direct", "identity"), GROUP_CUSTOMER],
            "total": list(reversed(REVENUE["total"])),
        },
        Relation.EQUAL,
        None,
        (1.0, 1.0),
        (1.0, 1.0),
    ),
    (
        "another filter column",
        {
            "customer": [_in("customer"), GROUP_CUSTOMER, FILTER_REGION],
            "total": [_in("amount", subtype="AGGREGATION"), GROUP_CUSTOMER, FILTER_REGION],
        },
        Relation.PARTIAL,
        None,
        (0.0, 0.0),
        (1.0, 1.0),
    ),
    (
        "no filter at all",
        {
            "customer": [_in("customer"), GROUP_CUSTOMER],
            "total": [_in("amount", subtype="AGGREGATION"), GROUP_CUSTOMER],
        },
        Relation.PARTIAL,
        None,
        (0.0, 0.0),
        (1.0, 1.0),
    ),
    (
        "a superset: one more column",
        {**REVENUE, "orders": [_in("id", subtype="AGGREGATION"), GROUP_CUSTOMER, FILTER_STATUS]},
        Relation.CONTAINS,
        "job:wh:a",
        (1.0, 2 / 3),
        (1.0, 2 / 3),
    ),
    (
        "a subset: one of the two columns",
        {"total": REVENUE["total"]},
        Relation.CONTAINS,
        "job:wh:b",
        (0.5, 1.0),
        (0.5, 1.0),
    ),
    (
        "half the columns, the other half otherwise computed",
        {
            "customer": REVENUE["customer"],
            "total": [_in("amount", subtype="TRANSFORMATION"), GROUP_CUSTOMER, FILTER_STATUS],
        },
        Relation.PARTIAL,
        None,
        (0.5, 0.5),
        (0.5, 0.5),
    ),
]


@pytest.mark.parametrize(
    ("other", "relation", "contained", "shares", "value_shares"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_a_pair_of_jobs(
    other: dict[str, list[ColumnInput]],
    relation: Relation,
    contained: str | None,
    shares: tuple[float, float],
    value_shares: tuple[float, float],
) -> None:
    (pair,) = duplicates(_job("a", "x", REVENUE) + _job("b", "y", other), min_share=0.1)
    assert pair.relation is relation
    assert pair.contained == contained
    assert (pair.left.job, pair.right.job) == ("job:wh:a", "job:wh:b")
    assert (pair.left.share, pair.right.share) == pytest.approx(shares)
    assert (pair.left.value_share, pair.right.value_share) == pytest.approx(value_shares)


def test_matches_name_both_columns_and_how() -> None:
    other = {
        "cust": REVENUE["customer"],
        "revenue": [_in("amount", subtype="AGGREGATION"), GROUP_CUSTOMER, FILTER_REGION],
    }
    (pair,) = duplicates(_job("a", "x", REVENUE) + _job("b", "y", other))
    assert pair.left.matches == (
        ("dataset:wh:x:customer", "dataset:wh:y:cust", "exact"),
        ("dataset:wh:x:total", "dataset:wh:y:revenue", "values"),
    )


@pytest.mark.parametrize(
    ("other", "found"),
    [
        # Different inputs altogether: never a candidate.
        ({"n": [_in("qty")]}, False),
        # count(*) over other rows shares no value part worth matching.
        ({"n": [FILTER_REGION]}, False),
        # A column of literals has no fingerprint; the rest matches.
        ({**REVENUE, "loaded_at": []}, True),
    ],
)
def test_what_is_not_a_duplicate(other: dict[str, list[ColumnInput]], found: bool) -> None:
    mine = {**REVENUE, "n": [FILTER_STATUS]}
    assert bool(duplicates(_job("a", "x", mine) + _job("b", "y", other), min_share=0.1)) is found


def test_min_share_and_the_job_filter() -> None:
    columns = (
        _job("a", "x", REVENUE)
        + _job("b", "y", {"total": REVENUE["total"], "other": [_in("qty")], "more": [_in("id")]})
        + _job("c", "z", REVENUE)
    )
    pairs = duplicates(columns, min_share=0.0)
    assert [(p.left.job, p.right.job, p.relation) for p in pairs] == [
        ("job:wh:a", "job:wh:c", Relation.EQUAL),
        ("job:wh:a", "job:wh:b", Relation.PARTIAL),
        ("job:wh:b", "job:wh:c", Relation.PARTIAL),
    ]
    assert [(p.left.job, p.right.job) for p in duplicates(columns, min_share=0.6)] == [
        ("job:wh:a", "job:wh:c")
    ]
    only_b = duplicates(columns, min_share=0.0, jobs=["job:wh:b"])
    assert {(p.left.job, p.right.job) for p in only_b} == {
        ("job:wh:a", "job:wh:b"),
        ("job:wh:b", "job:wh:c"),
    }


def test_one_job_writing_two_equal_outputs_is_no_pair() -> None:
    assert duplicates(_job("a", "x", REVENUE) + _job("a", "y", REVENUE)) == []


def test_fingerprints_split_value_and_rows() -> None:
    (column,) = _job("a", "x", {"total": REVENUE["total"]})
    fp = fingerprints([column])[column]
    assert fp.value == {_in("amount", subtype="AGGREGATION")}
    assert fp.rows == {GROUP_CUSTOMER, FILTER_STATUS}
