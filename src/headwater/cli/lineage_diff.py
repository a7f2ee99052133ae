"""``headwater lineage diff A B``: the lineage difference of two snapshots, runs or jobs.

Each side is one of:

* a file: a lineage snapshot (``.yaml``, ``.yml``, ``.json``, as ``pytest
  --lineage-update`` writes them) or agent events (``.jsonl``, as the file
  transport writes them);
* ``run:UUID`` (or a bare UUID): a stored run with the runs it is the parent
  of -- a Spark application's run with its actions;
* ``job:NAMESPACE:NAME``: the job's latest run (its current version).

Stored runs come from a server (``--url``) or a database (``--db``), as for the
other query commands. The exit code is for CI: 0 the same, 1 different, 2 an
error (a side that cannot be read).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["LineageCommand", "diff"]

#: Events are read from the stored log this many at a time.
_PAGE = 1_000


def _parse(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _db_run(conn: Any, run_id: str) -> dict[str, Any]:
    from headwater.server.responses import RunResponse
    from headwater.store.reads.runs import get_run

    body: dict[str, Any] = RunResponse.model_validate(get_run(conn, run_id)).model_dump(mode="json")
    return body


def _db_children(conn: Any, run_id: str, offset: int) -> dict[str, Any]:
    from headwater.server.responses import ChildRunList
    from headwater.store.reads.common import Page
    from headwater.store.reads.runs import child_runs

    items, total = child_runs(conn, run_id, Page(limit=_PAGE, offset=offset))
    answer = {"runs": items, "totalCount": total}
    body: dict[str, Any] = ChildRunList.model_validate(answer).model_dump(mode="json")
    return body


def _db_job(conn: Any, namespace: str, name: str) -> dict[str, Any]:
    from headwater.server.responses import JobResponse
    from headwater.store.reads.jobs import get_job

    body: dict[str, Any] = JobResponse.model_validate(get_job(conn, namespace, name)).model_dump(
        mode="json"
    )
    return body


def _db_events(conn: Any, after: str | None, before: str | None, offset: int) -> dict[str, Any]:
    from headwater.store.reads.common import Page
    from headwater.store.reads.search import list_events

    items, total = list_events(
        conn, Page(limit=_PAGE, offset=offset), _parse(before), _parse(after), True
    )
    return {"events": items, "totalCount": total}


class _Stored:
    """Runs and jobs read from a server or a database."""

    def __init__(self, target: Target) -> None:
        self.target = target

    def job_run(self, namespace: str, name: str) -> str:
        from urllib.parse import quote

        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/jobs/{quote(name, safe='')}"
        job = self.target.get(path, {}, _db_job, namespace, name)
        latest = job.get("latestRun") or {}
        if not latest.get("id"):
            raise click.ClickException(f"job {namespace}:{name} has no run")
        return str(latest["id"])

    def run_events(self, run_id: str) -> list[dict[str, Any]]:
        """The events of run ``run_id`` and of the runs it is the parent of."""
        runs = [self.target.get(f"/api/v1/jobs/runs/{run_id}", {}, _db_run, run_id)]
        offset = 0
        while True:
            page = self.target.get(
                f"/api/v1/jobs/runs/{run_id}/children",
                {"limit": _PAGE, "offset": offset},
                _db_children,
                run_id,
                offset,
            )
            runs += page.get("runs") or []
            offset += _PAGE
            if offset >= int(page.get("totalCount") or 0):
                break
        ids = {str(r["id"]) for r in runs}
        starts = [_parse(r.get("startedAt") or r.get("createdAt")) for r in runs]
        ends = [_parse(r.get("endedAt") or r.get("updatedAt")) for r in runs]
        # The event log is searched by time: from just before the first of these runs
        # started to just after the last one ended, keeping only their own events.
        after = min(t for t in starts if t is not None) - timedelta(seconds=1)
        before = max(t for t in ends if t is not None) + timedelta(seconds=1)
        return self._events_between(after.isoformat(), before.isoformat(), ids)

    def _events_between(self, after: str, before: str, ids: set[str]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        offset = 0
        while True:
            params = {
                "after": after,
                "before": before,
                "sortDirection": "asc",
                "limit": _PAGE,
                "offset": offset,
            }
            page = self.target.get(
                "/api/v1/events/lineage", params, _db_events, after, before, offset
            )
            batch = page.get("events") or []
            events += [e for e in batch if str((e.get("run") or {}).get("runId")) in ids]
            offset += _PAGE
            if not batch or offset >= int(page.get("totalCount") or 0):
                return events


def _side(spec: str, target: Target, root: str | None) -> dict[str, Any]:
    """The snapshot dictionary of one side of the diff."""
    from headwater.testing.capture import read_events
    from headwater.testing.events import lineage_from_events
    from headwater.testing.snapshot import load_snapshot, to_snapshot

    path = Path(spec)
    if path.is_file():
        if path.suffix == ".jsonl":
            return to_snapshot(lineage_from_events(read_events(path), root))
        return load_snapshot(path)
    kind, _, rest = spec.partition(":")
    stored = _Stored(target)
    if kind == "job" and rest.count(":") >= 1:
        namespace, _, name = rest.partition(":")
        run_id = stored.job_run(namespace, name)
    else:
        run_id = rest if kind == "run" else spec
        try:
            uuid.UUID(run_id)
        except ValueError:
            raise click.ClickException(
                f"{spec!r} is neither a file, run:UUID nor job:NAMESPACE:NAME"
            ) from None
    events = stored.run_events(run_id)
    if not events:
        raise click.ClickException(f"no events stored for run {run_id}")
    return to_snapshot(lineage_from_events(events, root))


@click.command(short_help="How the lineage of two snapshots, runs or jobs differs.")
@click.argument("old")
@click.argument("new")
@click.option(
    "--root",
    metavar="DIR",
    help="Write file paths under DIR relative to it (for runs and .jsonl events; "
    "snapshot files already are).",
)
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="The diff as text, or as JSON changes.",
)
@target_options
def diff(old: str, new: str, root: str | None, output: str, url: str, db_url: str | None) -> None:
    """Show how the lineage of NEW differs from OLD; exit 1 if it does, 2 on an error.

    OLD and NEW are each a snapshot file (.yaml/.json), an events file (.jsonl),
    run:UUID (the run and its child runs) or job:NAMESPACE:NAME (its latest run).
    """
    from headwater.errors import HeadwaterError
    from headwater.testing.diff import diff_snapshots

    target = Target(url, db_url)
    try:
        difference = diff_snapshots(_side(old, target, root), _side(new, target, root))
    except (click.ClickException, HeadwaterError) as exc:
        message = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        click.echo(f"Error: {message}", err=True)
        click.get_current_context().exit(2)
    if output == "json":
        changes = [
            {"job": c.job, "scope": c.scope, "sign": c.sign, "change": c.text}
            for c in difference.changes
        ]
        click.echo(json.dumps({"same": not difference, "changes": changes}, indent=2))
    else:
        click.echo(difference.render(old, new))
    click.get_current_context().exit(1 if difference else 0)


class LineageCommand(click.Command):
    """``headwater lineage``, which also answers ``headwater lineage diff A B``.

    A node id always has a kind and a colon, so the word ``diff`` in its place
    can only mean the subcommand.
    """

    subcommands = {"diff": diff}

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        if args and args[0] in self.subcommands:
            command = self.subcommands[args[0]]
            name = f"{info_name} {args[0]}" if info_name else args[0]
            return command.make_context(name, args[1:], parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        with formatter.section("Subcommands"):
            formatter.write_dl(
                [(name, command.get_short_help_str()) for name, command in self.subcommands.items()]
            )
