"""Schema diff and classification: one titled (old, new) -> expected changes pair per case.

Each expected change is (kind, path, old, new, new_path); the breaking flag follows
from the kind and is checked by its own table.
"""

from __future__ import annotations

from typing import Any

import pytest

from headwater.graph.drift import (
    BREAKING_KINDS,
    Change,
    ChangeKind,
    TypeChange,
    compare_types,
    diff_schemas,
)


def f(name: str, type_: str | None = "string", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, **extra}
    if type_ is not None:
        out["type"] = type_
    return out


K = ChangeKind
Expected = list[tuple[ChangeKind, str, str | None, str | None, str | None]]

CASES: list[tuple[str, list[Any], list[Any], Expected]] = [
    ("identical schemas: nothing",
     [f("id", "long"), f("name")], [f("id", "long"), f("name")], []),
    ("type spelled differently (case, alias): nothing",
     [f("id", "INTEGER"), f("v", "decimal")], [f("id", "int"), f("v", "DECIMAL(10, 0)")], []),
    ("description changes are not structural",
     [f("id", "long", description="a")], [f("id", "long", description="b")], []),
    ("field appended",
     [f("id", "long")], [f("id", "long"), f("email")],
     [(K.ADDED, "email", None, "string", None)]),
    ("field removed",
     [f("id", "long"), f("email")], [f("id", "long")],
     [(K.REMOVED, "email", "string", None, None)]),
    ("same position, same type, new name: possible rename",
     [f("id", "long"), f("mail")], [f("id", "long"), f("email")],
     [(K.POSSIBLE_RENAME, "mail", "string", "string", "email")]),
    ("same position, different type: a removal and an addition, not a rename",
     [f("id", "long"), f("mail")], [f("id", "long"), f("count", "int")],
     [(K.ADDED, "count", None, "int", None), (K.REMOVED, "mail", "string", None, None)]),
    ("same type, different position: a removal and an addition (reordering is no change)",
     [f("a"), f("b"), f("c")], [f("a"), f("c"), f("x")],
     [(K.REMOVED, "b", "string", None, None), (K.ADDED, "x", None, "string", None)]),
    ("int -> long widens",
     [f("n", "int")], [f("n", "bigint")], [(K.TYPE_WIDENED, "n", "int", "bigint", None)]),
    ("long -> int narrows",
     [f("n", "long")], [f("n", "int")], [(K.TYPE_NARROWED, "n", "long", "int", None)]),
    ("float -> double widens",
     [f("x", "float")], [f("x", "double")], [(K.TYPE_WIDENED, "x", "float", "double", None)]),
    ("double -> float narrows",
     [f("x", "double")], [f("x", "FLOAT")], [(K.TYPE_NARROWED, "x", "double", "FLOAT", None)]),
    ("decimal(10,2) -> decimal(12,4) widens (integer digits kept)",
     [f("p", "decimal(10,2)")], [f("p", "decimal(12,4)")],
     [(K.TYPE_WIDENED, "p", "decimal(10,2)", "decimal(12,4)", None)]),
    ("decimal(10,2) -> decimal(10,4) loses integer digits: narrowing is not claimed, incompatible",
     [f("p", "decimal(10,2)")], [f("p", "decimal(10,4)")],
     [(K.TYPE_CHANGED, "p", "decimal(10,2)", "decimal(10,4)", None)]),
    ("decimal(12,4) -> decimal(10,2) narrows",
     [f("p", "decimal(12,4)")], [f("p", "decimal(10,2)")],
     [(K.TYPE_NARROWED, "p", "decimal(12,4)", "decimal(10,2)", None)]),
    ("int -> string widens",
     [f("z", "int")], [f("z", "string")], [(K.TYPE_WIDENED, "z", "int", "string", None)]),
    ("string -> int narrows",
     [f("z", "string")], [f("z", "int")], [(K.TYPE_NARROWED, "z", "string", "int", None)]),
    ("varchar(20) -> string widens; string -> varchar(20) narrows",
     [f("a", "varchar(20)"), f("b", "string")], [f("a", "string"), f("b", "varchar(20)")],
     [(K.TYPE_WIDENED, "a", "varchar(20)", "string", None),
      (K.TYPE_NARROWED, "b", "string", "varchar(20)", None)]),
    ("int -> date is incompatible",
     [f("d", "int")], [f("d", "date")], [(K.TYPE_CHANGED, "d", "int", "date", None)]),
    ("boolean -> long is incompatible",
     [f("d", "boolean")], [f("d", "long")], [(K.TYPE_CHANGED, "d", "boolean", "long", None)]),
    ("date -> timestamp widens",
     [f("d", "date")], [f("d", "timestamp")], [(K.TYPE_WIDENED, "d", "date", "timestamp", None)]),
    ("a missing type is no evidence of a type change",
     [f("d", None)], [f("d", "int")], []),
    ("nullable -> required breaks",
     [f("id", "long", nullable=True)], [f("id", "long", nullable=False)],
     [(K.BECAME_REQUIRED, "id", "nullable", "required", None)]),
    ("required -> nullable is compatible",
     [f("id", "long", nullable=False)], [f("id", "long", nullable=True)],
     [(K.BECAME_NULLABLE, "id", "required", "nullable", None)]),
    ("nullability stated on one side only: nothing",
     [f("id", "long")], [f("id", "long", nullable=False)], []),
    ("nested field added and nested type changed, at depth 2",
     [f("address", "struct", fields=[f("city"), f("geo", "struct", fields=[f("lat", "float")])])],
     [f("address", "struct", fields=[f("city"), f("zip"),
                                     f("geo", "struct", fields=[f("lat", "double")])])],
     [(K.TYPE_WIDENED, "address.geo.lat", "float", "double", None),
      (K.ADDED, "address.zip", None, "string", None)]),
    ("nested field removed",
     [f("address", "struct", fields=[f("city"), f("zip")])],
     [f("address", "struct", fields=[f("city")])],
     [(K.REMOVED, "address.zip", "string", None, None)]),
    ("nested rename at the same position",
     [f("address", "struct", fields=[f("city"), f("postcode")])],
     [f("address", "struct", fields=[f("city"), f("zip")])],
     [(K.POSSIBLE_RENAME, "address.postcode", "string", "string", "address.zip")]),
    ("struct type strings differ but children match: compared through the children",
     [f("a", "struct<x:int>", fields=[f("x", "int")])],
     [f("a", "STRUCT<x: INT>", fields=[f("x", "int")])], []),
    ("struct flattened to a string widens",
     [f("a", "struct", fields=[f("x", "int")])], [f("a", "string")],
     [(K.TYPE_WIDENED, "a", "struct", "string", None)]),
    ("a repeated name: the first entry counts",
     [f("a", "int")], [f("a", "int"), f("a", "string")], []),
    ("entries that are not named fields are ignored",
     [f("a", "int"), "junk", {"type": "int"}], [f("a", "int"), None], []),
    ("no schema before: every field added",
     [], [f("a", "int"), f("b")],
     [(K.ADDED, "a", None, "int", None), (K.ADDED, "b", None, "string", None)]),
]


