"""Facts gathered in parts and merged equal the facts of all the events at once.

The store gathers each caller's facts in the caller's thread and merges the
facts of a group commit; that is only right if merging is exact.
"""

from __future__ import annotations

import copy
import random

from headwater.events import parse_event
from headwater.store.extract import Facts
from tests.store.generate import generate


def _state(facts: Facts) -> tuple[object, ...]:
    return (facts.rows, facts.touched_runs, facts.touched_jobs, facts.touched_datasets,
            facts.touched_versions, facts.subjects)


def test_merged_parts_equal_the_whole_in_any_split_and_order() -> None:
    events = [parse_event(e) for e in generate(1500)]
    whole = Facts.of(events)
    rng = random.Random(11)
    for _ in range(3):
        shuffled = events[:]
        rng.shuffle(shuffled)
        cuts = sorted(rng.sample(range(1, len(shuffled)), 6))
        parts = [shuffled[a:b] for a, b in zip([0, *cuts], [*cuts, len(shuffled)], strict=True)]
        # Some events twice, in different parts: merging counts them once.
        parts[0] = parts[0] + parts[-1][:25]
        prepared = [Facts.of(part) for part in parts]
        before = copy.deepcopy([_state(p) for p in prepared])
        assert _state(Facts.merged(prepared)) == _state(whole)
        # The parts are left as they were (a failed group retries each alone).
        assert [_state(p) for p in prepared] == before


def test_merging_one_part_copies_it() -> None:
    events = [parse_event(e) for e in generate(50)]
    part = Facts.of(events)
    merged = Facts.merged([part])
    assert _state(merged) == _state(part)
    for table, rows in merged.rows.items():
        for key, row in rows.items():
            assert row is not part.rows[table][key]
