"""Analyses an author requests of their own seats in a finished match (docs/analysis.md, *On a
competition*): queued, computed by a supervised part of the host, kept for that author.

One file per request, ``analyses/<match>.a<author>.json`` under the competition directory,
written whole (a temporary file renamed): its ``state`` (``queued``, ``running``, ``done``,
``failed``), when it was asked, the seats, and when done the analysis (``arena replay analyze
--json``'s object), when failed a one-line reason. The worker (:meth:`Analyses.run`) runs
``arena replay analyze`` on the record in a child process, one at a time: the one definition
of an analysis, and the host's event loop never waits on it. A file left ``running`` by a host
that stopped is queued again when the worker starts. The host's retention treats these files
as the records they analyse (:func:`match_of_analysis`).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import structlog
import trio

from arena.errors import ArenaError
from arena.layout import write_atomically

log = structlog.get_logger("arena.host")

#: Under the competition directory.
ANALYSES_DIR = "analyses"
_NAME = re.compile(r"^(?P<match>.+)\.a(?P<author>[0-9]+)\.json$")
#: A request's states.
State = Literal["queued", "running", "done", "failed"]
DAY_S = 86_400.0
#: The most of a failed analysis's reason kept (its last line of error output).
MAX_REASON = 300


def analysis_name(match_id: str, author_id: int) -> str:
    """The file of ``author_id``'s analysis of ``match_id``, relative to the directory."""
    return f"{ANALYSES_DIR}/{match_id}.a{author_id}.json"


def match_of_analysis(name: str) -> str | None:
    """The match an analysis file's name belongs to; ``None`` for any other name."""
    found = _NAME.match(name)
    return found.group("match") if found else None


