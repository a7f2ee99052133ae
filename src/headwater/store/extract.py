"""Turn OpenLineage events into the facts the store keeps (pure Python, no SQL).

:class:`Facts` gathers, for one batch, the rows every table should receive,
keyed by natural keys (names, not surrogate ids) and already merged with the
table's :class:`~headwater.store.merge.MergeRule`. The writer then resolves ids
and upserts them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from headwater.errors import EventError
from headwater.events.parse import ParsedEvent
from headwater.store import rules
from headwater.store.keys import (
    NO_FACETS,
    DatasetKey,
    dataset_key,
    dataset_node,
    dataset_version_uuid,
    facets_of,
    field_node,
    job_node,
    run_node,
    text_or_none,
)
from headwater.store.merge import MergeRule, merge_into
from headwater.store.namespace_rules import Normaliser

__all__ = ["DECLARED_SCHEMA", "Facts"]

#: The input facet holding the schema a consumer declares it reads (``store.contract``).
DECLARED_SCHEMA = "declaredSchema"

TERMINAL_STATES = frozenset({"COMPLETE", "FAIL", "ABORT"})
ACTIVE_STATES = frozenset({"START", "RUNNING"})

#: The derived column of ``datasets`` each facet is the source of (see derive_sql).
DATASET_FACET_COLUMNS = {"schema": "fields", "documentation": "description",
                         "dataSource": "source_name",
                         "lifecycleStateChange": "lifecycle_state"}
#: Facets that datasets' / dataset versions' derived columns are computed from.
DATASET_DERIVED_FACETS = frozenset(DATASET_FACET_COLUMNS)
VERSION_DERIVED_FACETS = frozenset({"schema", "lifecycleStateChange"})


@dataclass
class Facts:
    """Rows for every table from a batch of new events, merged by natural key."""

    rows: dict[str, dict[Any, dict[str, Any]]] = field(default_factory=dict)
    touched_runs: set[str] = field(default_factory=set)
    touched_jobs: set[DatasetKey] = field(default_factory=set)
    #: Datasets and versions whose derived columns may have changed: those that
    #: got a facet they are derived from, or (datasets) a version. For each
    #: dataset, which of its derived columns: only those can change, since
    #: every batch re-derives what its own facets and versions feed.
    touched_datasets: dict[DatasetKey, set[str]] = field(default_factory=dict)
    touched_versions: set[str] = field(default_factory=set)
    #: (node id, event hash) -> ``event_subjects`` row.
    subjects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: target dataset -> each distinct columnLineage facet and the span of events carrying it.
    lineage: dict[DatasetKey, list[dict[str, Any]]] = field(default_factory=dict)
    #: (dataset, run uuid) of each input carrying a ``declaredSchema`` input facet.
    declared_inputs: set[tuple[DatasetKey, str]] = field(default_factory=set)
    #: The namespace rules mapping each name an event carries (None: names as sent).
    names: Normaliser | None = None
    #: raw name -> [the dataset it became, first and last time], for ``dataset_aliases``.
    _aliases: dict[DatasetKey, list[Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Iterable[ParsedEvent], names: Normaliser | None = None) -> Facts:
        """The finished facts of ``events``, their names mapped by ``names``."""
        facts = cls(names=names)
        if names is not None:
            events = list(events)
            names.learn(ev.event for ev in events)
        for ev in events:
            facts.add(ev)
        facts.finish()
        return facts

    @classmethod
    def merged(cls, parts: Iterable[Facts]) -> Facts:
        """One finished Facts equal to that of all the parts' events together.

        Every merge rule is order-independent and idempotent, so merging the
        parts' rows gives the rows of the union (an event in two parts counts
        once). The parts' row dicts are copied, never changed.
        """
        out = cls()
        for part in parts:
            for table, rows in part.rows.items():
                rule = rules.BY_TABLE[table]
                into = out.rows.setdefault(table, {})
                for key, row in rows.items():
                    merge_into(into, key, dict(row) if key not in into else row, rule)
            out.touched_runs |= part.touched_runs
            out.touched_jobs |= part.touched_jobs
            for key, columns in part.touched_datasets.items():
                out.touched_datasets.setdefault(key, set()).update(columns)
            out.touched_versions |= part.touched_versions
            out.subjects.update(part.subjects)
            out.declared_inputs |= part.declared_inputs
        return out

    def put(self, rule: MergeRule, key: Any, row: dict[str, Any]) -> None:
        # Called ~10 times per event; a new key skips the merge call.
        table = rule.table.name
        rows = self.rows.get(table)
        if rows is None:
            rows = self.rows[table] = {}
        if key not in rows:
            rows[key] = row
        else:
            merge_into(rows, key, row, rule)

    def table_rows(self, rule: MergeRule) -> dict[Any, dict[str, Any]]:
        return self.rows.get(rule.table.name, {})

    def run_created(self, run_uuid: str) -> datetime | None:
        """The earliest event time of ``run_uuid`` in this batch."""
        row = self.rows.get("runs", {}).get(run_uuid)
        return row["created_at"] if row else None

    def finish(self) -> None:
        """Expand what was gathered per batch rather than per event.

        A column-lineage facet repeats on every event of every run of a job;
        its edges are expanded once per distinct facet, carrying the earliest
        and latest time and the newest (time, hash, run) of the events that
        carried it -- the same result as expanding it per event. Namespace
        times are the span of their datasets' and jobs' times.
        """
        for target, distinct in self.lineage.items():
            for seen in distinct:
                self._expand_column_lineage(target, seen)
        self.lineage.clear()
        for key, (named, first, last) in self._aliases.items():
            self.put(rules.DATASET_ALIASES, key, {
                "namespace": key[0], "name": key[1], "dataset": named, "created_at": first,
                "updated_at": last})
        self._aliases.clear()
        for rule in (rules.DATASETS, rules.JOBS):
            for (namespace, _), row in self.table_rows(rule).items():
                self.put(rules.NAMESPACES, namespace, {
                    "name": namespace, "created_at": row["created_at"],
                    "updated_at": row["updated_at"]})

    # -- one event -----------------------------------------------------------------

    def add(self, ev: ParsedEvent) -> None:
        t, h = ev.time, ev.event_hash
        event = ev.event
        if ev.kind == "dataset":
            dataset = event["dataset"]
            key = dataset_key(dataset, "dataset")
            if self.names is not None:
                key = self._named(key, t)
            key = self._dataset(key, t)
            self._mentions(dataset_node(*key), ev)
            version = dataset_version_uuid(key[0], key[1], f"event:{h}")
            self._version(version, key, None, t)
            self._dataset_facets(key, facets_of(dataset, "facets"), version, ev)
            return
        assert ev.job is not None
        job = ev.job if self.names is None else self.names.job(ev.job)
        self.put(rules.JOBS, job,
                 {"namespace": job[0], "name": job[1], "created_at": t, "updated_at": t})
        self.touched_jobs.add(job)
        self._mentions(job_node(*job), ev)
        run_uuid = ev.run_uuid or ""
        job_facets = facets_of(event["job"], "facets")
        self._facet_rows("job", job_node(*job), "", job_facets, ev)
        self._tags(job_node(*job), job_facets.get("tags"), ev, None)
        if ev.run_uuid is not None:
            self._run(ev, job)
            self._mentions(run_node(ev.run_uuid), ev)
            run_facets = facets_of(event["run"], "facets")
            self._facet_rows("run", run_node(ev.run_uuid), "", run_facets, ev)
            location = job_facets.get("sourceCodeLocation")
            if location is not None:
                # Kept per run: it is part of the run's job version.
                self._facet_rows("job", job_node(*job), ev.run_uuid,
                                 {"sourceCodeLocation": location}, ev)
        for i, item in enumerate(event.get("inputs") or ()):
            key = dataset_key(item, f"inputs[{i}]")
            if self.names is not None:
                key = self._named(key, t)
            key = self._dataset(key, t)
            self._mentions(dataset_node(*key), ev)
            self._dataset_facets(key, facets_of(item, "facets"), None, ev)
            input_facets = facets_of(item, "inputFacets")
            self._facet_rows("input", dataset_node(*key), run_uuid, input_facets, ev)
            if ev.run_uuid is not None and input_facets.get(DECLARED_SCHEMA) is not None:
                self.declared_inputs.add((key, ev.run_uuid))
            if ev.run_uuid is not None:
                self.put(rules.RUN_INPUTS, (ev.run_uuid, key),
                         {"run_uuid": ev.run_uuid, "dataset": key, "created_at": t,
                          "updated_at": t})
        for i, item in enumerate(event.get("outputs") or ()):
            key = dataset_key(item, f"outputs[{i}]")
            if self.names is not None:
                key = self._named(key, t)
            key = self._dataset(key, t)
            self._mentions(dataset_node(*key), ev)
            version = None
            if ev.run_uuid is not None:
                version = dataset_version_uuid(key[0], key[1], f"run:{ev.run_uuid}")
                self._version(version, key, ev.run_uuid, t)
                self.put(rules.RUN_OUTPUTS, (ev.run_uuid, key),
                         {"run_uuid": ev.run_uuid, "dataset": key, "dataset_version_uuid": version,
                          "created_at": t, "updated_at": t})
            self._dataset_facets(key, facets_of(item, "facets"), version, ev)
            self._facet_rows("output", dataset_node(*key), run_uuid,
                             facets_of(item, "outputFacets"), ev)

    # -- pieces ----------------------------------------------------------------------

    def _named(self, key: DatasetKey, t: datetime, last: datetime | None = None) -> DatasetKey:
        """``key`` mapped by the namespace rules; a changed name is kept as an alias."""
        assert self.names is not None
        named = self.names.dataset(key)
        if named != key:
            # Gathered per raw name and turned into rows once, in finish().
            seen = self._aliases.get(key)
            if seen is None:
                self._aliases[key] = [named, t, last or t]
            else:
                seen[1] = min(seen[1], t)
                seen[2] = max(seen[2], last or t)
        return named

    def _mentions(self, subject: str, ev: ParsedEvent) -> None:
        self.subjects[(subject, ev.event_hash)] = {
            "subject": subject, "event_time": ev.time, "event_hash": ev.event_hash}

    def _dataset(self, key: DatasetKey, t: datetime, last: datetime | None = None) -> DatasetKey:
        # source_name is only written on insert (then derived from dataSource
        # facets); its default, the namespace, matches what derive computes.
        self.put(rules.DATASETS, key, {"namespace": key[0], "name": key[1], "created_at": t,
                                       "updated_at": last or t, "source_name": key[0]})
        return key

    def _touch(self, key: DatasetKey, column: str) -> None:
        columns = self.touched_datasets.get(key)
        if columns is None:
            self.touched_datasets[key] = {column}
        else:
            columns.add(column)

    def _version(self, version: str, key: DatasetKey, run_uuid: str | None, t: datetime) -> None:
        self.put(rules.DATASET_VERSIONS, version,
                 {"uuid": version, "dataset": key, "run_uuid": run_uuid, "created_at": t,
                  "updated_at": t})
        self._touch(key, "current_version_uuid")

    def _run(self, ev: ParsedEvent, job: DatasetKey) -> None:
        assert ev.run_uuid is not None
        state = ev.event_type
        rank = 2 if state in TERMINAL_STATES else 1 if state in ACTIVE_STATES else 0
        self.put(rules.RUNS, ev.run_uuid, {
            "uuid": ev.run_uuid,
            "job": job,
            "state": state if rank else None,
            "state_rank": rank,
            "state_time": ev.time,
            "state_hash": ev.event_hash,
            "ended_at": ev.time if rank == 2 else None,
            "started_at": ev.time if state == "START" else None,
            "created_at": ev.time,
            "updated_at": ev.time,
        })
        self.touched_runs.add(ev.run_uuid)

    def _facet_rows(self, kind: str, subject: str, run_uuid: str,
                    facets: Mapping[str, Any], ev: ParsedEvent) -> None:
        rows = self.rows.setdefault("facets", {})
        t, h = ev.time, ev.event_hash
        for name, payload in facets.items():
            if payload is None:
                continue  # a null facet carries nothing to keep
            # Inlined FACETS merge rule (this runs ~15 times per event).
            key = (kind, subject, run_uuid, name)
            old = rows.get(key)
            if old is None or (t, h) > (old["event_time"], old["event_hash"]):
                rows[key] = {"kind": kind, "subject": subject, "run_uuid": run_uuid,
                             "name": name, "payload": payload, "event_time": t,
                             "event_hash": h}

    def _dataset_facets(self, key: DatasetKey, facets: Mapping[str, Any],
                        version: str | None, ev: ParsedEvent) -> None:
        self._facet_rows("dataset", dataset_node(*key), "", facets, ev)
        if not DATASET_DERIVED_FACETS.isdisjoint(facets):
            for name in DATASET_DERIVED_FACETS.intersection(facets):
                self._touch(key, DATASET_FACET_COLUMNS[name])
        if version is not None:
            self._facet_rows("dataset_version", version, "", facets, ev)
            if not VERSION_DERIVED_FACETS.isdisjoint(facets):
                self.touched_versions.add(version)
        t, h = ev.time, ev.event_hash
        source = facets.get("dataSource")
        if isinstance(source, dict) and isinstance(source.get("name"), str):
            self.put(rules.SOURCES, source["name"], {
                "name": source["name"], "connection_url": text_or_none(source.get("uri")),
                "url_time": t, "url_hash": h, "created_at": t, "updated_at": t})
        else:
            self.put(rules.SOURCES, key[0], {
                "name": key[0], "connection_url": key[0], "url_time": t, "url_hash": h,
                "created_at": t, "updated_at": t})
        symlinks = facets.get("symlinks")
        if isinstance(symlinks, dict):
            for ident in _items(symlinks.get("identifiers")):
                if isinstance(ident, dict) and isinstance(ident.get("namespace"), str) \
                        and isinstance(ident.get("name"), str):
                    link = (ident["namespace"], ident["name"])
                    if self.names is not None:
                        link = self.names.symlink(link)
                    self.put(rules.DATASET_SYMLINKS, (key, *link), {
                        "dataset": key, "namespace": link[0], "name": link[1],
                        "type": str(ident.get("type") or ""), "created_at": t, "updated_at": t})
        self._column_lineage(key, facets.get("columnLineage"), ev)
        self._tags(dataset_node(*key), facets.get("tags"), ev, key)
        schema = facets.get("schema")
        if isinstance(schema, dict):
            for f in _items(schema.get("fields")):
                # Most fields are plain dicts without tags: test that first.
                if isinstance(f, dict) and f.get("tags") \
                        and isinstance(f.get("name"), str):
                    self._tags(field_node(key[0], key[1], f["name"]), {"tags": f["tags"]}, ev, None)

    def _column_lineage(self, target: DatasetKey, facet: Any, ev: ParsedEvent) -> None:
        if not isinstance(facet, dict):
            return
        guard = (ev.time, ev.event_hash, ev.run_uuid)
        seen_for_target = self.lineage.setdefault(target, [])
        for seen in seen_for_target:
            # Dict equality short-circuits; far cheaper than serialising a key.
            if seen["facet"] == facet:
                seen["first"] = min(seen["first"], ev.time)
                seen["last"] = max(seen["last"], ev.time)
                if guard[:2] > seen["guard"][:2]:
                    seen["guard"] = guard
                return
        seen_for_target.append({"facet": facet, "first": ev.time, "last": ev.time, "guard": guard})

    def _expand_column_lineage(self, target: DatasetKey, seen: dict[str, Any]) -> None:
        facet, first, last = seen["facet"], seen["first"], seen["last"]
        edge_time, edge_hash, run_uuid = seen["guard"]
        entries: list[tuple[str, Any, Mapping[str, Any]]] = []
        fields = facet.get("fields")
        if isinstance(fields, dict):
            for target_field, spec in fields.items():
                if isinstance(spec, dict):
                    for source in _items(spec.get("inputFields")):
                        entries.append((target_field, source, spec))
        for source in _items(facet.get("dataset")):
            entries.append(("", source, NO_FACETS))
        rule = rules.COLUMN_LINEAGE
        rows = self.rows.setdefault(rule.table.name, {})
        # A facet names the same source dataset once per field: resolve each once.
        source_keys: dict[tuple[str, str], DatasetKey] = {}
        for target_field, source, spec in entries:
            if not isinstance(source, dict):
                continue
            source_field = source.get("field")
            if not isinstance(source_field, str):
                continue
            named = (source.get("namespace"), source.get("name"))
            source_key = source_keys.get(named) if isinstance(named[0], str) \
                and isinstance(named[1], str) else None
            if source_key is None:
                try:
                    source_key = dataset_key(source, "columnLineage.inputFields")
                    if self.names is not None:
                        source_key = self._named(source_key, first, last)
                    source_key = self._dataset(source_key, first, last)
                except EventError:
                    continue  # a malformed edge is dropped, the event is kept
                source_keys[named] = source_key
            transformations = source.get("transformations")
            # (type, subtype, description, masking) of each transformation.
            if transformations:
                described = [(tr.get("type"), tr.get("subtype"), tr.get("description"),
                              tr.get("masking")) for tr in _items(transformations)
                             if isinstance(tr, dict)]
            else:
                # Pre-1.x facets describe the transformation on the target field.
                described = [(spec.get("transformationType"), None,
                              spec.get("transformationDescription"), None)]
            for kind, subtype, description, masking in described:
                key = (target, target_field, source_key, source_field,
                       str(kind or ""), str(subtype or ""))
                row = {
                    "target": target, "target_field": target_field,
                    "source": source_key, "source_field": source_field,
                    "transformation_type": key[4], "transformation_subtype": key[5],
                    "description": description if isinstance(description, str) else None,
                    "masking": masking if isinstance(masking, bool) else None,
                    "run_uuid": run_uuid, "edge_time": edge_time, "edge_hash": edge_hash,
                    "created_at": first, "updated_at": last}
                # Inlined put (this runs once per edge per distinct facet).
                if key in rows:
                    merge_into(rows, key, row, rule)
                else:
                    rows[key] = row

    def _tags(self, subject: str, facet: Any, ev: ParsedEvent, dataset: DatasetKey | None) -> None:
        if not isinstance(facet, dict):
            return
        t, h = ev.time, ev.event_hash
        for tag in _items(facet.get("tags")):
            if isinstance(tag, str):
                tag = {"key": tag}
            if not isinstance(tag, dict) or not isinstance(tag.get("key"), str):
                continue
            target = subject
            if dataset is not None and isinstance(tag.get("field"), str):
                target = field_node(dataset[0], dataset[1], tag["field"])
            name = tag["key"]
            self.put(rules.TAGS, name, {"name": name, "created_at": t, "updated_at": t})
            self.put(rules.TAG_ASSIGNMENTS, (name, target), {
                "tag": name, "subject": target, "value": text_or_none(tag.get("value")),
                "source": text_or_none(tag.get("source")), "tag_time": t, "tag_hash": h,
                "created_at": t, "updated_at": t})


def _items(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else no items (facets are free-form)."""
    return value if isinstance(value, list) else []
