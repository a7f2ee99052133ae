"""The subset matcher itself (no JVM)."""

from __future__ import annotations

from tests.conformance.spark.matching import match_in_order, matches


def test_subset_dicts_and_extra_keys() -> None:
    assert matches({"a": 1}, {"a": 1, "b": 2})
    assert not matches({"a": 1, "c": 3}, {"a": 1, "b": 2})
    assert not matches({"a": 1}, {"a": 2})


def test_arrays_ignore_order_and_extra_items_but_need_distinct_matches() -> None:
    assert matches([{"n": 2}, {"n": 1}], [{"n": 1}, {"n": 2}, {"n": 3}])
    assert not matches([{"n": 1}, {"n": 1}], [{"n": 1}, {"n": 2}])
    assert matches([{"t": "x"}, {"t": "x", "m": 1}], [{"t": "x", "m": 1}, {"t": "x"}])


def test_placeholders() -> None:
    assert matches("${json-unit.any-string}", "s")
    assert not matches("${json-unit.any-string}", 1)
    assert matches("${json-unit.any-number}", 1.5)
    assert not matches("${json-unit.any-number}", "1")
    assert matches("${json-unit.ignore}", None)
    assert matches("${json-unit.regex}app.*_test", "app.execute_x.create_test")
    assert not matches("${json-unit.regex}app.*_test", "other")


def test_booleans_are_not_numbers() -> None:
    assert not matches(1, True)
    assert matches(False, False)


def test_order_of_expected_files() -> None:
    emitted = [{"e": "START"}, {"e": "COMPLETE"}]
    assert match_in_order([{"e": "START"}, {"e": "COMPLETE"}], emitted) == [True, True]
    assert match_in_order([{"e": "COMPLETE"}, {"e": "START"}], emitted) == [True, False]
