"""Lineage snapshots: the stable, sorted, diff-friendly form of a job's lineage.

A snapshot keeps what a reviewer reads in a pull request and nothing that
changes from run to run: no run ids, times, statistics, producer URLs or
transformation descriptions (Spark words those differently per line and per
plan), and file paths relative to the capture's root. One run per job name;
every list sorted except a schema, whose column order is part of the data::

    application: retail_gold_revenue_daily
    runs:
    - job: retail_gold_revenue_daily.adaptive_spark_plan.gold_revenue_daily
      inputs:
        lake/silver/orders:
        - order_id integer
      outputs:
        lake/gold/revenue_daily:
          schema:
          - total_revenue decimal(22,2)
          columns:
            total_revenue:
            - lake/silver/orders.total DIRECT/AGGREGATION
          dataset:
          - lake/silver/orders.status INDIRECT/FILTER

Files are YAML (``.yaml``/``.yml``) or JSON (``.json``), read by
:func:`load_snapshot` into the same dictionaries. A snapshot named ``NAME`` is
``NAME.lineage.yaml``; a Spark line whose plans give other lineage keeps its own
``NAME.spark<major.minor>.lineage.yaml`` beside it, which wins on that line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from headwater.errors import ConfigError
from headwater.testing.lineage import Dataset, Lineage, Output

__all__ = [
    "SUFFIX",
    "SnapshotError",
    "check_snapshot",
    "dump_snapshot",
    "line_of",
    "load_snapshot",
    "snapshot_file",
    "to_snapshot",
]

SUFFIX = ".lineage.yaml"


class SnapshotError(ConfigError):
    """A snapshot file that cannot be read or is not a lineage snapshot."""


def _schema(dataset: Dataset) -> list[str]:
    return [f"{f.name} {f.type}".rstrip() for f in dataset.schema]


def _output(output: Output) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if output.dataset.tables:
        body["tables"] = list(output.dataset.tables)
    body["schema"] = _schema(output.dataset)
    columns: dict[str, list[str]] = {}
    for edge in output.edges:
        if edge.target is not None:
            columns.setdefault(edge.target, []).append(edge.describe())
    body["columns"] = {name: sorted(set(columns[name])) for name in sorted(columns)}
    body["dataset"] = sorted({e.describe() for e in output.dataset_edges})
    return body


def to_snapshot(lineage: Lineage) -> dict[str, Any]:
    """The snapshot dictionary of ``lineage`` (runs of one job name merged, all sorted)."""
    runs: dict[str, dict[str, Any]] = {}
    for run in lineage.runs:
        entry = runs.setdefault(run.job, {"job": run.job, "inputs": {}, "outputs": {}})
        for dataset in run.inputs:
            entry["inputs"][dataset.label] = _schema(dataset)
        for output in run.outputs:
            entry["outputs"][output.dataset.label] = _output(output)
    ordered = []
    for job in sorted(runs):
        entry = runs[job]
        ordered.append(
            {
                "job": job,
                "inputs": {name: entry["inputs"][name] for name in sorted(entry["inputs"])},
                "outputs": {name: entry["outputs"][name] for name in sorted(entry["outputs"])},
            }
        )
    return {"application": lineage.application, "runs": ordered}


def dump_snapshot(snapshot: Mapping[str, Any], title: str = "") -> str:
    """YAML text of ``snapshot``: block style, one fact per line, keys in snapshot order."""
    import yaml

    header = "# headwater lineage snapshot"
    header += f": {title}" if title else ""
    header += " (pytest --lineage-update rewrites it)\n"
    body = yaml.safe_dump(
        dict(snapshot), sort_keys=False, default_flow_style=False, allow_unicode=True, width=10_000
    )
    return header + body


def check_snapshot(value: Any, source: str) -> dict[str, Any]:
    """``value`` if it has a snapshot's shape; raises :class:`SnapshotError` naming ``source``."""
    if not isinstance(value, Mapping) or not isinstance(value.get("runs"), list):
        raise SnapshotError(f"{source} is not a lineage snapshot (no 'runs' list)")
    for index, run in enumerate(value["runs"]):
        if not isinstance(run, Mapping) or not isinstance(run.get("job"), str):
            raise SnapshotError(f"{source}: runs[{index}] has no 'job' name")
        for side in ("inputs", "outputs"):
            if not isinstance(run.get(side, {}), Mapping):
                raise SnapshotError(f"{source}: runs[{index}].{side} is not a mapping")
    return dict(value)


def load_snapshot(path: str | Path) -> dict[str, Any]:
    """The snapshot in the YAML or JSON file ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SnapshotError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        if path.suffix == ".json":
            value = json.loads(text)
        else:
            import yaml

            value = yaml.safe_load(text)
    except ValueError as exc:  # json.JSONDecodeError and yaml.YAMLError's marks
        raise SnapshotError(
            f"{path} is not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}"
        ) from exc
    except Exception as exc:
        raise SnapshotError(f"{path} is not valid YAML: {exc}") from exc
    return check_snapshot(value, str(path))


def line_of(spark_version: str | None) -> str | None:
    """``major.minor`` of a Spark version (``4.1.1`` -> ``4.1``)."""
    if not spark_version:
        return None
    parts = spark_version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else None


def snapshot_file(directory: Path, name: str, spark_version: str | None) -> Path:
    """The file holding snapshot ``name`` on this Spark line: the line's own if it has one."""
    line = line_of(spark_version)
    if line:
        own = directory / f"{name}.spark{line}{SUFFIX}"
        if own.exists():
            return own
    return directory / f"{name}{SUFFIX}"
