"""``arena play`` run as a user runs it: a real process, its bots, its pages; shared by the
bridge's tests and the browser tests."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.waiting import wait_until

#: A short whist match: one game of one point.
SHORT_WHIST = ["--option", "points_to_win=1", "--option", "games_per_rubber=1"]
RULES = "arena bot rules"
URL = re.compile(r"^seat (\d+): play at (http://127\.0\.0\.1:\d+/play/[^/\s]+/)$")


@dataclass
class PlayRun:
    """A running ``arena play``: its process and what it printed so far."""

    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def urls(self, people: int, timeout: float = 60.0) -> dict[int, str]:
        """Each person's page, by seat, once printed."""

        def printed() -> dict[int, str] | None:
            found = {int(m[1]): m[2] for line in self.lines if (m := URL.match(line))}
            assert found or self.proc.poll() is None, f"arena play exited: {self.errors}"
            return found if len(found) == people else None

        return wait_until(printed, timeout, what="the pages' URLs")

    def finish(self, timeout: float = 120.0) -> tuple[int, Path]:
        """The exit status and the record, once the process is done."""
        status = self.proc.wait(timeout)
        for reader in threading.enumerate():
            if reader.name.startswith("play-output"):
                reader.join(5)
        records = [line.split(": ", 1)[1] for line in self.lines if line.startswith("record: ")]
        assert records, f"no record: {self.lines} {self.errors}"
        return status, Path(records[0])


@contextmanager
def arena_play(game: str, args: Sequence[str], out: Path) -> Iterator[PlayRun]:
    """Start ``arena play GAME ARGS`` (bots unsandboxed, records in ``out``); kill it on exit."""
    with arena_running(["play", game, *args], out) as run:
        yield run


@contextmanager
def arena_running(argv: Sequence[str], out: Path) -> Iterator[PlayRun]:
    """Start ``arena ARGV`` (``play``, ``replay play``: bots unsandboxed, records in ``out``);
    kill it on exit."""
    cmd = [sys.executable, "-m", "arena.cli", *argv, "--out", str(out), "--no-sandbox"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = PlayRun(proc)

    def read(stream: object, into: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.append(line.rstrip("\n"))

    threads = [
        threading.Thread(target=read, args=(proc.stdout, run.lines), name="play-output-1"),
        threading.Thread(target=read, args=(proc.stderr, run.errors), name="play-output-2"),
    ]
    for t in threads:
        t.start()
    try:
        yield run
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for t in threads:
            t.join(5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def started(*argv: str, stderr: int = subprocess.DEVNULL) -> Iterator[subprocess.Popen[str]]:
    """``arena ARGV`` as a process (its output a pipe); killed on exit if still running."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@dataclass
class Lobby:
    """``arena serve`` playing one short whist match between search bots that think a little."""

    server: subprocess.Popen[str]
    address: str
    match_id: str
    bots: list[subprocess.Popen[str]]


@contextmanager
def lobby_match(out: Path, budget_ms: int = 100) -> Iterator[Lobby]:
    """A lobby match of ``arena serve`` (records in ``out``), once the server lists it."""
    from arena.people.watch import list_matches

    address = f"127.0.0.1:{free_port()}"
    serve = ["serve", "--listen", address, *SHORT_WHIST, "--out", str(out)]
    with ExitStack() as stack:
        server = stack.enter_context(started(*serve, "--log-level", "warning"))
        bot = ["bot", "search", "--budget-ms", str(budget_ms), "--server", address]
        bots = [stack.enter_context(started(*bot, "--matches", "1")) for _ in range(4)]

        def running() -> str | None:
            assert server.poll() is None, "arena serve exited"
            try:
                listed = list_matches(address)
            except Exception:  # not listening yet
                return None
            return listed[0].match_id if listed else None

        match_id = wait_until(running, 60, what="a lobby match")
        yield Lobby(server, address, match_id, bots)
