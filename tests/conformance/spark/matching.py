"""The OpenLineage Spark suite's matching rule, as its README states it.

An expected event matches an emitted one when it is a *subset* of it: every
expected key is present with a matching value, extra keys are ignored; every
expected array item matches a distinct emitted item, in any order, and extra
emitted items are ignored. String placeholders: ``${json-unit.any-string}``,
``${json-unit.any-number}``, ``${json-unit.ignore}`` and
``${json-unit.regex}<pattern>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

ANY_STRING = "${json-unit.any-string}"
ANY_NUMBER = "${json-unit.any-number}"
IGNORE = "${json-unit.ignore}"
REGEX = "${json-unit.regex}"


def matches(expected: Any, actual: Any) -> bool:
    """Whether ``expected`` is a subset of ``actual`` under the suite's rule."""
    if isinstance(expected, str):
        if expected == IGNORE:
            return True
        if expected == ANY_STRING:
            return isinstance(actual, str)
        if expected == ANY_NUMBER:
            return isinstance(actual, int | float) and not isinstance(actual, bool)
        if expected.startswith(REGEX):
            return isinstance(actual, str) and re.fullmatch(expected[len(REGEX) :], actual) is not None
        return expected == actual
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        return all(key in actual and matches(value, actual[key]) for key, value in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and _match_items(expected, actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    return expected == actual


def _match_items(expected: Sequence[Any], actual: Sequence[Any]) -> bool:
    """Each expected item matched to a distinct actual item (backtracking search)."""
    candidates = [[j for j, item in enumerate(actual) if matches(exp, item)] for exp in expected]
    order = sorted(range(len(expected)), key=lambda i: len(candidates[i]))
    used: set[int] = set()

    def assign(position: int) -> bool:
        if position == len(order):
            return True
        for j in candidates[order[position]]:
            if j not in used:
                used.add(j)
                if assign(position + 1):
                    return True
                used.remove(j)
        return False

    return assign(0)


def match_in_order(expected_events: Sequence[dict[str, Any]], emitted: Sequence[dict[str, Any]]) -> list[bool]:
    """For each expected event (in order), whether a later emitted event matches it.

    Events listed for a scenario must arrive in that order: each match must come
    after the previous one's.
    """
    results: list[bool] = []
    position = 0
    for expected in expected_events:
        found = next((i for i in range(position, len(emitted)) if matches(expected, emitted[i])), None)
        if found is None:
            results.append(False)
        else:
            results.append(True)
            position = found + 1
    return results