@pytest.mark.parametrize(("old", "new", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_diff(old: list[Any], new: list[Any], expected: Expected) -> None:
    drift = diff_schemas(old, new)
    assert [(c.kind, c.path, c.old, c.new, c.new_path) for c in drift.changes] == expected
    assert drift.breaking == any(kind in BREAKING_KINDS for kind, *_ in expected)
    assert bool(drift) == bool(expected)


BREAKING: list[tuple[ChangeKind, bool]] = [
    (K.ADDED, False),
    (K.REMOVED, True),
    (K.POSSIBLE_RENAME, True),
    (K.TYPE_WIDENED, False),
    (K.TYPE_NARROWED, True),
    (K.TYPE_CHANGED, True),
    (K.BECAME_REQUIRED, True),
    (K.BECAME_NULLABLE, False),
]


@pytest.mark.parametrize(("kind", "breaking"), BREAKING, ids=[k.value for k, _ in BREAKING])
def test_classification(kind: ChangeKind, breaking: bool) -> None:
    change = Change(kind, "x")
    assert change.breaking is breaking
    assert change.as_dict()["breaking"] is breaking


def test_every_kind_is_classified() -> None:
    assert {kind for kind, _ in BREAKING} == set(ChangeKind)


TYPES: list[tuple[str, str, TypeChange]] = [
    ("tinyint", "smallint", TypeChange.WIDENING),
    ("short", "long", TypeChange.WIDENING),
    ("int", "double", TypeChange.WIDENING),
    ("long", "double", TypeChange.INCOMPATIBLE),  # a long does not fit a double exactly
    ("int", "decimal(10,0)", TypeChange.WIDENING),
    ("int", "decimal(9,0)", TypeChange.INCOMPATIBLE),
    ("long", "decimal(20,0)", TypeChange.WIDENING),
    ("decimal(20,0)", "long", TypeChange.NARROWING),
    ("timestamp", "date", TypeChange.NARROWING),
    ("Binary", "BINARY", TypeChange.SAME),
    ("varchar(10)", "VARCHAR(20)", TypeChange.WIDENING),
    ("char(10)", "varchar(5)", TypeChange.NARROWING),
    ("text", "string", TypeChange.SAME),
    ("array<int>", "array<long>", TypeChange.INCOMPATIBLE),
]


@pytest.mark.parametrize(("old", "new", "expected"), TYPES,
                         ids=[f"{o} -> {n}" for o, n, _ in TYPES])
def test_compare_types(old: str, new: str, expected: TypeChange) -> None:
    assert compare_types(old, new) is expected
