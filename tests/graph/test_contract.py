"""diff_contract: the producer's written schema against a consumer's declared one."""

from __future__ import annotations

from typing import Any

import pytest

from headwater.graph.contract import diff_contract


def _f(name: str, type_: str, nullable: bool | None = None, **more: Any) -> dict[str, Any]:
    field: dict[str, Any] = {"name": name, "type": type_, **more}
    if nullable is not None:
        field["nullable"] = nullable
    return field


@pytest.mark.parametrize(
    ("written", "declared", "expected"),
    [
        # A consumer reading a subset of the fields: no difference.
        ([_f("a", "long"), _f("b", "string")], [_f("a", "long")], []),
        ([_f("a", "int")], [_f("a", "long")], [("type_widened", "a", "int", "long", False)]),
        ([_f("a", "long")], [_f("a", "int")], [("type_narrowed", "a", "long", "int", True)]),
        (
            [_f("a", "string")],
            [_f("a", "double")],
            [("type_narrowed", "a", "string", "double", True)],
        ),
        ([_f("a", "long")], [_f("a", "date")], [("type_changed", "a", "long", "date", True)]),
        ([], [_f("a", "long")], [("not_written", "a", None, "long", True)]),
        ([], [_f("a", "long", nullable=False)], [("not_written", "a", None, "long", True)]),
        ([], [_f("a", "long", nullable=True)], [("not_written", "a", None, "long", False)]),
        (
            [_f("a", "long", nullable=True)],
            [_f("a", "long", nullable=False)],
            [("may_be_null", "a", "nullable", "required", True)],
        ),
        ([_f("a", "long", nullable=False)], [_f("a", "long", nullable=True)], []),
        # Nested at any depth, compared through the children.
        (
            [
                _f(
                    "value",
                    "struct",
                    fields=[_f("order", "struct", fields=[_f("amount", "string")])],
                )
            ],
            [
                _f(
                    "value",
                    "struct",
                    fields=[_f("order", "struct", fields=[_f("amount", "double")])],
                )
            ],
            [("type_narrowed", "value.order.amount", "string", "double", True)],
        ),
        # Type names compared with their aliases; an absent type is no evidence.
        ([_f("a", "BIGINT")], [_f("a", "long")], []),
        ([{"name": "a"}], [_f("a", "long")], []),
    ],
)
def test_classification(
    written: list[Any], declared: list[Any], expected: list[tuple[Any, ...]]
) -> None:
    drift = diff_contract(written, declared)
    got = [(c.kind.value, c.path, c.old, c.new, c.breaking) for c in drift.changes]
    assert got == expected
    assert bool(drift) == bool(expected)
    assert drift.breaking == any(item[4] for item in expected)


def test_changes_come_in_path_order_and_spell_like_version_changes() -> None:
    drift = diff_contract([_f("b", "long")], [_f("z", "int"), _f("b", "int"), _f("a", "x")])
    assert [c.path for c in drift.changes] == ["a", "b", "z"]
    assert drift.changes[1].as_dict() == {
        "kind": "type_narrowed",
        "path": "b",
        "newPath": None,
        "old": "long",
        "new": "int",
        "breaking": True,
    }
