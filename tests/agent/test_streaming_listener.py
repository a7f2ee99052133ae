"""The streaming listener without a JVM: one run id per query run, RUNNING at most once
per interval whatever the number of micro-batches, the end with its error, and a
callback that fails logs and raises nothing into the query."""

from __future__ import annotations

import json
from typing import Any

from headwater.agent.config import AgentConfig
from headwater.agent.run_model import RunModel
from headwater.agent.stream_events import progress_summary, stream_event
from headwater.agent.streaming import StreamingListener, StreamStep, streaming_run_id
from tests.agent.spec import validate_event

QUERY, RUN = "5f1c0a55-1111-4222-8333-444455556666", "0b0e6a3e-7777-4888-9999-aaaabbbbcccc"


class _Value:
    def __init__(self, value: Any) -> None:
        self._value = value

    def toString(self) -> str:  # noqa: N802 - the JVM's name
        return str(self._value)


class _Option:
    def __init__(self, value: str | None) -> None:
        self._value = value

    def isDefined(self) -> bool:  # noqa: N802
        return self._value is not None

    def get(self) -> str | None:
        return self._value


class _Started:
    def id(self) -> _Value:
        return _Value(QUERY)

    def runId(self) -> _Value:  # noqa: N802
        return _Value(RUN)

    def name(self) -> str:
        return "orders"


class _Progress:
    def __init__(self, batch: int) -> None:
        self._json = json.dumps(
            {
                "id": QUERY,
                "runId": RUN,
                "batchId": batch,
                "numInputRows": 2,
                "inputRowsPerSecond": 4.0,
                "processedRowsPerSecond": 8.0,
                "sources": [
                    {"description": "KafkaV2[Subscribe[t]]", "endOffset": {"t": {"0": batch}}}
                ],
                "sink": {"description": "FileSink[file:/out]", "numOutputRows": 2},
            }
        )

    def progress(self) -> _Progress:
        return self

    def json(self) -> str:
        return self._json


class _Terminated(_Started):
    def __init__(self, error: str | None) -> None:
        self._error = error

    def exception(self) -> _Option:
        return _Option(self._error)


class _Session:
    """A JVM session whose query manager knows no query (the start is noted anyway)."""

    def streams(self) -> Any:
        raise RuntimeError("no JVM here")


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _listener(interval: float = 10.0) -> tuple[StreamingListener, list[Any], list[Any], _Clock]:
    steps: list[Any] = []
    logged: list[tuple[str, BaseException]] = []
    clock = _Clock()
    listener = StreamingListener(
        _Session(), steps.append, lambda w, e: logged.append((w, e)), interval, clock
    )
    return listener, steps, logged, clock


def test_a_run_sends_one_running_per_interval_however_many_micro_batches():
    listener, steps, logged, clock = _listener(interval=10.0)
    listener.onQueryStarted(_Started())
    for batch in range(1000):  # 1,000 micro-batches over 100 s
        clock.now = batch * 0.1
        listener.onQueryProgress(_Progress(batch))
    listener.onQueryTerminated(_Terminated(None))

    kinds = [step.kind for step in steps]
    assert kinds[0] == "START" and kinds[-1] == "END"
    assert kinds.count("RUNNING") == 9  # at 10 s, 20 s, ... 90 s
    assert {step.run.run_id for step in steps} == {streaming_run_id(QUERY, RUN)}
    run = steps[-1].run
    assert (run.first_batch_id, run.batches, run.input_rows) == (0, 1000, 2000)
    # The query could not be found in the manager: logged once, the run goes on.
    assert [where for where, _ in logged] == ["finding a started streaming query"]


def test_the_run_id_is_derived_from_the_query_and_its_run():
    assert streaming_run_id(QUERY, RUN) == streaming_run_id(QUERY, RUN)
    assert streaming_run_id(QUERY, RUN) != streaming_run_id(QUERY, QUERY)


def test_a_failed_query_ends_with_its_error_and_a_broken_callback_raises_nothing():
    listener, steps, logged, _ = _listener()
    listener.onQueryStarted(_Started())
    listener.onQueryProgress(object())  # not a progress event: logged, not raised
    listener.onQueryTerminated(_Terminated("java.lang.RuntimeException: boom\n\tat a.b(C.java:1)"))
    end = steps[-1]
    assert isinstance(end, StreamStep) and end.kind == "END"
    trace = "java.lang.RuntimeException: boom\n\tat a.b(C.java:1)"
    assert end.error == ("java.lang.RuntimeException: boom", trace)
    assert "noting a streaming query's progress" in [where for where, _ in logged]
    assert listener.take_open_runs() == []


def test_events_carry_the_progress_facet_and_the_streaming_job_type():
    listener, steps, _, clock = _listener(interval=0.0)
    listener.onQueryStarted(_Started())
    clock.now = 1.0
    listener.onQueryProgress(_Progress(7))
    run = steps[-1].run
    model = RunModel(AgentConfig(), "app", "4.0.1", "0.1")
    start = stream_event(run, model, "START", run.start_time)
    running = stream_event(run, model, "RUNNING", run.start_time + 1)
    validate_event(start)
    validate_event(running)
    assert start["job"]["facets"]["jobType"]["processingType"] == "STREAMING"
    assert start["job"]["name"] == "app.orders"
    assert "progress" not in start["run"]["facets"]["spark_streaming"]
    progress = running["run"]["facets"]["spark_streaming"]["progress"]
    assert progress == progress_summary(run)
    assert progress["batchId"] == 7 and progress["sources"][0]["endOffset"] == {"t": {"0": 7}}
    assert progress["sink"] == {"description": "FileSink[file:/out]", "numOutputRows": 2}
    assert running["run"]["facets"]["parent"]["run"]["runId"] == model.app_run_id