class AnalysisRefused(ArenaError):
    """A request the host will not queue; ``status`` is the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class AnalysisSettings:
    """The ``[analysis]`` table (docs/hosting.md)."""

    enabled: bool = True
    #: Requests an author may make in any 24 hours.
    per_author_per_day: int = 20
    #: Worlds per decision.
    worlds: int = 16
    #: The most one analysis may take, seconds; past it, it fails.
    timeout_s: int = 3600


class Analyses:
    """The competition's analysis requests: what the API asks and the worker that does them."""

    def __init__(
        self,
        directory: Path,
        settings: AnalysisSettings,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self.settings = settings
        self.clock = clock
        # Held while a request is counted and written: two at once cannot both take the last.
        self._lock = threading.Lock()
        self._wake: Callable[[], None] = lambda: None

    # --- what the API asks (from its worker threads) ------------------------------------------

    def request(self, match_id: str, author_id: int, seats: Sequence[int], record: str) -> State:
        """Queue ``author_id``'s analysis of their ``seats`` of ``match_id`` (its record at
        ``record``, relative to the directory); :class:`AnalysisRefused` when disabled (403),
        already asked (409) or over the day's limit (429)."""
        s = self.settings
        if not s.enabled:
            raise AnalysisRefused(403, "this competition does not analyse matches")
        with self._lock:
            mine = self.read(match_id, author_id)
            if mine is not None and mine["state"] != "failed":
                raise AnalysisRefused(
                    409, f"your analysis of {match_id} is already {mine['state']}"
                )
            now = self.clock()
            used = sum(1 for at in self._asked_at(author_id) if now - at < DAY_S)
            if used >= s.per_author_per_day:
                raise AnalysisRefused(
                    429,
                    f"{used} analyses asked in the last 24 hours: the limit is "
                    f"{s.per_author_per_day} a day",
                )
            self._write(
                match_id,
                author_id,
                {"match_id": match_id, "author_id": author_id, "state": "queued",
                 "requested_at": now, "seats": list(seats), "record": record,
                 "worlds": s.worlds, "reason": None, "analysis": None},
            )  # fmt: skip
        self._wake()
        return "queued"

    def read(self, match_id: str, author_id: int) -> dict[str, Any] | None:
        """The request of ``author_id`` on ``match_id`` as stored, or ``None``."""
        return _load(self.directory / analysis_name(match_id, author_id))

    def _stored(self, pattern: str = "*.json") -> list[dict[str, Any]]:
        """Every request whose file matches ``pattern`` (an unreadable file is skipped)."""
        found = (_load(path) for path in (self.directory / ANALYSES_DIR).glob(pattern))
        return [data for data in found if data is not None]

    def _asked_at(self, author_id: int) -> list[float]:
        mine = self._stored(f"*.a{author_id}.json")
        return [float(d.get("requested_at") or 0) for d in mine if d.get("author_id") == author_id]

    def _write(self, match_id: str, author_id: int, data: dict[str, Any]) -> None:
        path = self.directory / analysis_name(match_id, author_id)
        write_atomically(
            path, json.dumps(data).encode(), lambda why: ArenaError(f"{path}: cannot write: {why}")
        )

    # --- the worker -----------------------------------------------------------------------

    def _queued(self) -> list[dict[str, Any]]:
        found = [d for d in self._stored() if d.get("state") == "queued"]
        return sorted(found, key=lambda d: float(d.get("requested_at") or 0))

    def _update(self, item: dict[str, Any], **changes: Any) -> None:
        with self._lock:
            self._write(item["match_id"], item["author_id"], {**item, **changes})

    async def run(self) -> None:
        """Analyse what is queued, oldest first, one at a time, for ever (a supervised part)."""
        wakeup = trio.Event()
        token = trio.lowlevel.current_trio_token()

        def wake() -> None:
            with contextlib.suppress(trio.RunFinishedError):  # the host is stopping
                token.run_sync_soon(wakeup.set)

        self._wake = wake
        await trio.to_thread.run_sync(self._requeue_running)
        while True:
            queued = await trio.to_thread.run_sync(self._queued)
            if not queued:
                with trio.move_on_after(60):  # a request from another process is found too
                    await wakeup.wait()
                wakeup = trio.Event()
                continue
            await self._one(queued[0])

    def _requeue_running(self) -> None:
        for data in self._stored():
            if data.get("state") == "running":
                self._update(data, state="queued")

    async def _one(self, item: dict[str, Any]) -> None:
        await trio.to_thread.run_sync(lambda: self._update(item, state="running"))
        item = {**item, "state": "running"}
        # In the directory, the record named relative to it: a reason never shows the host's paths.
        command = [sys.executable, "-m", "arena.cli", "replay", "analyze", str(item["record"]),
                   "--worlds", str(item["worlds"]), "--json"]  # fmt: skip
        for seat in item["seats"]:
            command += ["--seat", str(seat)]
        began = self.clock()
        try:
            with trio.fail_after(self.settings.timeout_s):
                done = await trio.run_process(
                    command,
                    capture_stdout=True,
                    capture_stderr=True,
                    check=False,
                    cwd=self.directory,
                )
        except trio.TooSlowError:
            reason: str | None = f"took longer than {self.settings.timeout_s} s"
        else:
            reason = None if done.returncode == 0 else _last_line(done.stderr, done.returncode)
        data = None
        if reason is None:
            try:
                data = json.loads(done.stdout)
            except ValueError:
                reason = "the analyser's output was not JSON"
        changes: dict[str, Any] = {
            "state": "failed" if reason else "done",
            "reason": reason,
            "analysis": data,
            "seconds": round(self.clock() - began, 3),
        }
        await trio.to_thread.run_sync(lambda: self._update(item, **changes))
        told = {k: v for k, v in changes.items() if k != "analysis"}
        log.info("analysis", match=item["match_id"], author=item["author_id"], **told)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _last_line(stderr: bytes, code: int) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    text = lines[-1] if lines else f"the analyser exited with status {code}"
    text = text.removeprefix("arena: error: ")
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


__all__ = [
    "ANALYSES_DIR",
    "Analyses",
    "AnalysisRefused",
    "AnalysisSettings",
    "analysis_name",
    "match_of_analysis",
]
