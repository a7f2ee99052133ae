"""Schema drift between two versions of a dataset (pure: no SQL, no HTTP).

:func:`diff_schemas` compares the ``fields`` of two OpenLineage ``schema``
facets (``[{name, type, description?, nullable?, fields?: [...]}]``), nested
fields at any depth named by dotted paths (``address.city``), and returns
each structural change with its classification.

Classification, from the point of view of a consumer that reads the dataset
and was written against the older schema (backward compatibility as schema
registries define it: can the old reader read the new data?):

==========================  ==========  ==========================================
change (``kind``)           breaking?   why
==========================  ==========  ==========================================
``added``                   compatible  an old reader ignores a field it never asked for
``removed``                 breaking    an old reader asks for a field that is gone
``possible_rename``         breaking    the old name is gone, whatever the new one is
``type_widened``            compatible  every old value fits the new type
``type_narrowed``           breaking    the reverse of a widening: values may not fit
``type_changed``            breaking    neither type holds the other's values
``became_required``         breaking    nullable -> not nullable: writers must now
                                        supply it (and readers relying on nulls break)
``became_nullable``         compatible  not nullable -> nullable widens the domain
==========================  ==========  ==========================================

A *possible rename* is reported when a removed and an added field sit at the
same position under the same parent and have the same type: the schema facet
carries no field ids, so position and type are the only evidence, and the
change is reported as *possible* (it is breaking either way).

Type widening (Spark/Hive names, case-insensitive; ``integer`` = ``int``,
``bigint`` = ``long``, ``smallint`` = ``short``, ``tinyint`` = ``byte``,
``real`` = ``float``, ``char(n)`` = ``varchar(n)``, ``text`` = ``string``,
``numeric`` = ``decimal``, bare ``decimal`` = ``decimal(10,0)`` as in Spark):

* ``byte`` -> ``short`` -> ``int`` -> ``long``; ``float`` -> ``double``;
  ``byte``/``short``/``int`` -> ``double`` (every such value is exact in a double);
* ``decimal(p,s)`` -> ``decimal(p',s')`` when ``s' >= s`` and ``p'-s' >= p-s``
  (no fractional and no integer digit is lost; this implies ``p' >= p``);
* an integer type -> ``decimal(p,s)`` with at least its digits left of the point
  (``byte`` 3, ``short`` 5, ``int`` 10, ``long`` 20);
* ``varchar(n)`` -> ``varchar(m)`` when ``m > n``;
* ``date`` -> ``timestamp``/``timestamp_ntz``;
* anything -> ``string``.

The reverse of a widening is a narrowing; any other change of type is
incompatible. A field whose old and new entries both have nested ``fields``
is compared through its children, not its type string (which repeats them).
``nullable`` is compared only when both sides state it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = [
    "BREAKING_KINDS",
    "Change",
    "ChangeKind",
    "Drift",
    "TypeChange",
    "compare_types",
    "diff_schemas",
    "parse_fields",
]


class ChangeKind(str, Enum):
    ADDED = "added"
    REMOVED = "removed"
    POSSIBLE_RENAME = "possible_rename"
    TYPE_WIDENED = "type_widened"
    TYPE_NARROWED = "type_narrowed"
    TYPE_CHANGED = "type_changed"
    BECAME_REQUIRED = "became_required"
    BECAME_NULLABLE = "became_nullable"


#: The kinds a consumer written against the old schema can break on (see the module doc).
BREAKING_KINDS = frozenset({
    ChangeKind.REMOVED, ChangeKind.POSSIBLE_RENAME, ChangeKind.TYPE_NARROWED,
    ChangeKind.TYPE_CHANGED, ChangeKind.BECAME_REQUIRED,
})


class TypeChange(str, Enum):
    SAME = "same"
    WIDENING = "widening"
    NARROWING = "narrowing"
    INCOMPATIBLE = "incompatible"


@dataclass(frozen=True, slots=True)
class Change:
    """One structural change. ``old``/``new`` are the types, or for nullability
    changes ``"nullable"``/``"required"``; ``new_path`` is set for renames."""

    kind: ChangeKind
    path: str
    old: str | None = None
    new: str | None = None
    new_path: str | None = None

    @property
    def breaking(self) -> bool:
        return self.kind in BREAKING_KINDS

    def as_dict(self) -> dict[str, Any]:
        """The change as the API and the store's JSON column spell it."""
        return {"kind": self.kind.value, "path": self.path, "newPath": self.new_path,
                "old": self.old, "new": self.new, "breaking": self.breaking}


@dataclass(frozen=True, slots=True)
class Drift:
    """The changes from one schema to the next, in a stable order."""

    changes: tuple[Change, ...]

    @property
    def breaking(self) -> bool:
        return any(change.breaking for change in self.changes)

    def __bool__(self) -> bool:
        return bool(self.changes)


# -- types --------------------------------------------------------------------------

_ALIASES = {
    "tinyint": "byte", "smallint": "short", "integer": "int", "bigint": "long",
    "real": "float", "float4": "float", "float8": "double", "double precision": "double",
    "text": "string", "numeric": "decimal", "dec": "decimal", "bool": "boolean",
    "timestamp_ltz": "timestamp",
}
_INTEGER_DIGITS = {"byte": 3, "short": 5, "int": 10, "long": 20}
_INTEGER_RANK = {"byte": 0, "short": 1, "int": 2, "long": 3}
_DECIMAL = re.compile(r"^decimal\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")
_SIZED_STRING = re.compile(r"^(?:var)?char\s*\(\s*(\d+)\s*\)$")


