"""Feedback while a tournament runs: a rich progress bar with ETA on a terminal, plain log lines
otherwise (one per finished match, with the count and an ETA), so logs and CI stay readable."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class Feedback:
    """Reports progress; the base class says nothing (for tests and ``--quiet``)."""

    def start(self, title: str, total: int, done: int) -> None:
        """The tournament has ``total`` matches, ``done`` of them finished before this run."""

    def finished(self, match_id: str, line: str, faults: int) -> None:
        """A match finished; ``line`` is its one-line summary."""

    def note(self, line: str) -> None:
        """Something worth a line (a skipped bot, a resume)."""

    def close(self) -> None:
        """The run is over (or interrupted)."""


class LogFeedback(Feedback):
    """One plain line per finished match on ``stream`` (stderr by default)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = 0
        self.done = 0
        self.started_with = 0
        self.t0 = 0.0
        self.title = ""

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def start(self, title: str, total: int, done: int) -> None:
        self.title, self.total, self.done, self.started_with = title, total, done, done
        self.t0 = time.monotonic()
        resumed = f", resuming with {done} already played" if done else ""
        self._print(f"{title}: {total} matches{resumed}")

    def finished(self, match_id: str, line: str, faults: int) -> None:
        self.done += 1
        played = self.done - self.started_with
        elapsed = time.monotonic() - self.t0
        eta = (self.total - self.done) * elapsed / played if played else 0.0
        extra = f" [{faults} fault{'s' * (faults != 1)}]" if faults else ""
        self._print(
            f"{self.title} [{self.done}/{self.total}] {match_id}: {line}{extra} (eta {eta:.0f}s)"
        )

    def note(self, line: str) -> None:
        self._print(line)


class RichFeedback(Feedback):
    """A live progress bar (count, elapsed, ETA) with the last result under it."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[last]}"),
            console=self.console,
            transient=False,
        )
        self.task: TaskID | None = None

    def start(self, title: str, total: int, done: int) -> None:
        self.progress.start()
        self.task = self.progress.add_task(title, total=total, completed=done, last="")
        if done:
            self.progress.console.print(f"{title}: resuming, {done}/{total} already played")

    def finished(self, match_id: str, line: str, faults: int) -> None:
        assert self.task is not None
        extra = f" [{faults} faults]" if faults else ""
        last = f"{match_id}: {line}{extra}"
        # The last result gets what width is left, so the bar and the ETA are never squeezed.
        room = self.console.width - len(self.progress.tasks[0].description) - 60
        if len(last) > room:
            last = last[: max(room - 1, 0)] + "…" if room > 8 else ""
        self.progress.update(self.task, advance=1, last=last)

    def note(self, line: str) -> None:
        self.progress.console.print(line)

    def close(self) -> None:
        self.progress.stop()


def feedback_for(stream: TextIO | None = None, quiet: bool = False) -> Feedback:
    """Rich on a terminal, plain lines otherwise, nothing when ``quiet``."""
    if quiet:
        return Feedback()
    out = stream or sys.stderr
    if out.isatty():
        return RichFeedback(Console(file=out))
    return LogFeedback(out)
