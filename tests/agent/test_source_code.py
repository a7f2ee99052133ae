"""The job's code location and version, read from a real git checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from headwater.agent.config import AgentConfig
from headwater.agent.run_model import RunModel
from headwater.agent.source_code import source_code_location


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
        env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
             "GIT_COMMITTER_EMAIL": "a@b", "HOME": str(cwd), "PATH": "/usr/bin:/bin"},
    ).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "pipelines"
    (repo / "jobs").mkdir(parents=True)
    (repo / "jobs" / "silver.py").write_text("print('job')\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "remote", "add", "origin", "https://ci-user:s3cret@git.example.com/data/pipelines.git")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first")
    return repo


def test_a_script_in_a_checkout_names_repository_path_commit_and_branch(checkout: Path) -> None:
    location = source_code_location(script=checkout / "jobs" / "silver.py")
    assert location == {
        "type": "git",
        "url": "https://git.example.com/data/pipelines.git",
        "repoUrl": "https://git.example.com/data/pipelines.git",
        "path": "jobs/silver.py",
        "version": _git(checkout, "rev-parse", "HEAD"),
        "branch": "main",
    }
    assert "s3cret" not in str(location)


def test_packed_refs_and_a_detached_head_give_the_commit(checkout: Path) -> None:
    commit = _git(checkout, "rev-parse", "HEAD")
    _git(checkout, "pack-refs", "--all")
    assert source_code_location(script=checkout / "jobs" / "silver.py")["version"] == commit
    _git(checkout, "checkout", "-q", "--detach")
    detached = source_code_location(script=checkout / "jobs" / "silver.py")
    assert detached["version"] == commit and "branch" not in detached


def test_a_worktree_reads_its_repository_remote(checkout: Path, tmp_path: Path) -> None:
    _git(checkout, "worktree", "add", "-q", "-b", "fix", str(tmp_path / "wt"))
    location = source_code_location(script=tmp_path / "wt" / "jobs" / "silver.py")
    assert location["branch"] == "fix"
    assert location["version"] == _git(checkout, "rev-parse", "HEAD")
    assert location["repoUrl"] == "https://git.example.com/data/pipelines.git"


def test_configuration_names_or_overrides_it(tmp_path: Path, checkout: Path) -> None:
    loose = tmp_path / "loose.py"
    loose.write_text("")
    assert source_code_location(script=loose) is None
    configured = source_code_location({"url": "s3://code/jobs.zip", "version": "v42"}, script=loose)
    assert configured == {"url": "s3://code/jobs.zip", "version": "v42", "type": "git"}
    overridden = source_code_location({"version": "release-7"}, script=checkout / "jobs" / "silver.py")
    assert overridden["version"] == "release-7" and overridden["path"] == "jobs/silver.py"


def test_the_configuration_keys_reach_every_job_facet() -> None:
    config = AgentConfig.from_sources(
        {"spark.headwater.sourceCode.url": "https://git.example.com/x.git"},
        {"HEADWATER_SOURCE_CODE_VERSION": "abc123"},
    )
    assert dict(config.source_code) == {"url": "https://git.example.com/x.git", "version": "abc123"}
    model = RunModel(config, "app", "4.0.1", "0.1.0", source_code=source_code_location(config.source_code))
    facet = model.application_event("START")["job"]["facets"]["sourceCodeLocation"]
    assert (facet["url"], facet["version"]) == ("https://git.example.com/x.git", "abc123")
    assert facet["_schemaURL"].endswith("SourceCodeLocationJobFacet.json#/$defs/SourceCodeLocationJobFacet")
    off = AgentConfig.from_sources({"spark.openlineage.facets.sourceCodeLocation.disabled": "true"}, {})
    silent = RunModel(off, "app", "4.0.1", "0.1.0", source_code={"type": "git", "url": "u"})
    assert "sourceCodeLocation" not in silent.application_event("START")["job"]["facets"]


def test_application_details_ride_on_starts_and_environment_properties_on_every_run() -> None:
    details = {"master": "local[2]", "appName": "app", "applicationId": "local-1", "deployMode": "client"}
    model = RunModel(AgentConfig.from_sources({}, {}), "app", "4.0.1", "0.1.0", application_details=details)
    start, complete = model.application_event("START"), model.application_event("COMPLETE")
    assert {k: start["run"]["facets"]["spark_applicationDetails"][k] for k in details} == details
    assert "spark_applicationDetails" not in complete["run"]["facets"]
    for event in (start, complete):
        assert event["run"]["facets"]["environment-properties"]["environment-properties"] == {}
    off = AgentConfig.from_sources({"spark.openlineage.facets.spark_applicationDetails.disabled": "true"}, {})
    quiet = RunModel(off, "app", "4.0.1", "0.1.0", application_details=details)
    assert "spark_applicationDetails" not in quiet.application_event("START")["run"]["facets"]
