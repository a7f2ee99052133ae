"""Progress of long CLI work on stderr: a bar on a terminal, plain lines otherwise.

On a terminal -- as rich decides it: a tty, or ``FORCE_COLOR`` set -- a rich
progress bar redraws in place with the count, the events per second and the
time left. When stderr is a file or a pipe (a CI log, a container's output) a
redrawn bar would be noise, so a plain line with the same figures is written
every ``interval`` seconds instead, and one more at the end.

The rate shown is the recent one (the events of the last few seconds), so a
slow start or a stall shows when it happens; the last line gives the overall.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = ["EventProgress", "progress_bar", "stderr_console"]

# How long the recent rate looks back: long enough to smooth one batch's jump.
_RATE_WINDOW = 5.0


def stderr_console() -> Console:
    """The console progress goes to: stderr, without rich's source-file column."""
    return Console(stderr=True, log_path=False)


class _RateColumn(ProgressColumn):
    """The ``rate`` field of a task as events/s."""

    def render(self, task: Task) -> Text:
        rate = task.fields.get("rate")
        return Text("" if rate is None else f"{rate:,.0f} events/s", style="progress.data.speed")


def progress_bar(console: Console) -> Progress:
    """A rich bar: label, bar, percentage, events/s, a detail text, elapsed and left."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        _RateColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


class EventProgress:
    """Progress of work counted in events, against a total of events or of bytes.

    ``update(events, position)`` after each step: ``events`` done so far and,
    when the total is in bytes, the bytes read so far. ``echo`` writes a plain
    line (the tests and the CLI pass ``click.echo`` to stderr).
    """

    def __init__(
        self,
        label: str,
        *,
        total: int | None,
        total_in: str = "events",
        interval: float = 10.0,
        console: Console | None = None,
        echo: Callable[[str], Any] | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.total_in = total_in
        self.interval = interval
        self.console = console or stderr_console()
        self.echo = echo or (lambda line: self.console.print(line, markup=False, highlight=False))
        self.events = 0
        self.position = 0
        self.started = time.monotonic()
        self._window: list[tuple[float, int]] = [(self.started, 0)]
        self._last_line = self.started
        self._bar: Progress | None = None
        self._task: Any = None

    @property
    def on_terminal(self) -> bool:
        return self.console.is_terminal

    def __enter__(self) -> Self:
        if self.on_terminal:
            self._bar = progress_bar(self.console)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total, detail="", rate=None)
        return self

    def update(self, events: int, position: int | None = None, detail: str = "") -> None:
        """``events`` done so far; ``position`` in the total's unit (default: ``events``)."""
        now = time.monotonic()
        self.events = events
        self.position = events if position is None else position
        self._window.append((now, events))
        while len(self._window) > 2 and now - self._window[0][0] > _RATE_WINDOW:
            self._window.pop(0)
        if self._bar is not None:
            self._bar.update(
                self._task,
                completed=self.position,
                total=self.total,
                rate=self.rate(),
                detail=detail,
            )
        elif now - self._last_line >= self.interval:
            self._last_line = now
            self.echo(self.line(detail=detail))

    def rate(self, *, overall: bool = False) -> float:
        """Events per second: over the last few seconds, or since the start."""
        since, before = (self.started, 0) if overall else self._window[0]
        return (self.events - before) / max(time.monotonic() - since, 1e-9)

    def line(self, *, overall: bool = False, detail: str = "") -> str:
        """The figures as one plain line."""
        text = f"{self.label}: {self.events:,} events"
        if self.total and self.total_in == "events":
            text += f" of {self.total:,} ({100 * self.events // self.total}%)"
        elif self.total:
            text += f" ({100 * self.position // self.total}% of {self.total:,} bytes)"
        text += f", {self.rate(overall=overall):,.0f} events/s"
        if overall:
            text += f" overall in {time.monotonic() - self.started:.1f} s"
        return text + (f"; {detail}" if detail else "")

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.update(self._task, rate=self.rate(overall=True))
            self._bar.stop()
        else:
            self.echo(self.line(overall=True))
