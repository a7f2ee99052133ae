"""The difference between two lineage snapshots, as a list of changes a person reads.

Pure: it compares two snapshot dictionaries (:mod:`.snapshot`), wherever they
came from -- a snapshot file, a test's capture, a stored run -- and knows
nothing of files, servers or the command line. Runs are matched by job name;
within a run, inputs and outputs by dataset label; within an output, columns by
name. Each change is one line: ``-`` what only the old side has, ``+`` what only
the new side has, ``~`` what both have differently (a column's type, the
columns' order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Change", "LineageDiff", "diff_snapshots"]


@dataclass(frozen=True)
class Change:
    """One difference: in ``job``, under ``scope`` (``input X``, ``output X`` or empty)."""

    job: str
    scope: str
    sign: str  # "-" old only, "+" new only, "~" changed
    text: str

    def line(self) -> str:
        return f"{self.sign} {self.text}"


@dataclass(frozen=True)
class LineageDiff:
    """Every change from ``old`` to ``new``; false when the two are the same."""

    changes: tuple[Change, ...]

    def __bool__(self) -> bool:
        return bool(self.changes)

    def counts(self) -> dict[str, int]:
        """How many lines of each sign."""
        return {sign: sum(c.sign == sign for c in self.changes) for sign in "-+~"}

    def render(self, old: str = "old", new: str = "new") -> str:
        """The changes grouped by job and dataset, one per line, under a legend."""
        if not self.changes:
            return "lineage is the same"
        lines = [f"lineage differs (- {old}, + {new}, ~ changed):"]
        current_job = current_scope = None
        for change in self.changes:
            if change.job != current_job:
                lines.append(f"  job {change.job}")
                current_job, current_scope = change.job, None
            if not change.scope:
                current_scope = None
            elif change.scope != current_scope:
                lines.append(f"    {change.scope}")
                current_scope = change.scope
            indent = "      " if change.scope else "    "
            lines.append(indent + change.line())
        return "\n".join(lines)


def _runs(snapshot: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    runs: dict[str, Mapping[str, Any]] = {}
    for run in snapshot.get("runs") or []:
        job = str(run.get("job"))
        key, n = job, 2
        while key in runs:  # a hand-written file may repeat a job; keep both
            key, n = f"{job} #{n}", n + 1
        runs[key] = run
    return runs


def _fields(schema: Iterable[str] | None) -> dict[str, str]:
    fields: dict[str, str] = {}
    for entry in schema or []:
        name, _, kind = str(entry).partition(" ")
        fields[name] = kind
    return fields


def _schema_changes(old: Any, new: Any) -> list[tuple[str, str]]:
    before, after = _fields(old), _fields(new)
    changes = [("-", f"schema {n} {before[n]}".rstrip()) for n in before if n not in after]
    changes += [("+", f"schema {n} {after[n]}".rstrip()) for n in after if n not in before]
    changes += [
        ("~", f"schema {n} {before[n]} -> {after[n]}")
        for n in before
        if n in after and before[n] != after[n]
    ]
    common = [n for n in before if n in after]
    if not changes and common != [n for n in after if n in before]:
        changes.append(
            (
                "~",
                f"column order {', '.join(common)} -> {', '.join(n for n in after if n in before)}",
            )
        )
    return changes


def _set_changes(old: Iterable[str], new: Iterable[str], prefix: str) -> list[tuple[str, str]]:
    before, after = set(old), set(new)
    return [("-", f"{prefix}{x}") for x in sorted(before - after)] + [
        ("+", f"{prefix}{x}") for x in sorted(after - before)
    ]


def _output_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, str]]:
    changes = _set_changes(old.get("tables") or [], new.get("tables") or [], "table ")
    changes += _schema_changes(old.get("schema"), new.get("schema"))
    old_columns, new_columns = old.get("columns") or {}, new.get("columns") or {}
    for column in sorted(set(old_columns) | set(new_columns)):
        changes += _set_changes(
            old_columns.get(column) or [], new_columns.get(column) or [], f"column {column} <- "
        )
    changes += _set_changes(old.get("dataset") or [], new.get("dataset") or [], "dataset <- ")
    return changes


def _run_changes(job: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    changes: list[Change] = []
    for side, word in (("inputs", "input"), ("outputs", "output")):
        before, after = old.get(side) or {}, new.get(side) or {}
        for name in sorted(set(before) - set(after)):
            changes.append(Change(job, "", "-", f"{word} {name}"))
        for name in sorted(set(after) - set(before)):
            changes.append(Change(job, "", "+", f"{word} {name}"))
        for name in sorted(set(before) & set(after)):
            if side == "inputs":
                found = _schema_changes(before[name], after[name])
            else:
                found = _output_changes(before[name] or {}, after[name] or {})
            changes += [Change(job, f"{word} {name}", sign, text) for sign, text in found]
    return changes


def diff_snapshots(old: Mapping[str, Any], new: Mapping[str, Any]) -> LineageDiff:
    """What changed from snapshot ``old`` to snapshot ``new``."""
    before, after = _runs(old), _runs(new)
    changes: list[Change] = []
    for job in sorted(set(before) | set(after)):
        if job not in after:
            changes.append(Change(job, "", "-", "run (the job no longer runs)"))
            changes += [
                Change(job, "", "-", f"{word} {name}")
                for side, word in (("inputs", "input"), ("outputs", "output"))
                for name in sorted(before[job].get(side) or {})
            ]
        elif job not in before:
            changes.append(Change(job, "", "+", "run (a new job)"))
            changes += [
                Change(job, "", "+", f"{word} {name}")
                for side, word in (("inputs", "input"), ("outputs", "output"))
                for name in sorted(after[job].get(side) or {})
            ]
        else:
            changes += _run_changes(job, before[job], after[job])
    return LineageDiff(tuple(changes))
