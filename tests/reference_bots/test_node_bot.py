"""The Node.js reference bot (reference_bots/js) plays full matches over the real gRPC server.

The npm packages are installed once per session (``npm ci``), unless node_modules already holds
exactly the versions of package-lock.json. How the matches are played and checked:
tests/reference_bots/playing.py.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.records.format import read_record
from arena.records.replay import verify
from engine import game_ids, get_game
from tests.node_packages import BOT_JS, ROOT
from tests.reference_bots import playing
from tests.reference_bots.playing import (
    ARENA,
    PY_RANDOM,
    MatchRun,
    assert_cut_mid_match_fails,
    assert_gone_between_matches,
    play,
    run_with_a_bad_token,
)

#: Every test here runs the Node bot (and npm) as processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow


def assert_clean(run: MatchRun, node_seats: Sequence[int], tmp_path: Path) -> int:
    """:func:`tests.reference_bots.playing.assert_clean` for the Node seats."""
    return playing.assert_clean(run, node_seats, tmp_path, "node-")


def test_whist_two_node_seats_against_python_random_bots(
    node_bot: list[str], tmp_path: Path
) -> None:
    node_first = [*node_bot, "--strategy", "first"]
    run = play("whist", [node_bot, PY_RANDOM, node_first, PY_RANDOM], tmp_path, seed=11)
    assert assert_clean(run, [0, 2], tmp_path) > 20
    assert {b.returncode for b in run.bots} == {0}, [b.stderr for b in run.bots]
    assert [p.bot_name for p in run.outcome.players][0::2] == ["node-random", "node-first"]


def test_arena_match_command_with_node_and_python_bots(node_bot: list[str], tmp_path: Path) -> None:
    node = f"node {BOT_JS.relative_to(ROOT)}"  # as a user types it, from the repository root
    bots = [node, "arena bot random", f"{node} --strategy first", "arena bot random"]
    done = subprocess.run(
        [str(ARENA), "match", "whist", "--seed", "4", "--out", str(tmp_path)]
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
    assert record.result["reason"] == "normal"
    assert record.result["faults"] == []
    node_decisions = [e for _, e in record.decisions() if e["seat"] in (0, 2)]
    assert len(node_decisions) > 20
    assert not [e for e in node_decisions if e["fallback"]]
    assert verify(path) == len(list(record.decisions()))


@pytest.mark.parametrize("game", [g for g in game_ids() if g != "whist"])
def test_every_other_game_with_node_and_python_seats(
    game: str, node_bot: list[str], tmp_path: Path
) -> None:
    seats = get_game(game).num_seats(get_game(game).configure(None, {}))
    commands = [node_bot if seat % 2 == 0 else PY_RANDOM for seat in range(seats)]
    node_seats = [seat for seat in range(seats) if seat % 2 == 0]
    run = play(game, commands, tmp_path, seed=5)
    assert assert_clean(run, node_seats, tmp_path) > 0


def test_node_bot_over_a_unix_socket(node_bot: list[str], tmp_path: Path) -> None:
    sock = tmp_path / "arena.sock"
    run = play("whist", [node_bot] * 4, tmp_path, seed=3, unix=sock)
    assert_clean(run, [0, 1, 2, 3], tmp_path)


def test_seeded_node_bots_replay_the_same_match(node_bot: list[str], tmp_path: Path) -> None:
    def actions(run: MatchRun) -> list[str]:
        return [str(e["action"]) for e in run.outcome.entries if e.get("type") == "decision"]

    options = {"points_to_win": "5"}
    first = play("whist", [node_bot] * 4, tmp_path / "a", seed=21, options=options)
    again = play("whist", [node_bot] * 4, tmp_path / "b", seed=21, options=options)
    assert actions(first) == actions(again)
    assert first.outcome.result.scores == again.outcome.result.scores


def test_rejected_hello_exits_non_zero_with_one_line(node_bot: list[str]) -> None:
    done = run_with_a_bad_token(node_bot)
    assert done.returncode == 3
    assert done.stderr.splitlines() == ["bot: rejected by the server: unknown token"]


def test_node_bot_cut_between_matches_exits_0(node_bot: list[str], tmp_path: Path) -> None:
    assert_gone_between_matches(node_bot, tmp_path)


def test_node_bot_cut_mid_match_exits_1(node_bot: list[str], tmp_path: Path) -> None:
    assert_cut_mid_match_fails(node_bot, tmp_path)


def test_unreachable_server_exits_1(node_bot: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_ADDRESS": f"unix:{tmp_path / 'nobody.sock'}"}
    done = subprocess.run(
        [*node_bot, "--connect-timeout", "0.5"], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1
    assert done.stderr.startswith("bot: cannot connect to unix:")


def test_usage_error_exits_2(node_bot: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    done = subprocess.run(node_bot, env=env, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "bot: error: no server address: pass --server or set ARENA_ADDRESS",
    )


def test_four_node_bots_decision_rate(node_bot: list[str], tmp_path: Path) -> None:
    run = play("whist", [node_bot] * 4, tmp_path, seed=8)
    decisions = assert_clean(run, [0, 1, 2, 3], tmp_path)
    rate = decisions / run.elapsed
    print(f"\nnode bots vs server: {decisions} decisions in {run.elapsed:.2f} s = {rate:.0f}/s")
    # A floor far below the measured rate: catches stalls (e.g. 40 ms per message), not noise.
    assert rate > 50
