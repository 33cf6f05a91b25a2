"""The C++ reference bot (reference_bots/cpp) plays every game over the real gRPC server.

The bot is built once per session (tests/cpp_bot.py); a missing toolchain fails these tests with
the command that installs it. How the matches are played and checked:
tests/reference_bots/playing.py. Each match has C++ bots in every seat but, at a table of more
than two, the last, which a Python SDK bot plays: the bots of two languages at one table.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import trio

from arena.records.format import read_record
from arena.rules import MatchRules
from arena.server import open_arena_server
from arena.server.lobby import Lobby, LobbyConfig
from engine import OptionValue, game_ids
from tests.reference_bots.playing import (
    ARENA,
    CASES,
    ROOT,
    SHORT_WHIST,
    MatchRun,
    assert_clean,
    assert_cut_mid_match_fails,
    assert_gone_between_matches,
    play,
    play_beside_python,
    run_with_a_bad_token,
)
from tests.waiting import async_wait_until

#: Every test here runs bot processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow


def test_the_cases_cover_every_game() -> None:
    assert {game for game, _, _ in CASES} == set(game_ids())


@pytest.mark.parametrize(("game", "players", "options"), CASES)
def test_cpp_bot_plays_every_game(
    game: str,
    players: int | None,
    options: dict[str, OptionValue],
    cpp_bot: list[str],
    tmp_path: Path,
) -> None:
    play_beside_python(game, players, options, cpp_bot, tmp_path, "cpp-")


def test_seeded_cpp_bots_replay_the_same_match(cpp_bot: list[str], tmp_path: Path) -> None:
    def actions(run: MatchRun) -> list[str]:
        return [str(e["action"]) for e in run.outcome.entries if e.get("type") == "decision"]

    first = play("whist", [cpp_bot] * 4, tmp_path / "a", seed=21, options=SHORT_WHIST)
    again = play("whist", [cpp_bot] * 4, tmp_path / "b", seed=21, options=SHORT_WHIST)
    assert_clean(first, range(4), tmp_path, "cpp-")
    assert actions(first) == actions(again)


def test_cpp_bot_over_a_unix_socket(cpp_bot: list[str], tmp_path: Path) -> None:
    run = play("whist", [cpp_bot] * 4, tmp_path, seed=3, options=SHORT_WHIST, unix=tmp_path / "s")
    assert_clean(run, range(4), tmp_path, "cpp-")


def test_arena_match_command_with_cpp_and_python_bots(cpp_bot: list[str], tmp_path: Path) -> None:
    cpp = str(Path(cpp_bot[0]).relative_to(ROOT))  # as a user types it, from the repository root
    bots = [cpp, "arena bot random", cpp, "arena bot random"]
    done = subprocess.run(
        [str(ARENA), "match", "whist", "--seed", "4", "--out", str(tmp_path)]
        + [arg for key, value in SHORT_WHIST.items() for arg in ("--option", f"{key}={value}")]
        + [arg for bot in bots for arg in ("--bot", bot)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "[normal]" in done.stdout.splitlines()[0], done.stdout
    assert "(0 by the referee)" in done.stdout, done.stdout
    (path,) = tmp_path.glob("*.jsonl.gz")
    record = read_record(path)
    assert record.result["faults"] == []
    assert [e for _, e in record.decisions() if e["seat"] in (0, 2)]


def test_rejected_hello_exits_3_with_one_line(cpp_bot: list[str]) -> None:
    done = run_with_a_bad_token(cpp_bot)
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == ["bot: rejected by the server: unknown token"]


def test_cpp_bot_cut_between_matches_exits_0(cpp_bot: list[str], tmp_path: Path) -> None:
    assert_gone_between_matches(cpp_bot, tmp_path)


def test_cpp_bot_cut_mid_match_exits_1(cpp_bot: list[str], tmp_path: Path) -> None:
    assert_cut_mid_match_fails(cpp_bot, tmp_path)


def test_cpp_bots_leave_a_lobby_after_max_matches(cpp_bot: list[str], tmp_path: Path) -> None:
    """With --matches 1 (Hello.max_matches) the lobby seats each bot once; after its MatchEnd the
    bot half-closes its stream, the server ends it (status OK), and the bot exits 0."""
    logs = [tmp_path / f"bot{i}.stderr" for i in range(4)]

    def bots(address: str) -> list[int]:
        env = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}  # lobby guests
        procs = []
        for i, log in enumerate(logs):
            command = [*cpp_bot, "--server", address, "--matches", "1", "--seed", str(i)]
            with log.open("wb") as sink:
                procs.append(
                    subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=sink)
                )
        return [p.wait(60) for p in procs]

    async def main() -> list[int]:
        async with open_arena_server("127.0.0.1:0") as server:
            config = LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST), seed=5, out=tmp_path)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(Lobby(server, config).run)
                codes = await trio.to_thread.run_sync(bots, server.address)
                # The lobby writes the record once the match's outcome is in: wait for it.
                await async_wait_until(
                    lambda: list(tmp_path.glob("*.jsonl.gz")), 10, what="the match record"
                )
                nursery.cancel_scope.cancel()
            return codes

    codes = trio.run(main)
    for code, log in zip(codes, logs, strict=True):
        stderr = log.read_text(errors="replace")
        assert code == 0, stderr
        assert "server error" not in stderr, stderr
        assert stderr.count(" ends (normal)") == 1, stderr
    (path,) = tmp_path.glob("*.jsonl.gz")
    record = read_record(path)
    assert record.result["reason"] == "normal"
    assert record.result["faults"] == []
