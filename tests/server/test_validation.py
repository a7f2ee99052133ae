"""Event validation: what is accepted, and that each rejection names its field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from headwater.errors import EventError
from headwater.server.ingest import check_event, normalise_namespace
from headwater.server.validation import validate_event
from tests.server.events import dataset_event, job_event, run_event


def test_the_three_event_kinds_are_recognised() -> None:
    assert validate_event(run_event()) == "RunEvent"
    assert validate_event(dataset_event()) == "DatasetEvent"
    assert validate_event(job_event()) == "JobEvent"


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
    assert validate_event(run_event(event_time=event_time)) == "RunEvent"


def test_optional_fields_may_be_absent_and_extra_keys_are_kept() -> None:
    event = run_event()
    del event["eventType"], event["schemaURL"], event["inputs"], event["outputs"]
    event["run"]["facets"]["custom"] = {"_producer": "x", "_schemaURL": "y", "anything": [1, {}]}
    event["vendorExtension"] = {"kept": True}
    checked = check_event(event)
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


@pytest.mark.parametrize(
    ("mutate", "field"),
    [pytest.param(m, f, id=title) for title, m, f in BAD_RUN_EVENTS],
)
def test_bad_run_event_names_the_field(
    mutate: Callable[[dict[str, Any]], None], field: str
) -> None:
    event = run_event()
    mutate(event)
    with pytest.raises(EventError) as info:
        validate_event(event)
    assert info.value.field == field
    assert field.split(".")[-1].split("[")[0] in str(info.value)


def test_dataset_event_needs_a_named_dataset() -> None:
    event = dataset_event()
    del event["dataset"]["namespace"]
    with pytest.raises(EventError) as info:
        validate_event(event)
    assert info.value.field == "dataset.namespace"


def test_an_object_that_is_no_event_kind_is_refused() -> None:
    with pytest.raises(EventError) as info:
        validate_event({"eventTime": "2020-01-01T00:00:00Z", "producer": "p"})
    assert info.value.field == "run"


@pytest.mark.parametrize("value", [[], "event", 3, None])
def test_non_objects_are_refused(value: Any) -> None:
    with pytest.raises(EventError, match="must be a JSON object"):
        validate_event(value)


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
    check_event(event)
    assert event["inputs"][0]["namespace"] == "s3://lake"
    output = event["outputs"][0]
    assert output["namespace"] == "s3://lake"
    lineage = output["facets"]["columnLineage"]
    assert lineage["fields"]["id"]["inputFields"][0]["namespace"] == "s3://lake"
    assert lineage["dataset"][0]["namespace"] == "s3://lake"


def test_dataset_event_namespace_is_normalised() -> None:
    event = dataset_event()
    event["dataset"]["namespace"] = "s3a://bucket"
    assert check_event(event)["dataset"]["namespace"] == "s3://bucket"


@pytest.mark.parametrize(
    ("given", "expected"),
    [("s3a://b", "s3://b"), ("s3n://b", "s3://b"), ("s3://b", "s3://b"), ("gs://b", "gs://b"),
     ("file", "file"), ("hdfs://nn:8020", "hdfs://nn:8020")],
)
def test_normalise_namespace(given: str, expected: str) -> None:
    assert normalise_namespace(given) == expected
