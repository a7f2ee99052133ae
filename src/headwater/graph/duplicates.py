"""Duplicate work: jobs whose output columns are computed the same way.

Every output column a job writes has a **fingerprint**: the set of its input columns,
each with how it is used (OpenLineage transformation type and subtype), normalised
-- the output's own name, the job's name, descriptions and the order of inputs do
not count, and the type and subtype are upper-cased. A dataset-level entry of the
``columnLineage`` facet (a filter or join key affecting the whole dataset) counts as
an input of every column of its target, so filters are in the fingerprint however
the producer reports them.

The fingerprint has two parts: the **value** part (the DIRECT inputs: what the value
is computed from, and whether as IDENTITY, TRANSFORMATION or AGGREGATION) and the
**rows** part (the INDIRECT inputs: FILTER, JOIN, GROUP_BY, SORT, WINDOW,
CONDITIONAL -- which rows and groups there are). Two columns with equal
fingerprints are the same computation; two with equal value parts only compute the
same thing over different rows (another filter, another join).

For a pair of jobs, each side's **share** is the fraction of its fingerprinted
columns that have an equal column on the other side, and its **value share** the
fraction that have a column with an equal value part. The pair is:

* ``equal`` -- every column of each has an equal column in the other;
* ``contains`` -- every column of one (``contained``) has an equal column in the
  other, which writes more;
* ``partial`` -- anything else: some columns match, or only their values do (the
  same query with another filter).

A column with no input column (a literal, a generated id) has no fingerprint and is
left out of both counts. Column lineage holds no literal: two filters on the same
column with different constants (``status = 'paid'`` and ``status = 'open'``)
leave equal fingerprints, and such jobs are reported ``equal``.

Pairs are found through an index from fingerprints to columns, so only jobs that
share at least one value part are compared. :func:`key_digest` gives that index's
key as a 64-bit number, the same in every process and store (the store keeps one
per output column, so candidate pairs are found without reading every column).
"""

from __future__ import annotations

import enum
import functools
import hashlib
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

__all__ = [
    "ColumnInput",
    "DuplicatePair",
    "Fingerprint",
    "JobShare",
    "OutputColumn",
    "Relation",
    "column_inputs",
    "columns_of",
    "duplicates",
    "fingerprints",
    "input_digest",
    "key_digest",
    "print_digest",
    "set_digests",
]


class Relation(enum.Enum):
    EQUAL = "equal"
    CONTAINS = "contains"
    PARTIAL = "partial"


class ColumnInput(NamedTuple):
    """One input of an output column: a field of a dataset (``dataset`` a node id; an
    empty ``field`` for a dataset-level entry's whole dataset), and how it is used.

    A plain tuple: a store holds millions of column edges, and one is built per edge
    read (docs/api.md, "Duplicate work", gives the cost)."""

    dataset: str
    field: str
    type: str
    subtype: str

    @property
    def direct(self) -> bool:
        # An edge that names no type is direct, as the impact walk reads it.
        return self.type != "INDIRECT"


@dataclass(frozen=True, slots=True)
class OutputColumn:
    """An output column of a job: ``field`` of the dataset ``dataset`` and its inputs."""

    job: str
    dataset: str
    field: str
    inputs: frozenset[ColumnInput]

    @property
    def id(self) -> str:
        return f"{self.dataset}:{self.field}"


@dataclass(frozen=True, slots=True)
class Fingerprint:
    value: frozenset[ColumnInput]
    rows: frozenset[ColumnInput]

    @property
    def key(self) -> object:
        """What finds candidate pairs: the value part; for a column computed from no
        column (``count(*)``) the whole fingerprint, or every such column would match."""
        return self.value if self.value else self


def _normalised(item: ColumnInput) -> ColumnInput:
    kind, subtype = item.type or "DIRECT", item.subtype or ""
    if kind.isupper() and (subtype.isupper() or not subtype):
        return item  # as producers send them: nothing to build
    return ColumnInput(item.dataset, item.field, kind.upper(), subtype.upper())


