"""Contract drift: the schema a producer writes against the schema a consumer declares it reads.

Pure: no SQL, no HTTP. :func:`diff_contract` compares the ``fields`` of a
dataset's written ``schema`` facet (what its latest schema-bearing version
holds) with the ``fields`` a consumer declares it parses (the ``declaredSchema``
input facet, e.g. the schema of a ``from_json``), nested fields at any depth
named by dotted paths (``value.amount``).

Classification, from the point of view of that consumer (can it read what the
producer writes?), with the type rules of :mod:`headwater.graph.drift`:

* ``not_written`` -- the consumer declares a field the producer does not
  write: breaking, unless the declaration says ``nullable: true`` (the reader
  then gets a null, which it declared it accepts);
* ``type_widened`` -- every written value fits the declared type (written
  ``int``, declared ``long``): compatible;
* ``type_narrowed`` -- the declared type is narrower than the written one
  (written ``long``, declared ``int``; written ``string``, declared ``double``):
  breaking;
* ``type_changed`` -- neither type holds the other's values (written ``long``,
  declared ``date``): breaking;
* ``may_be_null`` -- written ``nullable: true``, declared ``nullable: false``:
  breaking.

A written field the consumer does not declare is no difference: a consumer
reading a subset of the fields is compatible. Nor is a written ``nullable:
false`` field declared nullable. ``nullable`` is compared only when both sides
state it, as in version drift. A field that has nested ``fields`` on both sides
is compared through its children, not its type string.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from headwater.graph.drift import TypeChange, compare_types, parse_fields

__all__ = ["ContractChange", "ContractChangeKind", "ContractDrift", "diff_contract"]


class ContractChangeKind(StrEnum):
    NOT_WRITTEN = "not_written"
    TYPE_WIDENED = "type_widened"
    TYPE_NARROWED = "type_narrowed"
    TYPE_CHANGED = "type_changed"
    MAY_BE_NULL = "may_be_null"


@dataclass(frozen=True, slots=True)
class ContractChange:
    """One difference. ``old`` is what the producer writes (type, or ``nullable``),
    ``new`` what the consumer declares; ``breaking`` follows the module doc."""

    kind: ContractChangeKind
    path: str
    old: str | None
    new: str | None
    breaking: bool

    def as_dict(self) -> dict[str, Any]:
        """The change as the API and the store's JSON column spell it (as a version
        drift's change: ``old`` is the written side, ``new`` the declared one)."""
        return {
            "kind": self.kind.value,
            "path": self.path,
            "newPath": None,
            "old": self.old,
            "new": self.new,
            "breaking": self.breaking,
        }


@dataclass(frozen=True, slots=True)
class ContractDrift:
    """The differences between a written and a declared schema, in path order."""

    changes: tuple[ContractChange, ...]

    @property
    def breaking(self) -> bool:
        return any(change.breaking for change in self.changes)

    def __bool__(self) -> bool:
        return bool(self.changes)


_TYPE_KINDS = {
    TypeChange.WIDENING: (ContractChangeKind.TYPE_WIDENED, False),
    TypeChange.NARROWING: (ContractChangeKind.TYPE_NARROWED, True),
    TypeChange.INCOMPATIBLE: (ContractChangeKind.TYPE_CHANGED, True),
}


def diff_contract(written: Sequence[Any] | None, declared: Sequence[Any] | None) -> ContractDrift:
    """How the ``declared`` schema-facet ``fields`` differ from the ``written`` ones."""
    changes: list[ContractChange] = []
    _level(parse_fields(written), parse_fields(declared), "", changes)
    return ContractDrift(tuple(sorted(changes, key=lambda c: (c.path, c.kind.value))))


def _level(
    written: tuple[Any, ...], declared: tuple[Any, ...], prefix: str, out: list[ContractChange]
) -> None:
    by_name = {f.name: f for f in written}
    for want in declared:
        path = prefix + want.name
        have = by_name.get(want.name)
        if have is None:
            out.append(
                ContractChange(
                    ContractChangeKind.NOT_WRITTEN,
                    path,
                    None,
                    want.type,
                    breaking=want.nullable is not True,
                )
            )
            continue
        if have.children is not None and want.children is not None:
            _level(have.children, want.children, path + ".", out)
        else:
            how = compare_types(have.type, want.type)
            if how is not TypeChange.SAME:
                kind, breaking = _TYPE_KINDS[how]
                out.append(ContractChange(kind, path, have.type, want.type, breaking))
        if have.nullable is True and want.nullable is False:
            out.append(
                ContractChange(
                    ContractChangeKind.MAY_BE_NULL, path, "nullable", "required", breaking=True
                )
            )
