"""The watcher against a real Kafka Connect worker (Apache Kafka's standalone
worker and file connectors) on the session's real broker: START, RUNNING when
paused and resumed, FAIL with the redacted trace, COMPLETE when deleted, a new
run when re-created, and no event twice across watcher restarts."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.agent.spec import validate_event
from tests.connect.helpers import Collected, delete, put, running, unique, wait_state, watcher_for
from tests.support.kafka_topics import create_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def _types(events: list[dict]) -> list[str]:
    return [e["eventType"] for e in events]


def test_source_lifecycle_pause_resume_delete_and_restarts(
    connect_worker, kafka_bootstrap, tmp_path: Path
):
    url = connect_worker.url
    name, topic = unique("file-src"), unique("lines")
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\ntwo\n")
    state = tmp_path / "state.json"
    sent = Collected()
    put(
        url,
        name,
        {
            "connector.class": SOURCE,
            "file": str(source_file),
            "topic": topic,
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "db.password": "hunter22",
            "sasl.jaas.config": "x required password=y;",
        },
    )
    wait_state(url, name, running)

    watcher = watcher_for(url, kafka_bootstrap, state, sent)
    watcher.poll()
    (start,) = sent.of(name)
    validate_event(start)
    assert start["eventType"] == "START"
    assert start["job"]["namespace"] == f"kafka-connect://127.0.0.1:{connect_worker.port}"
    assert [(d["namespace"], d["name"]) for d in start["inputs"]] == [("file", str(source_file))]
    (output,) = start["outputs"]
    assert (output["namespace"], output["name"]) == (f"kafka://{kafka_bootstrap}", topic)
    assert output["facets"]["datasetType"]["datasetType"] == "TOPIC"
    assert output["facets"]["schema"]["fields"] == [{"name": "value", "type": "string"}]
    facet = start["run"]["facets"]["kafkaConnect"]
    assert facet["config"]["db.password"] == "[redacted]"
    assert facet["config"]["sasl.jaas.config"] == "[redacted]"
    assert "hunter22" not in json.dumps(sent.events)
    assert facet["family"] == "file" and facet["paused"] is False
    run_id = start["run"]["runId"]

    httpx.put(f"{url}/connectors/{name}/pause", timeout=10).raise_for_status()
    wait_state(
        url,
        name,
        lambda s: (
            s["connector"]["state"] == "PAUSED" and all(t["state"] == "PAUSED" for t in s["tasks"])
        ),
    )
    watcher.poll()
    paused = sent.of(name)[-1]
    assert paused["eventType"] == "RUNNING" and paused["run"]["runId"] == run_id
    assert paused["run"]["facets"]["kafkaConnect"]["paused"] is True
    assert paused["run"]["facets"]["kafkaConnect"]["state"] == "PAUSED"

    httpx.put(f"{url}/connectors/{name}/resume", timeout=10).raise_for_status()
    wait_state(url, name, running)
    watcher.poll()
    resumed = sent.of(name)[-1]
    assert resumed["eventType"] == "RUNNING"
    assert resumed["run"]["facets"]["kafkaConnect"]["paused"] is False
    watcher.poll()  # nothing changed
    assert _types(sent.of(name)) == ["START", "RUNNING", "RUNNING"]

    # A restarted watcher with the same state file sends nothing again.
    again = Collected()
    watcher_for(url, kafka_bootstrap, state, again).poll()
    assert again.of(name) == []

    # Deleted: COMPLETE, delivered after the destination was down once.
    delete(url, name)
    restarted = watcher_for(url, kafka_bootstrap, state, sent)
    sent.fail_next = True
    with pytest.raises(ConnectionError):
        restarted.poll()
    assert _types(sent.of(name)) == ["START", "RUNNING", "RUNNING"]
    # A watcher restarted after the failed delivery sends the pending COMPLETE once.
    watcher_for(url, kafka_bootstrap, state, sent).poll()
    complete = sent.of(name)[-1]
    validate_event(complete)
    assert _types(sent.of(name)) == ["START", "RUNNING", "RUNNING", "COMPLETE"]
    assert complete["run"]["runId"] == run_id
    assert complete["job"]["facets"]["jobType"]["jobType"] == "SOURCE"

    # Created again: a new incarnation, a new run.
    put(url, name, {"connector.class": SOURCE, "file": str(source_file), "topic": topic})
    wait_state(url, name, running)
    watcher_for(url, kafka_bootstrap, state, sent).poll()
    reborn = sent.of(name)[-1]
    assert reborn["eventType"] == "START" and reborn["run"]["runId"] != run_id
    delete(url, name)


def test_failing_task_fails_with_its_redacted_trace(
    connect_worker, kafka_bootstrap, tmp_path: Path
):
    url = connect_worker.url
    name, secret = unique("file-sink"), "Sup3rSecretValue"
    topic = create_topic(kafka_bootstrap, 1, prefix="sink-in")
    # The sink cannot create its file; the path quotes the secret, so the trace does.
    put(
        url,
        name,
        {
            "connector.class": "FileStreamSink",
            "topics": topic,
            "file": f"/proc/no-such-dir/{secret}/out.txt",
            "target.password": secret,
        },
    )
    wait_state(url, name, lambda s: any(t["state"] == "FAILED" for t in s["tasks"]))
    sent = Collected()
    watcher = watcher_for(url, kafka_bootstrap, tmp_path / "state.json", sent)
    watcher.poll()
    assert _types(sent.of(name)) == ["START", "FAIL"]
    fail = sent.of(name)[-1]
    validate_event(fail)
    error = fail["run"]["facets"]["errorMessage"]
    assert "Couldn't find or create file" in error["message"]
    assert "FileStreamSinkTask" in error["stackTrace"]
    assert "/proc/no-such-dir/[redacted]/out.txt" in error["stackTrace"]
    assert secret not in json.dumps(sent.events)
    assert [(d["namespace"], d["name"]) for d in fail["inputs"]] == [
        (f"kafka://{kafka_bootstrap}", topic)
    ]
    # Still failed: nothing new. Deleted after failing: the run has ended already.
    watcher.poll()
    delete(url, name)
    watcher.poll()
    assert _types(sent.of(name)) == ["START", "FAIL"]


def test_sink_topics_regex_is_resolved_against_the_broker(
    connect_worker, kafka_bootstrap, tmp_path: Path
):
    url = connect_worker.url
    name = unique("regex-sink")
    prefix = unique("rx")
    first = create_topic(kafka_bootstrap, 1, prefix=prefix)
    second = create_topic(kafka_bootstrap, 1, prefix=prefix)
    put(
        url,
        name,
        {
            "connector.class": "FileStreamSink",
            "topics.regex": f"{prefix}-.*",
            "file": str(tmp_path / "out.txt"),
        },
    )
    wait_state(url, name, running)
    sent = Collected()
    watcher_for(url, kafka_bootstrap, tmp_path / "state.json", sent).poll()
    (start,) = sent.of(name)
    assert sorted(d["name"] for d in start["inputs"]) == sorted([first, second])
    assert [(d["namespace"], d["name"]) for d in start["outputs"]] == [
        ("file", str(tmp_path / "out.txt"))
    ]
    delete(url, name)