_Job = TypeVar("_Job")
_Target = TypeVar("_Target")
_Input = TypeVar("_Input")


def column_inputs(
    edges: Iterable[tuple[_Job, _Target, str, _Input]],
) -> dict[tuple[_Job, _Target, str], set[_Input]]:
    """Each output column's inputs from ``edges`` -- (job, target dataset, target
    field, input): a field's inputs are its edges of that job, and an edge with an
    empty target field (a dataset-level entry) is an input of every column the same
    job writes to its target. Jobs and targets are names or database ids."""
    inputs: dict[tuple[_Job, _Target, str], set[_Input]] = defaultdict(set)
    whole: dict[tuple[_Job, _Target], set[_Input]] = defaultdict(set)
    for job, target, target_field, item in edges:
        if target_field:
            inputs[(job, target, target_field)].add(item)
        else:
            whole[(job, target)].add(item)
    for (job, target, _), found in inputs.items():
        found |= whole.get((job, target), set())
    return inputs


def columns_of(edges: Iterable[tuple[str, str, str, ColumnInput]]) -> list[OutputColumn]:
    """The output columns of ``edges`` (see :func:`column_inputs`), sorted by (job,
    dataset, field)."""
    return [
        OutputColumn(job, target, name, frozenset(found))
        for (job, target, name), found in sorted(column_inputs(edges).items())
    ]


def fingerprints(columns: Iterable[OutputColumn]) -> dict[OutputColumn, Fingerprint]:
    """Each column with at least one input, and its fingerprint."""
    found = {}
    for column in columns:
        inputs = frozenset(_normalised(i) for i in column.inputs)
        if not inputs:
            continue
        found[column] = Fingerprint(
            frozenset(i for i in inputs if i.direct), frozenset(i for i in inputs if not i.direct)
        )
    return found


_MASK = (1 << 64) - 1


@functools.lru_cache(maxsize=1 << 16)
def _member_digest(item: ColumnInput) -> int:
    text = "\x1f".join(item)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def input_digest(item: ColumnInput) -> tuple[bool, int]:
    """Whether ``item`` is a value input (DIRECT), and the digest of it normalised:
    what :func:`set_digests` takes, computed once per distinct input."""
    normal = _normalised(item)
    return normal.direct, _member_digest(normal)


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def set_digests(value: Collection[int], rows: Collection[int]) -> tuple[int, int]:
    """(key digest, whole-fingerprint digest) of a fingerprint given its members'
    digests (:func:`input_digest`, each member once). A sum of the members' digests
    is the same for any order; write paths digest every column a batch touches
    without building fingerprints."""
    whole = (
        ((sum(value) + 0x9E3779B97F4A7C15) & _MASK) * 0xFF51AFD7ED558CCD
        ^ ((sum(rows) + 0x632BE59BD9B4E019) & _MASK)
    ) & _MASK
    key = (sum(value) + 0x1B873593) & _MASK if value else whole
    return _signed(key), _signed(whole)


def _digests(fingerprint: Fingerprint) -> tuple[int, int]:
    return set_digests(
        {_member_digest(i) for i in fingerprint.value},
        {_member_digest(i) for i in fingerprint.rows},
    )


def print_digest(fingerprint: Fingerprint) -> int:
    """A signed 64-bit digest of the whole fingerprint: equal fingerprints give equal
    digests; unequal ones (almost) never do."""
    return _digests(fingerprint)[1]


def key_digest(fingerprint: Fingerprint) -> int:
    """The digest of :attr:`Fingerprint.key`, what candidate pairs share: equal keys
    give equal digests, so pairs found by equal digests include every pair that
    :func:`duplicates` compares (a rare unequal key with the same digest only adds a
    candidate that the comparison drops)."""
    return _digests(fingerprint)[0]


