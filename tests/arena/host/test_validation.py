"""Every version keeps its validation log, whatever the verdict (validated, failed, never
started, a live bot), and the log says what its validation matches showed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
from cardarena.messages import FaultInfo

import arena.host.validation as validation
from arena.bots.command import BotProgram
from arena.errors import ArenaError
from arena.host.play import Entrant
from arena.host.store import CompetitionStore, Version
from arena.layout import LOGS_DIR, seat_log_name
from arena.rules import PlayedMatch
from engine import Result
from tests.arena.host.serving import competition


class _Player:
    """Plays validation matches as told: each seat of the version writes a line; with
    ``crash``, the version's first seat crashes."""

    def __init__(self, directory: Path, crash: bool = False) -> None:
        self.directory, self.crash = directory, crash

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        logs: list[str | None] = []
        for seat, entrant in enumerate(entrants):
            log = f"{LOGS_DIR}/{seat_log_name(match_id, seat)}"
            (self.directory / LOGS_DIR).mkdir(exist_ok=True)
            (self.directory / log).write_text(f"{entrant.name} thinking in seat {seat}\n")
            logs.append(log)
        n = len(entrants)
        mine = [s for s, e in enumerate(entrants) if e.name != "random"]
        faults = (FaultInfo(mine[0], "crash", "exit status 3"),) if self.crash else ()
        result = Result(tuple(1.0 / n for _ in range(n)), tuple(1 for _ in range(n)), "a draw")
        return PlayedMatch(result, faults, f"records/{match_id}.jsonl.gz", tuple(logs))


def _validated(tmp_path: Path, kind: str, player: _Player | None = None) -> tuple[Version, str]:
    config = competition()
    with CompetitionStore(tmp_path / "cup", config) as store:
        author, _ = store.add_author("ann")
        if kind == "live":
            version, _ = store.add_live_version(author.id, "l")
        else:
            version = store.add_version(author.id, "b", kind, "ab" * 32, {"command": "x"})
        played = player or _Player(store.directory)
        after = trio.run(validation.validate, store, played, config, version)
        assert after.log_path == validation.validation_log(after.id)
        return after, (store.directory / after.log_path).read_text()


def test_a_validated_version_keeps_its_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "version_program", lambda *a: BotProgram("true"))
    version, log = _validated(tmp_path, "archive")
    assert version.status == "validated"
    assert log.startswith("validation match validate-1-1 against random, b@1 in seats 0, 2\n")
    assert "result: a draw\n--- seat 0's output ---\nb@1 thinking in seat 0\n" in log
    assert "random thinking" not in log  # the opponent's output is not the author's
    assert log.endswith("\nvalidated\n")


def test_a_failed_version_keeps_its_log_with_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validation, "version_program", lambda *a: BotProgram("true"))
    player = _Player(tmp_path / "cup", crash=True)
    version, log = _validated(tmp_path, "archive", player)
    assert version.status == "failed"
    assert "b@1 thinking in seat 2" in log
    assert log.endswith("\nfailed: crash in its validation match: exit status 3\n")


def test_a_version_that_cannot_start_keeps_a_log_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> BotProgram:
        raise ArenaError("its snapshot is incomplete")

    monkeypatch.setattr(validation, "version_program", broken)
    version, log = _validated(tmp_path, "archive")
    assert (version.status, log) == (
        "failed",
        "failed: it cannot be started: its snapshot is incomplete\n",
    )


def test_a_live_version_keeps_a_log_too(tmp_path: Path) -> None:
    version, log = _validated(tmp_path, "live")
    assert version.status == "validated"
    assert log == "l@1 is a live bot: it is checked as it plays\nvalidated\n"
