"""Store.record: what each kind of event leaves behind, on both databases."""

from __future__ import annotations

import json

import sqlalchemy as sa

from headwater.errors import EventError
from headwater.store import Store, tables as t
from headwater.store.queries import run_input_versions
from tests.store.builders import column_lineage, dataset, facet, record, run_event
from tests.store.conftest import marquez_events

RUN = "3f5e83fa-3480-44ff-99c5-ff943904e5e8"


def rows(store: Store, query: sa.Select) -> list[sa.Row]:  # type: ignore[type-arg]
    with store.engine.connect() as conn:
        return list(conn.execute(query))


def test_marquez_fixture_events_are_stored_once(store: Store) -> None:
    events = [event for _, event in marquez_events()]
    assert len(events) >= 15
    first = record(store, events)
    assert all(not r.duplicate for r in first)
    counts = store.counts()
    assert counts["events"] == len(events)
    again = record(store, events)
    assert [r.event_hash for r in again] == [r.event_hash for r in first]
    assert all(r.duplicate for r in again)
    assert store.counts() == counts


def test_duplicate_inside_one_call_is_reported_as_duplicate(store: Store) -> None:
    event = run_event("START", "2024-01-01T00:00:00Z", RUN)
    results = record(store, [event, dict(event)])
    assert [r.duplicate for r in results] == [False, True]
    assert store.counts()["events"] == 1


def test_event_times_without_zone_or_with_nanoseconds(store: Store) -> None:
    record(store, [
        run_event("START", "2024-01-01T10:00:00", RUN),
        run_event("COMPLETE", "2024-01-01T12:30:00.123456789+02:00", RUN),
    ])
    (run,) = rows(store, sa.select(t.runs))
    assert run.started_at.isoformat() == "2024-01-01T10:00:00"
    assert run.ended_at.isoformat() == "2024-01-01T10:30:00.123456"
    assert run.state == "COMPLETE"


def test_terminal_state_wins_whatever_the_arrival_order(store: Store) -> None:
    record(store, [run_event("COMPLETE", "2024-01-01T00:05:00Z", RUN)])
    record(store, [run_event("RUNNING", "2024-01-01T00:09:00Z", RUN)])
    record(store, [run_event("START", "2024-01-01T00:00:00Z", RUN)])
    record(store, [run_event("OTHER", "2024-01-01T00:10:00Z", RUN)])
    (run,) = rows(store, sa.select(t.runs))
    assert (run.state, run.ended_at.minute, run.started_at.minute) == ("COMPLETE", 5, 0)
    assert run.created_at.minute == 0 and run.updated_at.minute == 10


def test_latest_active_state_by_event_time(store: Store) -> None:
    record(store, [run_event("RUNNING", "2024-01-01T00:05:00Z", RUN)])
    record(store, [run_event("START", "2024-01-01T00:00:00Z", RUN)])
    (run,) = rows(store, sa.select(t.runs.c.state, t.runs.c.ended_at))
    assert tuple(run) == ("RUNNING", None)


def test_producers_merge_inputs_outputs_and_facets(store: Store) -> None:
    a = run_event("START", "2024-01-01T00:00:00Z", RUN, inputs=[dataset("s3://b", "in1")],
                  run_facets={"custom": facet(v=1)}, producer="p1")
    b = run_event("RUNNING", "2024-01-01T00:01:00Z", RUN, inputs=[dataset("s3://b", "in2")],
                  outputs=[dataset("s3://b", "out")],
                  run_facets={"custom": facet(v=2, extra={"k": 1})},
                  producer="p2")
    record(store, [b])
    record(store, [a])
    assert store.counts()["run_inputs"] == 2 and store.counts()["run_outputs"] == 1
    (custom,) = rows(store, sa.select(t.facets.c.payload).where(
        t.facets.c.kind == "run", t.facets.c.name == "custom"))
    assert custom.payload["v"] == 2 and custom.payload["extra"] == {"k": 1}
    # History: both events are indexed under the run, their payloads keep both versions.
    history = rows(store, sa.select(t.events.c.payload)
                   .join(t.event_subjects, t.event_subjects.c.event_hash == t.events.c.event_hash)
                   .where(t.event_subjects.c.subject == f"run:{RUN}")
                   .order_by(t.event_subjects.c.event_time))
    assert [json.loads(h.payload)["run"]["facets"]["custom"]["v"] for h in history] == [1, 2]


def test_input_reads_latest_version_before_the_read(store: Store) -> None:
    writer1, writer2, reader = (f"00000000-0000-0000-0000-00000000000{i}" for i in (1, 2, 3))
    out = dataset("file", "/data/x", [("a", "int")])
    # Arrival order: reader, newer write, older write.
    record(store, [run_event("START", "2024-01-01T02:00:00Z", reader, job="read",
                                   inputs=[dataset("file", "/data/x")])])
    record(store, [run_event("COMPLETE", "2024-01-01T03:00:00Z", writer2, job="write",
                                   outputs=[dataset("file", "/data/x",
                                                    [("a", "int"), ("b", "int")])])])
    record(store, [run_event("COMPLETE", "2024-01-01T01:00:00Z", writer1, job="write",
                                   outputs=[out])])
    (read,) = rows(store, run_input_versions().where(t.run_inputs.c.run_uuid == reader))
    (version,) = rows(store, sa.select(t.dataset_versions).where(
        t.dataset_versions.c.uuid == read.dataset_version_uuid))
    assert version.run_uuid == writer1
    assert [f["name"] for f in version.fields] == ["a"]
    (ds,) = rows(store, sa.select(t.datasets))
    assert [f["name"] for f in ds.fields] == ["a", "b"]
    assert [r.name for r in rows(store, sa.select(t.fields.c.name).order_by(t.fields.c.position))] \
        == ["a", "b"]


