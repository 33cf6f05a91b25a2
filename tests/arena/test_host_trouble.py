"""The arena's own trouble is the arena's (issue 41): no descriptors, disk or memory left while a
match is set up is never a seat's fault; the match is withdrawn, raised as
:class:`~arena.errors.HostTrouble`, and played again later."""

from __future__ import annotations

import errno
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio

import arena.host.validation as validation
import arena.match as match_module
from arena.bots.command import BotProgram
from arena.bots.process import RunningBot
from arena.errors import ArenaError, HostTrouble, is_host_trouble
from arena.host.play import Entrant
from arena.host.store import CompetitionStore
from arena.match import BotLaunch, run_with_bots
from arena.rules import PlayedMatch
from arena.server import open_arena_server
from engine import Result
from tests.arena.host.serving import competition
from tests.arena.wire import SHORT_WHIST, make_spec

ARENA = str(Path(sys.executable).parent / "arena")


def test_what_counts_as_the_arena_s_own_trouble() -> None:
    assert is_host_trouble(OSError(errno.EMFILE, "Too many open files"))
    assert is_host_trouble(OSError(errno.ENOSPC, "No space left on device"))
    wrapped = ArenaError("cannot read the snapshot")
    wrapped.__cause__ = OSError(errno.ENFILE, "Too many open files in system")
    assert is_host_trouble(wrapped)
    assert is_host_trouble(HostTrouble("no descriptors"))
    assert not is_host_trouble(OSError(errno.ENOENT, "No such file or directory"))
    assert not is_host_trouble(ArenaError("bot command did not start: exit 127"))


@pytest.mark.slow
def test_no_descriptor_to_start_a_bot_withdraws_the_match_and_charges_nobody(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_start = match_module.start_bot
    started: list[RunningBot] = []

    async def start_or_run_out(program: Any, env: Mapping[str, str], log: Path, *a: Any) -> Any:
        if started:  # the second seat: the arena has no descriptor left
            raise OSError(errno.EMFILE, "Too many open files")
        started.append(await real_start(program, env, log, *a))
        return started[-1]

    monkeypatch.setattr(match_module, "start_bot", start_or_run_out)
    spec = make_spec("whist", 4, options=SHORT_WHIST)
    launches = [
        BotLaunch(BotProgram(f"{ARENA} bot random"), tmp_path / f"{s}.log") for s in range(4)
    ]

    async def main() -> None:
        async with open_arena_server() as server:
            server.register(spec)
            with pytest.raises(HostTrouble, match=r"could not start a bot: \[Errno 24\]"):
                await run_with_bots(server, spec, launches, server.address)
            # Withdrawn: nothing registered is left to wait for its bots, and the same match
            # can be registered again when it is played later.
            assert server.matches() == []
            server.register(spec)

    trio.run(main)
    assert len(started) == 1 and started[0].returncode is not None  # the first bot was stopped


class _Player:
    """Plays validation matches: the arena's trouble first, then clean matches."""

    def __init__(self, troubled: int) -> None:
        self.troubled = troubled

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        if self.troubled:
            self.troubled -= 1
            raise HostTrouble("the arena could not start a bot: [Errno 24] Too many open files")
        n = len(entrants)
        result = Result(tuple(1.0 / n for _ in range(n)), tuple(1 for _ in range(n)))
        return PlayedMatch(result, (), f"records/{match_id}.jsonl.gz", (None,) * n)


def test_a_validation_the_arena_could_not_play_waits_instead_of_failing_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validation, "version_program", lambda *a: BotProgram("true"))
    config = competition()
    with CompetitionStore(tmp_path / "cup", config) as store:
        author, _ = store.add_author("ann")
        version = store.add_version(author.id, "b", "archive", "ab" * 32, {"command": "x"})
        player = _Player(troubled=1)
        after = trio.run(validation.validate, store, player, config, version)
        assert after.status == "validating" and store.version(version.id).status == "validating"
        after = trio.run(validation.validate, store, player, config, store.version(version.id))
        assert after.status == "validated"
