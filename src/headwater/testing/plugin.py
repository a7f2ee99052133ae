"""headwater's pytest plugin: the ``lineage_capture`` and ``lineage_snapshot`` fixtures.

pytest loads it through the ``pytest11`` entry point wherever headwater is
installed. Loading it imports pytest and the standard library only; PySpark,
the agent and YAML are imported when a test first uses a fixture, so a test
session that never does pays nothing.

Options: ``--lineage-update`` writes every snapshot that is missing or differs
(the line's own file where one exists); ``--lineage-update-line`` writes the
running Spark line's own file. ini settings: ``lineage_snapshot_dir`` (default:
``lineage_snapshots`` beside each test file; a relative path is taken from the
rootdir), ``lineage_root`` (the default root that dataset paths are made
relative to; relative to the rootdir) and ``lineage_spark_fixture`` (the
session fixture ``lineage_capture.run`` takes its SparkSession from; ``spark``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from headwater.testing.lineage import Lineage

__all__ = ["LineageCapture", "LineageSnapshot"]

_WRITTEN = pytest.StashKey[list[str]]()

Root = str | os.PathLike[str] | Mapping[str, Any] | None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("headwater", "headwater lineage snapshots")
    group.addoption(
        "--lineage-update",
        action="store_true",
        default=False,
        help="Write lineage snapshots that are missing or differ.",
    )
    group.addoption(
        "--lineage-update-line",
        action="store_true",
        default=False,
        help="Write the running Spark line's own snapshot files "
        "(NAME.spark<major.minor>.lineage.yaml).",
    )
    parser.addini(
        "lineage_snapshot_dir",
        "Directory of lineage snapshot files (default: lineage_snapshots beside each test file).",
        default="",
    )
    parser.addini(
        "lineage_root",
        "Dataset paths under this directory are written relative to it (relative to the rootdir).",
        default="",
    )
    parser.addini(
        "lineage_spark_fixture",
        "Session fixture giving the SparkSession of lineage_capture.run.",
        default="spark",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_WRITTEN] = []


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    written = config.stash.get(_WRITTEN, [])
    if written:
        terminalreporter.write_sep("-", f"{len(written)} lineage snapshot(s) written")
        for path in written:
            terminalreporter.write_line(f"  {path}")


def _default_root(config: pytest.Config) -> str | None:
    value = str(config.getini("lineage_root") or "")
    return str(config.rootpath / value) if value else None


class LineageCapture:
    """``lineage_capture``: run PySpark code under the agent and return its :class:`Lineage`."""

    def __init__(self, request: pytest.FixtureRequest, workdir: Path) -> None:
        self._request = request
        self._workdir = workdir
        self._count = 0
        self.root: Root = _default_root(request.config)

    def _work(self) -> Path:
        self._count += 1
        return self._workdir / f"capture-{self._count}"

    def run(self, job: Callable[[Any], Any], *, root: Root = None, **config: Any) -> Lineage:
        """``job(spark)`` in this process, on the session fixture's SparkSession."""
        from headwater.testing.capture import capture_in_process

        name = str(self._request.config.getini("lineage_spark_fixture") or "spark")
        try:
            spark = self._request.getfixturevalue(name)
        except pytest.FixtureLookupError:
            pytest.fail(
                f"lineage_capture.run needs a SparkSession fixture named {name!r} "
                "(or set lineage_spark_fixture in the pytest ini)",
                pytrace=False,
            )
        return capture_in_process(spark, job, root=root or self.root, **config)

    def script(
        self,
        script: str | os.PathLike[str],
        *args: str | os.PathLike[str],
        root: Root = None,
        env: Mapping[str, str] | None = None,
    ) -> Lineage:
        """``python script *args`` in a subprocess with its own SparkSession."""
        from headwater.testing.capture import capture_script

        return capture_script(script, *args, root=root or self.root, env=env, workdir=self._work())

    def command(
        self,
        command: Sequence[str | os.PathLike[str]],
        *,
        root: Root = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> Lineage:
        """Any command (``spark-submit --conf k=v job.py``) in a subprocess."""
        from headwater.testing.capture import capture_command

        return capture_command(
            command, root=root or self.root, env=env, cwd=cwd, workdir=self._work()
        )


def _snapshot_name(nodeid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("::")[-1]).strip("_")


class LineageSnapshot:
    """``lineage_snapshot(lineage, name)``: the lineage must equal snapshot ``name``."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._config = request.config
        self._name = _snapshot_name(request.node.nodeid)
        configured = str(self._config.getini("lineage_snapshot_dir") or "")
        self.directory = (
            self._config.rootpath / configured
            if configured
            else Path(request.node.path).parent / "lineage_snapshots"
        )

    def __call__(self, lineage: Lineage, name: str | None = None) -> None:
        from headwater.testing.diff import diff_snapshots
        from headwater.testing.snapshot import (
            SUFFIX,
            dump_snapshot,
            line_of,
            load_snapshot,
            snapshot_file,
            to_snapshot,
        )

        name = name or self._name
        actual = to_snapshot(lineage)
        path = snapshot_file(self.directory, name, lineage.spark_version)
        line = line_of(lineage.spark_version)
        if self._config.getoption("lineage_update_line"):
            if not line:
                pytest.fail(
                    "--lineage-update-line: the events name no Spark version", pytrace=False
                )
            path = self.directory / f"{name}.spark{line}{SUFFIX}"
        expected = load_snapshot(path) if path.exists() else None
        difference = diff_snapshots(expected, actual) if expected is not None else None
        updating = self._config.getoption("lineage_update") or self._config.getoption(
            "lineage_update_line"
        )
        if updating:
            if expected is None or difference:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(dump_snapshot(actual, name), encoding="utf-8")
                self._config.stash[_WRITTEN].append(str(path))
            return
        if expected is None:
            pytest.fail(
                f"no lineage snapshot {path}\nrun pytest --lineage-update to write it",
                pytrace=False,
            )
        if difference:
            on = f" on Spark {lineage.spark_version}" if lineage.spark_version else ""
            pytest.fail(
                f"lineage of {name}{on} differs from {path}:\n"
                + difference.render("snapshot", "this run")
                + "\nrun pytest --lineage-update to accept the change"
                + (f" (--lineage-update-line to keep it for Spark {line} only)" if line else ""),
                pytrace=False,
            )


@pytest.fixture
def lineage_capture(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> LineageCapture:
    """Run PySpark code under the headwater agent (no server) and get its lineage."""
    return LineageCapture(request, tmp_path_factory.mktemp("lineage"))


@pytest.fixture
def lineage_snapshot(request: pytest.FixtureRequest) -> LineageSnapshot:
    """Compare a lineage with its snapshot file (``pytest --lineage-update`` writes it)."""
    return LineageSnapshot(request)