@dataclass(frozen=True, slots=True)
class JobShare:
    """One side of a pair: how much of ``job``'s output the other job computes too."""

    job: str
    columns: int
    same: int
    same_values: int
    #: (this job's column id, the other's column id, "exact" or "values")
    matches: tuple[tuple[str, str, str], ...] = field(default=(), compare=False)

    @property
    def share(self) -> float:
        return self.same / self.columns

    @property
    def value_share(self) -> float:
        return self.same_values / self.columns


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    relation: Relation
    left: JobShare
    right: JobShare
    #: With ``contains``: the job whose every column the other computes.
    contained: str | None = None

    @property
    def score(self) -> float:
        return max(self.left.value_share, self.right.value_share)


def _side(
    job: str,
    mine: list[OutputColumn],
    theirs: list[OutputColumn],
    prints: Mapping[OutputColumn, Fingerprint],
) -> JobShare:
    """How many of ``mine`` have an equal column (or an equal value part) in
    ``theirs``; each of theirs matched once, exact matches first."""
    exact_free = Counter(prints[c] for c in theirs)
    exact_of: dict[Fingerprint, list[OutputColumn]] = defaultdict(list)
    value_of: dict[object, list[OutputColumn]] = defaultdict(list)
    for other in sorted(theirs, key=lambda c: c.id):
        exact_of[prints[other]].append(other)
        value_of[prints[other].key].append(other)
    used: set[OutputColumn] = set()
    matches: list[tuple[str, str, str]] = []
    rest = []
    for column in sorted(mine, key=lambda c: c.id):
        fp = prints[column]
        if exact_free[fp] > 0:
            exact_free[fp] -= 1
            other = next(o for o in exact_of[fp] if o not in used)
            used.add(other)
            matches.append((column.id, other.id, "exact"))
        else:
            rest.append(column)
    for column in rest:
        other_or_none = next((o for o in value_of[prints[column].key] if o not in used), None)
        if other_or_none is not None:
            used.add(other_or_none)
            matches.append((column.id, other_or_none.id, "values"))
    same = sum(1 for m in matches if m[2] == "exact")
    return JobShare(job, len(mine), same, len(matches), tuple(matches))


def duplicates(
    columns: Iterable[OutputColumn], min_share: float = 0.5, jobs: Iterable[str] | None = None
) -> list[DuplicatePair]:
    """The pairs of jobs whose value share on one side is at least ``min_share``,
    highest first; with ``jobs``, only pairs with one of them."""
    prints = fingerprints(columns)
    by_job: dict[str, list[OutputColumn]] = defaultdict(list)
    by_value: dict[object, set[str]] = defaultdict(set)
    per_key: Counter[tuple[str, object]] = Counter()
    for column, fp in prints.items():
        by_job[column.job].append(column)
        by_value[fp.key].add(column.job)
        per_key[(column.job, fp.key)] += 1
    wanted = None if jobs is None else set(jobs)
    # How many columns each pair could match on value: an upper bound of both value
    # shares, so only pairs that can reach ``min_share`` are compared column by column.
    shared: Counter[tuple[str, str]] = Counter()
    for key, sharing in by_value.items():
        if len(sharing) < 2:
            continue
        for a in sharing:
            for b in sharing:
                if a < b and (wanted is None or a in wanted or b in wanted):
                    shared[(a, b)] += min(per_key[(a, key)], per_key[(b, key)])
    pairs = []
    for (a, b), bound in sorted(shared.items()):
        if bound < min_share * len(by_job[a]) and bound < min_share * len(by_job[b]):
            continue
        left = _side(a, by_job[a], by_job[b], prints)
        right = _side(b, by_job[b], by_job[a], prints)
        pair = _pair(left, right)
        if pair.score >= min_share:
            pairs.append(pair)
    pairs.sort(key=lambda p: (-p.score, -max(p.left.share, p.right.share), p.left.job, p.right.job))
    return pairs


def _pair(left: JobShare, right: JobShare) -> DuplicatePair:
    left_all, right_all = left.same == left.columns, right.same == right.columns
    if left_all and right_all:
        return DuplicatePair(Relation.EQUAL, left, right)
    if left_all:
        return DuplicatePair(Relation.CONTAINS, left, right, left.job)
    if right_all:
        return DuplicatePair(Relation.CONTAINS, left, right, right.job)
    return DuplicatePair(Relation.PARTIAL, left, right)
