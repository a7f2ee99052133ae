"""The Marquez-compatible ``/api/v1`` operations on jobs, job versions and runs,
each a function that builds a :class:`Call` (namespaces, datasets, graphs and
search are in :mod:`headwater.client.operations.marquez`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from headwater.client.call import Call, model, params, segment, time_param
from headwater.client.models import (
    ChildRunList,
    Job,
    JobList,
    JobVersion,
    JobVersionList,
    Run,
    RunFacets,
    RunList,
    RunLiveness,
)

__all__ = [
    "abort_run",
    "child_runs",
    "complete_run",
    "create_run",
    "delete_job",
    "fail_run",
    "job",
    "job_runs",
    "job_version",
    "job_versions",
    "jobs",
    "put_job",
    "run",
    "run_facets",
    "run_liveness",
    "start_run",
    "tag_job",
    "untag_job",
]

V1 = "/api/v1"
Time = datetime | str | None


def _job_path(namespace: str, name: str) -> str:
    return f"{V1}/namespaces/{segment(namespace)}/jobs/{segment(name)}"


def jobs(
    namespace: str, *, limit: int = 100, offset: int = 0, cursor: str | None = None
) -> Call[JobList]:
    """A page of the namespace's jobs by name."""
    return Call(
        "GET",
        f"{V1}/namespaces/{segment(namespace)}/jobs",
        model(JobList),
        params(limit=limit, offset=offset, cursor=cursor),
    )


def job(namespace: str, name: str) -> Call[Job]:
    """One job, with its inputs, outputs and latest runs."""
    return Call("GET", _job_path(namespace, name), model(Job))


def put_job(
    namespace: str,
    name: str,
    *,
    type: Literal["BATCH", "STREAM", "SERVICE"],
    inputs: Sequence[tuple[str, str]] = (),
    outputs: Sequence[tuple[str, str]] = (),
    location: str | None = None,
    description: str | None = None,
    context: Mapping[str, Any] | None = None,
    run_id: str | None = None,
) -> Call[Job]:
    """Create or update a job; ``inputs``/``outputs`` are ``(namespace, name)`` pairs."""
    body = params(
        type=type,
        inputs=[{"namespace": ns, "name": n} for ns, n in inputs],
        outputs=[{"namespace": ns, "name": n} for ns, n in outputs],
        location=location,
        description=description,
        context=dict(context) if context is not None else None,
        runId=run_id,
    )
    return Call.json("PUT", _job_path(namespace, name), model(Job), body)


def delete_job(namespace: str, name: str) -> Call[Job]:
    """Soft-delete a job; answers it as it was."""
    return Call("DELETE", _job_path(namespace, name), model(Job))


def tag_job(namespace: str, name: str, tag: str) -> Call[Job]:
    """Tag a job."""
    return Call("POST", f"{_job_path(namespace, name)}/tags/{segment(tag)}", model(Job))


def untag_job(namespace: str, name: str, tag: str) -> Call[Job]:
    """Take a tag off a job."""
    return Call("DELETE", f"{_job_path(namespace, name)}/tags/{segment(tag)}", model(Job))


def job_versions(
    namespace: str, name: str, *, limit: int = 100, offset: int = 0, cursor: str | None = None
) -> Call[JobVersionList]:
    """A page of the job's versions, newest first."""
    return Call(
        "GET",
        _job_path(namespace, name) + "/versions",
        model(JobVersionList),
        params(limit=limit, offset=offset, cursor=cursor),
    )


def job_version(namespace: str, name: str, version: str) -> Call[JobVersion]:
    """One version of a job."""
    return Call(
        "GET", f"{_job_path(namespace, name)}/versions/{segment(version)}", model(JobVersion)
    )


def job_runs(
    namespace: str, name: str, *, limit: int = 100, offset: int = 0, cursor: str | None = None
) -> Call[RunList]:
    """A page of the job's runs, newest first."""
    return Call(
        "GET",
        _job_path(namespace, name) + "/runs",
        model(RunList),
        params(limit=limit, offset=offset, cursor=cursor),
    )


def create_run(
    namespace: str,
    name: str,
    *,
    run_id: str | None = None,
    nominal_start_time: Time = None,
    nominal_end_time: Time = None,
    args: Mapping[str, Any] | None = None,
) -> Call[Run]:
    """Create a run (state NEW) of the job's current version; 409 if ``run_id`` exists."""
    body = params(
        id=run_id,
        nominalStartTime=time_param(nominal_start_time),
        nominalEndTime=time_param(nominal_end_time),
        args=dict(args) if args is not None else None,
    )
    # Without an id each send creates another run.
    return Call.json(
        "POST",
        _job_path(namespace, name) + "/runs",
        model(Run),
        body,
        idempotent=run_id is not None,
    )


def run(run_id: str) -> Call[Run]:
    """One run, with the dataset versions it read and wrote."""
    return Call("GET", f"{V1}/jobs/runs/{segment(run_id)}", model(Run))


def child_runs(
    run_id: str, *, limit: int = 100, offset: int = 0, cursor: str | None = None
) -> Call[ChildRunList]:
    """A page of an orchestrator (parent) run's child runs."""
    return Call(
        "GET",
        f"{V1}/jobs/runs/{segment(run_id)}/children",
        model(ChildRunList),
        params(limit=limit, offset=offset, cursor=cursor),
    )


def run_facets(
    run_id: str,
    *,
    type: Literal["run", "job"] = "run",
) -> Call[RunFacets]:
    """The run's (or its job's) facets."""
    return Call(
        "GET", f"{V1}/jobs/runs/{segment(run_id)}/facets", model(RunFacets), params(type=type)
    )


def run_liveness(run_id: str) -> Call[RunLiveness]:
    """The run's state as its events made it, and whether it is stale now: its producer
    sends periodic RUNNING events and has been silent for longer than it should."""
    return Call("GET", f"/api/v2/runs/{segment(run_id)}", model(RunLiveness))


def _transition(action: str, run_id: str, at: Time) -> Call[Run]:
    return Call(
        "POST", f"{V1}/jobs/runs/{segment(run_id)}/{action}", model(Run), params(at=time_param(at))
    )


def start_run(run_id: str, *, at: Time = None) -> Call[Run]:
    """Mark a run RUNNING (at ``at``, now by default)."""
    return _transition("start", run_id, at)


def complete_run(run_id: str, *, at: Time = None) -> Call[Run]:
    """Mark a run COMPLETED."""
    return _transition("complete", run_id, at)


def fail_run(run_id: str, *, at: Time = None) -> Call[Run]:
    """Mark a run FAILED."""
    return _transition("fail", run_id, at)


def abort_run(run_id: str, *, at: Time = None) -> Call[Run]:
    """Mark a run ABORTED."""
    return _transition("abort", run_id, at)
