"""The one check of an incoming event: what is accepted, and that each refusal names its field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from headwater.errors import EventError
from headwater.events.canonical import canonical_bytes, content_hash
from headwater.events.parse import (
    MAX_KEY_BYTES,
    MAX_NAME_BYTES,
    MAX_NAMESPACE_BYTES,
    normalise_namespace,
    parse_event,
)
from tests.server.events import dataset_event, job_event, run_event


def test_the_three_event_kinds_are_recognised() -> None:
    assert parse_event(run_event()).kind == "run"
    assert parse_event(dataset_event()).kind == "dataset"
    assert parse_event(job_event()).kind == "job"


@pytest.mark.parametrize(
    "event_time",
    [
        "2020-12-28T19:51:01.641Z",
        "2020-12-28T19:51:01.641499",  # no timezone: Marquez treats it as UTC
        "2020-12-28T19:51:01.641499123Z",  # nanoseconds
        "2020-12-28T19:52:00.001+10:00",
    ],
)
def test_event_time_forms_marquez_accepts(event_time: str) -> None:
    assert parse_event(run_event(event_time=event_time)).kind == "run"


def test_optional_fields_may_be_absent_and_extra_keys_are_kept() -> None:
    event = run_event()
    del event["eventType"], event["schemaURL"], event["inputs"], event["outputs"]
    event["run"]["facets"]["custom"] = {"_producer": "x", "_schemaURL": "y", "anything": [1, {}]}
    event["vendorExtension"] = {"kept": True}
    checked = parse_event(event).event
    assert checked is event
    assert checked["vendorExtension"] == {"kept": True}
    assert checked["run"]["facets"]["custom"]["anything"] == [1, {}]


def _drop(*path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(event: dict[str, Any]) -> None:
        target = event
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


def _set(value: Any, *path: str | int) -> Callable[[dict[str, Any]], None]:
    def mutate(event: dict[str, Any]) -> None:
        target: Any = event
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


BAD_RUN_EVENTS = [
    ("no eventTime", _drop("eventTime"), "eventTime"),
    ("eventTime a number", _set(1606000000, "eventTime"), "eventTime"),
    ("eventTime not a date", _set("yesterday", "eventTime"), "eventTime"),
    ("eventTime only a date", _set("2020-12-28", "eventTime"), "eventTime"),
    ("no producer", _drop("producer"), "producer"),
    ("producer an object", _set({}, "producer"), "producer"),
    ("schemaURL a number", _set(3, "schemaURL"), "schemaURL"),
    ("unknown eventType", _set("FINISHED", "eventType"), "eventType"),
    ("run not an object", _set("abc", "run"), "run"),
    ("no runId", _drop("run", "runId"), "run.runId"),
    ("runId not a UUID", _set("run-42", "run", "runId"), "run.runId"),
    ("runId a number", _set(42, "run", "runId"), "run.runId"),
    ("run facets an array", _set([], "run", "facets"), "run.facets"),
    ("no job", _drop("job"), "job"),
    ("no job namespace", _drop("job", "namespace"), "job.namespace"),
    ("job name a number", _set(7, "job", "name"), "job.name"),
    ("empty job name", _set("  ", "job", "name"), "job.name"),
    ("inputs an object", _set({}, "inputs"), "inputs"),
    ("input not an object", _set(["s3://x"], "inputs"), "inputs[0]"),
    ("input without name", _drop("inputs", 0, "name"), "inputs[0].name"),  # type: ignore[arg-type]
    ("output namespace null", _set(None, "outputs", 0, "namespace"), "outputs[0].namespace"),
    ("output facets a string", _set("x", "outputs", 0, "facets"), "outputs[0].facets"),
    ("outputFacets an array", _set([], "outputs", 0, "outputFacets"), "outputs[0].outputFacets"),
]


def _schema_with(name: str) -> dict[str, Any]:
    return {"namespace": "file", "name": "/t",
            "facets": {"schema": {"_producer": "p", "_schemaURL": "s",
                                  "fields": [{"name": name, "type": "string"}]}}}


# What neither store can hold, each refused with the path of the value.
UNSTORABLE = [
    ("NUL in a job name", _set("orders\x00daily", "job", "name"), "job.name"),
    ("NUL deep in a facet", _set({"_producer": "p", "_schemaURL": "s", "note": ["ok", "a\x00"]},
                                 "run", "facets", "custom"), "run.facets.custom.note[1]"),
    ("NUL in a facet key", _set({"bad\x00key": 1}, "run", "facets", "custom"),
     "run.facets.custom.bad\x00key"),
    ("namespace too long", _set("n" * (MAX_NAMESPACE_BYTES + 1), "job", "namespace"),
     "job.namespace"),
    ("name too long in bytes", _set("\u00e9" * (MAX_NAME_BYTES // 2 + 1), "outputs", 0, "name"),
     "outputs[0].name"),
    ("schema field name too long", _set([_schema_with("f" * (MAX_KEY_BYTES + 1))], "inputs"),
     "inputs[0].facets.schema.fields[0].name"),
    ("facet name too long", _set({"x" * (MAX_KEY_BYTES + 1): {}}, "job", "facets"),
     "job.facets." + "x" * 40),
    ("time beyond year 9999 in UTC", _set("9999-12-31T23:59:59-14:00", "eventTime"), "eventTime"),
    ("time before year 1 in UTC", _set("0001-01-01T00:00:00+01:00", "eventTime"), "eventTime"),
    ("integer beyond 64 bits", _set({"n": 2**63}, "run", "facets", "custom"),
     "run.facets.custom.n"),
    ("negative integer beyond 64 bits", _set([-(2**63) - 1], "run", "facets", "custom"),
     "run.facets.custom[0]"),
    ("NaN", _set({"n": float("nan")}, "run", "facets", "custom"), "run.facets.custom.n"),
    ("infinity", _set({"n": float("inf")}, "run", "facets", "custom"), "run.facets.custom.n"),
    ("lone surrogate", _set("\ud800", "producer"), "producer"),
]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [pytest.param(m, f, id=title) for title, m, f in BAD_RUN_EVENTS + UNSTORABLE],
)
def test_bad_run_event_names_the_field(
    mutate: Callable[[dict[str, Any]], None], field: str
) -> None:
    event = run_event()
    mutate(event)
    with pytest.raises(EventError) as info:
        parse_event(event)
    assert info.value.field == field
    assert field.split(".")[-1].split("[")[0][:40] in str(info.value) or not field


def test_dataset_event_needs_a_named_dataset() -> None:
    event = dataset_event()
    del event["dataset"]["namespace"]
    with pytest.raises(EventError) as info:
        parse_event(event)
    assert info.value.field == "dataset.namespace"


def test_an_object_that_is_no_event_kind_is_refused() -> None:
    with pytest.raises(EventError) as info:
        parse_event({"eventTime": "2020-01-01T00:00:00Z", "producer": "p"})
    assert info.value.field == "run"


@pytest.mark.parametrize("value", [[], "event", 3, None])
def test_non_objects_are_refused(value: Any) -> None:
    with pytest.raises(EventError, match="must be a JSON object"):
        parse_event(value)


def test_s3a_and_s3n_namespaces_become_s3_including_column_lineage() -> None:
    event = run_event(
        inputs=[{"namespace": "s3a://lake", "name": "bronze/orders"}],
        outputs=[
            {
                "namespace": "s3n://lake",
                "name": "silver/orders",
                "facets": {
                    "columnLineage": {
                        "fields": {
                            "id": {
                                "inputFields": [
                                    {"namespace": "s3a://lake", "name": "bronze/orders",
                                     "field": "id"}
                                ]
                            }
                        },
                        "dataset": [
                            {"namespace": "s3n://lake", "name": "bronze/orders", "field": "x"}
                        ],
                    }
                },
            }
        ],
    )
    parse_event(event)
    assert event["inputs"][0]["namespace"] == "s3://lake"
    output = event["outputs"][0]
    assert output["namespace"] == "s3://lake"
    lineage = output["facets"]["columnLineage"]
    assert lineage["fields"]["id"]["inputFields"][0]["namespace"] == "s3://lake"
    assert lineage["dataset"][0]["namespace"] == "s3://lake"


def test_dataset_event_namespace_is_normalised() -> None:
    event = dataset_event()
    event["dataset"]["namespace"] = "s3a://bucket"
    assert parse_event(event).event["dataset"]["namespace"] == "s3://bucket"


@pytest.mark.parametrize(
    ("given", "expected"),
    [("s3a://b", "s3://b"), ("s3n://b", "s3://b"), ("s3://b", "s3://b"), ("gs://b", "gs://b"),
     ("file", "file"), ("hdfs://nn:8020", "hdfs://nn:8020")],
)
def test_normalise_namespace(given: str, expected: str) -> None:
    assert normalise_namespace(given) == expected


def test_the_hash_is_taken_of_the_normalised_event() -> None:
    event = run_event(inputs=[{"namespace": "s3a://lake", "name": "t"}])
    parsed = parse_event(event)
    assert parsed.payload.encode() == canonical_bytes(event)
    assert parsed.event_hash == content_hash(canonical_bytes(event))
    assert '"s3://lake"' in parsed.payload


def test_values_at_the_limits_are_accepted() -> None:
    event = run_event(inputs=[_schema_with("f" * MAX_KEY_BYTES)])
    event["job"]["namespace"] = "n" * MAX_NAMESPACE_BYTES
    event["outputs"][0]["name"] = "\u00e9" * (MAX_NAME_BYTES // 2)
    event["run"]["facets"]["custom"] = {"big": 2**63 - 1, "small": -(2**63), "f": 1e308,
                                        "text": "\\u0000 is only text here", "NaN": "NaN"}
    event["eventTime"] = "9999-12-31T23:59:59+00:00"
    parsed = parse_event(event)
    assert parsed.time.year == 9999