def _canonical(type_name: str) -> str:
    name = " ".join(type_name.strip().lower().split())
    sized = _SIZED_STRING.match(name)
    if sized:
        return f"varchar({sized.group(1)})"
    name = _ALIASES.get(name, name)
    decimal = _DECIMAL.match(name)
    if decimal:
        precision = int(decimal.group(1) or 10)
        scale = int(decimal.group(2) or 0)
        return f"decimal({precision},{scale})"
    return name


def _decimal(name: str) -> tuple[int, int] | None:
    match = _DECIMAL.match(name)
    if not match or match.group(1) is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def _length(name: str) -> int | None:
    return int(name[8:-1]) if name.startswith("varchar(") else None


def _widens(old: str, new: str) -> bool:
    """Whether every value of canonical type ``old`` fits canonical type ``new``."""
    if new == "string":
        return True
    old_length, new_length = _length(old), _length(new)
    if old_length is not None and new_length is not None:
        return old_length < new_length
    if old in _INTEGER_RANK and new in _INTEGER_RANK:
        return _INTEGER_RANK[old] < _INTEGER_RANK[new]
    if new == "double" and (old == "float" or old in ("byte", "short", "int")):
        return True
    new_decimal = _decimal(new)
    if new_decimal is not None:
        precision, scale = new_decimal
        if old in _INTEGER_DIGITS:
            return precision - scale >= _INTEGER_DIGITS[old]
        old_decimal = _decimal(old)
        if old_decimal is not None:
            old_precision, old_scale = old_decimal
            return scale >= old_scale and precision - scale >= old_precision - old_scale
    return old == "date" and new in ("timestamp", "timestamp_ntz")


def compare_types(old: str | None, new: str | None) -> TypeChange:
    """How type ``old`` became ``new`` (see the module doc). An absent type on
    either side is no evidence of a change."""
    if old is None or new is None:
        return TypeChange.SAME
    old_c, new_c = _canonical(old), _canonical(new)
    if old_c == new_c:
        return TypeChange.SAME
    if _widens(old_c, new_c):
        return TypeChange.WIDENING
    if _widens(new_c, old_c):
        return TypeChange.NARROWING
    return TypeChange.INCOMPATIBLE


# -- fields -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    position: int
    type: str | None
    nullable: bool | None
    children: tuple[_Field, ...] | None  # None: the field has no nested ``fields``


def _fields(raw: Any) -> tuple[_Field, ...]:
    """The named fields of a facet's ``fields`` list; the first of a repeated name wins."""
    out: list[_Field] = []
    seen: set[str] = set()
    for item in raw if isinstance(raw, list) else ():
        if not isinstance(item, Mapping):
            continue
        name = item.get("name")
        if not isinstance(name, str) or name in seen:
            continue
        seen.add(name)
        type_name = item.get("type")
        nullable = item.get("nullable")
        nested = item.get("fields")
        out.append(_Field(
            name=name, position=len(out),
            type=type_name if isinstance(type_name, str) else None,
            nullable=nullable if isinstance(nullable, bool) else None,
            children=_fields(nested) if isinstance(nested, list) else None))
    return tuple(out)


#: The parsed fields of a facet's ``fields`` list (``name``, ``position``, ``type``,
#: ``nullable``, ``children``), for comparisons other than version to version.
parse_fields = _fields


def diff_schemas(old: Sequence[Any] | None, new: Sequence[Any] | None) -> Drift:
    """The changes from schema-facet ``fields`` ``old`` to ``new``.

    Changes come in the order of their paths, so equal inputs give equal output.
    """
    changes: list[Change] = []
    _diff_level(_fields(old), _fields(new), "", changes)
    return Drift(tuple(sorted(changes, key=lambda c: (c.path, c.kind.value, c.new_path or ""))))


def _diff_level(old: tuple[_Field, ...], new: tuple[_Field, ...], prefix: str,
                out: list[Change]) -> None:
    old_by_name = {f.name: f for f in old}
    new_by_name = {f.name: f for f in new}
    removed = {f.position: f for f in old if f.name not in new_by_name}
    added = {f.position: f for f in new if f.name not in old_by_name}
    for position in sorted(set(removed) & set(added)):
        gone, came = removed[position], added[position]
        if gone.type is not None and came.type is not None \
                and compare_types(gone.type, came.type) is TypeChange.SAME:
            out.append(Change(ChangeKind.POSSIBLE_RENAME, prefix + gone.name,
                              gone.type, came.type, new_path=prefix + came.name))
            del removed[position], added[position]
    out.extend(Change(ChangeKind.REMOVED, prefix + f.name, old=f.type) for f in removed.values())
    out.extend(Change(ChangeKind.ADDED, prefix + f.name, new=f.type) for f in added.values())
    for before in old:
        after = new_by_name.get(before.name)
        if after is not None:
            _diff_field(before, after, prefix + before.name, out)


_TYPE_KINDS = {TypeChange.WIDENING: ChangeKind.TYPE_WIDENED,
               TypeChange.NARROWING: ChangeKind.TYPE_NARROWED,
               TypeChange.INCOMPATIBLE: ChangeKind.TYPE_CHANGED}


def _diff_field(old: _Field, new: _Field, path: str, out: list[Change]) -> None:
    if old.children is not None and new.children is not None:
        _diff_level(old.children, new.children, path + ".", out)
    else:
        how = compare_types(old.type, new.type)
        if how is not TypeChange.SAME:
            out.append(Change(_TYPE_KINDS[how], path, old.type, new.type))
    if old.nullable is not None and new.nullable is not None and old.nullable != new.nullable:
        kind = ChangeKind.BECAME_NULLABLE if new.nullable else ChangeKind.BECAME_REQUIRED
        out.append(Change(kind, path, _nullability(old.nullable), _nullability(new.nullable)))


def _nullability(nullable: bool) -> str:
    return "nullable" if nullable else "required"