def test_column_lineage_edges(store: Store) -> None:
    out = dataset("file", "/out", [("id", "int")],
                  columnLineage=column_lineage({"id": [("file", "/in", "key")]}))
    record(store, [run_event("COMPLETE", "2024-01-01T00:00:00Z", RUN,
                                   inputs=[dataset("file", "/in")], outputs=[out])])
    d_src, d_tgt = t.datasets.alias("s"), t.datasets.alias("g")
    query = (sa.select(d_src.c.name, t.column_lineage.c.source_field, d_tgt.c.name.label("target"),
                       t.column_lineage.c.target_field, t.column_lineage.c.transformation_type)
             .join(d_src, d_src.c.id == t.column_lineage.c.source_dataset_id)
             .join(d_tgt, d_tgt.c.id == t.column_lineage.c.target_dataset_id))
    assert [tuple(r) for r in rows(store, query)] == [("/in", "key", "/out", "id", "DIRECT")]


def test_symlinks_tags_and_sources(store: Store) -> None:
    out = dataset("hdfs://nn:8020", "/warehouse/t", [("id", "int")],
                  symlinks=facet(identifiers=[{"namespace": "hive://ms:9083", "name": "db.t",
                                               "type": "TABLE"}]),
                  dataSource=facet(name="warehouse", uri="hdfs://nn:8020"),
                  tags=facet(tags=[{"key": "pii", "value": "true", "source": "CONFIG"}]))
    record(store, [run_event("COMPLETE", "2024-01-01T00:00:00Z", RUN, outputs=[out])])
    (link,) = rows(store, sa.select(t.dataset_symlinks))
    assert (link.namespace, link.name, link.type) == ("hive://ms:9083", "db.t", "TABLE")
    (ds,) = rows(store, sa.select(t.datasets))
    assert ds.source_name == "warehouse"
    (tag,) = rows(store, sa.select(t.tag_assignments.c.subject, t.tag_assignments.c.value))
    assert tuple(tag) == ("dataset:hdfs://nn:8020:/warehouse/t", "true")


def test_job_versions_follow_the_runs_shape(store: Store) -> None:
    second = "11111111-0000-0000-0000-000000000000"
    record(store, [run_event("START", "2024-01-01T00:00:00Z", RUN,
                                   inputs=[dataset("file", "/in")])])
    record(store, [run_event("COMPLETE", "2024-01-01T00:01:00Z", RUN,
                                   inputs=[dataset("file", "/in")],
                                   outputs=[dataset("file", "/o")])])
    record(store, [run_event("COMPLETE", "2024-01-02T00:01:00Z", second,
                                   inputs=[dataset("file", "/in")],
                                   outputs=[dataset("file", "/o")])])
    (version,) = rows(store, sa.select(t.job_versions))  # the START-only shape was replaced
    assert version.inputs == ["dataset:file:/in"] and version.outputs == ["dataset:file:/o"]
    (job,) = rows(store, sa.select(t.jobs))
    assert job.current_version_uuid == version.uuid


def test_bad_event_names_the_field_and_writes_nothing(store: Store) -> None:
    good = run_event("START", "2024-01-01T00:00:00Z", RUN)
    bad = run_event("START", "yesterday", RUN)
    try:
        record(store, [good, bad])
    except EventError as exc:
        assert exc.field == "eventTime"
    else:
        raise AssertionError("bad eventTime accepted")
    assert store.counts()["events"] == 0


def test_odd_but_valid_inputs_are_stored(store: Store) -> None:
    long_run = RUN.upper()  # a run id is kept as the producer spelled it
    event = run_event("START", "2024-01-01T00:00:00Z", long_run,
                      run_facets={"nullFacet": None, "free": facet(any={"nested": [1, None]})},
                      outputs=[dataset("file", "/o", lifecycleStateChange=facet(
                          lifecycleStateChange="A_STATE_NAME_LONGER_THAN_THIRTY_TWO_CHARS"))])
    event["eventType"] = "START"
    record(store, [event, run_event(None, "2024-01-01T00:00:01Z", long_run)])
    (run,) = rows(store, sa.select(t.runs.c.uuid, t.runs.c.state))
    assert tuple(run) == (long_run, "START")  # an event without eventType changes no state
    run_facets = sa.select(t.facets.c.name).where(t.facets.c.kind == "run")
    names = {r.name for r in rows(store, run_facets)}
    assert names == {"free"}
    (ds,) = rows(store, sa.select(t.datasets.c.lifecycle_state))
    assert ds.lifecycle_state == "A_STATE_NAME_LONGER_THAN_THIRTY_TWO_CHARS"


def test_dataset_and_job_events(store: Store) -> None:
    by_name = dict(marquez_events())
    record(store, [by_name["open_lineage__event_dataset_event.json"],
                         by_name["open_lineage__event_job_event.json"]])
    counts = store.counts()
    assert counts["runs"] == 0 and counts["jobs"] == 1
    assert counts["dataset_versions"] == 1  # the DatasetEvent's own version
    (ds,) = rows(store, sa.select(t.datasets.c.fields).where(
        t.datasets.c.name == "my-dataset-name"))
    assert [f["name"] for f in ds.fields] == ["col_a"]
    (ev,) = rows(store, sa.select(t.events.c.event_time).where(t.events.c.kind == "dataset"))
    assert ev.event_time.isoformat() == "2020-12-28T09:52:00.001000"  # +10:00 taken to UTC
