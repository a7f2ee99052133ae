"""Derived columns of datasets and dataset versions, computed inside the database.

A dataset's ``source_name``/``description``/``fields``/``lifecycle_state`` and
a version's ``fields``/``lifecycle_state`` are members of its latest stored
facets (``dataSource.name``, ``documentation.description``, ``schema.fields``,
``lifecycleStateChange.lifecycleStateChange``). Reading those facets back
into Python to copy one member out cost more than the rest of a batch's
derivation; here each is one ``UPDATE`` whose values are correlated
subqueries on ``facets`` (the facets' unique index makes each a lookup), and
only rows whose value changes are written.

Python still writes the ``fields`` table (one row per schema field) of the few
datasets whose schema changed: those come back from one ``SELECT`` first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import sqlalchemy as sa

from headwater.store import dialects
from headwater.store import tables as t
from headwater.store.keys import text_or_none

__all__ = ["DerivedStatements", "statements_for", "update_datasets_for", "write_field_rows"]

_IDS = sa.bindparam("ids", expanding=True)
_f, _d, _v, _ns = t.facets, t.datasets, t.dataset_versions, t.namespaces


@dataclass(frozen=True)
class DerivedStatements:
    """The statements for one dialect (built once; see :func:`statements_for`)."""

    changed_dataset_fields: sa.Select[Any]  # (id, new fields) of datasets whose schema changed
    #: Each derived column of ``datasets`` -> the SQL computing it from stored facts.
    dataset_values: dict[str, Any]
    update_versions: sa.Update


def _facet_member(dialect: str, kind: str, subject: Any, facet: str, key: str,
                  json_type: str) -> Any:
    """Scalar subquery: member ``key`` of the stored ``facet`` of ``subject``."""
    return (sa.select(dialects.json_member(dialect, _f.c.payload, key, json_type))
            .where(_f.c.kind == kind, _f.c.subject == subject, _f.c.run_uuid == "",
                   _f.c.name == facet)
            .correlate_except(_f).scalar_subquery())


@cache
def statements_for(dialect: str) -> DerivedStatements:
    # Correlated explicitly: it sits two levels down, inside the facet lookups.
    namespace = (sa.select(_ns.c.name).where(_ns.c.id == _d.c.namespace_id)
                 .correlate(_d).scalar_subquery())
    # The dataset's node id, as facets.subject holds it: dataset:<namespace>:<name>.
    subject = sa.literal("dataset:", sa.Text) + namespace + sa.literal(":", sa.Text) + _d.c.name

    def member(facet: str, key: str, json_type: str) -> Any:
        return _facet_member(dialect, "dataset", subject, facet, key, json_type)

    fields = member("schema", "fields", "array")
    wanted = {
        "source_name": sa.func.coalesce(member("dataSource", "name", "string"), namespace),
        "description": member("documentation", "description", "string"),
        "lifecycle_state": member("lifecycleStateChange", "lifecycleStateChange", "string"),
        "fields": fields,
        # The version with the greatest (updated_at, uuid).
        "current_version_uuid": (
            sa.select(_v.c.uuid).where(_v.c.dataset_id == _d.c.id)
            .order_by(_v.c.updated_at.desc(), _v.c.uuid.desc()).limit(1).scalar_subquery()),
    }
    changed_fields = sa.select(
        _d.c.id, sa.type_coerce(fields, t.JSONType).label("fields"),
    ).where(_d.c.id.in_(_IDS), _d.c.fields.is_distinct_from(fields))

    def version_member(facet: str, key: str, json_type: str) -> Any:
        return _facet_member(dialect, "dataset_version", _v.c.uuid, facet, key, json_type)

    version_wanted = {
        "fields": version_member("schema", "fields", "array"),
        "lifecycle_state": version_member("lifecycleStateChange", "lifecycleStateChange",
                                          "string"),
    }
    update_versions = _v.update().where(
        _v.c.uuid.in_(_IDS),
        sa.or_(*(_v.c[column].is_distinct_from(value)
                 for column, value in version_wanted.items())),
    ).values(**version_wanted)
    return DerivedStatements(changed_fields, wanted, update_versions)


@cache
def update_datasets_for(dialect: str, columns: frozenset[str]) -> sa.Update:
    """UPDATE recomputing only ``columns`` of the datasets in ``ids``, where they change.

    A batch re-derives only the columns its own facets and versions feed: the
    facet lookups (and JSON parsing) of the others would find what the last
    batch that touched them already wrote.
    """
    wanted = {column: value for column, value in statements_for(dialect).dataset_values.items()
              if column in columns}
    return _d.update().where(
        _d.c.id.in_(_IDS),
        sa.or_(*(_d.c[column].is_distinct_from(value) for column, value in wanted.items())),
    ).values(**wanted)


def write_field_rows(conn: sa.Connection, changed: Iterable[tuple[int, Any]]) -> None:
    """Replace the ``fields`` rows of datasets whose schema changed.

    One row per named field, first occurrence wins, in schema order.
    """
    changed = list(changed)
    if not changed:
        return
    conn.execute(t.fields.delete().where(t.fields.c.dataset_id.in_(_IDS)),
                 {"ids": [ds_id for ds_id, _ in changed]})
    rows = []
    for ds_id, fields in changed:
        seen: set[str] = set()
        for position, field in enumerate(fields or ()):
            if not isinstance(field, dict):
                continue
            name = field.get("name")
            if not isinstance(name, str) or name in seen:
                continue
            seen.add(name)
            rows.append({"dataset_id": ds_id, "name": name, "position": position,
                         "type": text_or_none(field.get("type")),
                         "description": text_or_none(field.get("description"))})
    if rows:
        conn.execute(t.fields.insert(), rows)
