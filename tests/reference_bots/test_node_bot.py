"""The Node.js reference bot (reference_bots/js) plays full matches over the real gRPC server.

The npm packages are installed once per session (``npm ci``), unless node_modules already holds
exactly the versions of package-lock.json. The matches run on the server's Python API
(:func:`arena.server.open_arena_server`): each seat's bot is a real process that gets
ARENA_ADDRESS, ARENA_TOKEN and ARENA_SEED, as under ``arena match``. A decision the referee had
to replace by its fallback, or any fault, would mean the bot's answer was not legal; the match
record is also replayed through the engine, which checks every action.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from arena.records.format import read_record, write_record
from arena.records.replay import verify
from arena.seeds import seat_seed
from arena.server import MatchOutcome, MatchSpec, SeatSpec, new_token, open_arena_server
from engine import OptionValue, game_ids, get_game
from tests.node_packages import BOT_JS, ROOT

#: Every test here runs the Node bot (and npm) as processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

ARENA = Path(sys.executable).with_name("arena")  # the venv's console script
# A Python bot of the SDK; it leaves after its match instead of waiting for the server to return.
PY_RANDOM = [str(ARENA), "bot", "random", "--matches", "1"]


@dataclass
class BotRun:
    """How one seat's bot process ended."""

    command: list[str]
    returncode: int
    stderr: str


@dataclass
class MatchRun:
    """A finished match and its bots."""

    outcome: MatchOutcome
    bots: list[BotRun]
    #: Seconds from the moment every bot was connected to the end of the match.
    elapsed: float


async def _play(
    game: str,
    commands: Sequence[list[str]],
    logs: Path,
    *,
    seed: int,
    options: Mapping[str, OptionValue] | None = None,
    unix: Path | None = None,
) -> MatchRun:
    tokens = [new_token() for _ in commands]
    spec = MatchSpec(
        match_id=f"node-{game}-{seed}",
        game=game,
        seats=tuple(SeatSpec(t) for t in tokens),
        seed=seed,
        options=dict(options or {}),
    )
    logs.mkdir(parents=True, exist_ok=True)
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    async with open_arena_server("127.0.0.1:0", unix=unix) as server:
        server.register(spec)
        address = server.unix_address if unix is not None else server.address
        assert address
        for seat, (command, token) in enumerate(zip(commands, tokens, strict=True)):
            env = {
                **os.environ,
                "ARENA_ADDRESS": address,
                "ARENA_TOKEN": token,
                "ARENA_SEED": str(seat_seed(seed, seat)),
            }
            err = logs / f"seat{seat}.stderr"
            with err.open("wb") as sink:
                proc = subprocess.Popen(
                    command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink
                )
            procs.append((proc, err))

        async def tell_when_it_exits(seat: int, proc: subprocess.Popen[bytes]) -> None:
            # A bot that dies must not leave the referee waiting for its deadlines.
            code = await trio.to_thread.run_sync(proc.wait, abandon_on_cancel=True)
            server.seat_crashed(spec.match_id, seat, f"exited {code}")

        async with trio.open_nursery() as nursery:
            for seat, (proc, _) in enumerate(procs):
                nursery.start_soon(tell_when_it_exits, seat, proc)
            with trio.move_on_after(spec.connect_timeout_s):
                await server.wait_ready(spec.match_id)
            started = time.perf_counter()
            outcome = await server.run_match(spec)
            nursery.cancel_scope.cancel()
        elapsed = time.perf_counter() - started
    # The server has closed every stream: each bot must now exit on its own.
    bots = []
    for command, (proc, err) in zip(commands, procs, strict=True):
        try:
            code = await trio.to_thread.run_sync(proc.wait, 20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = -9
        bots.append(BotRun(command, code, err.read_text(errors="replace")))
    return MatchRun(outcome, bots, elapsed)


def play(
    game: str,
    commands: Sequence[list[str]],
    logs: Path,
    *,
    seed: int,
    options: Mapping[str, OptionValue] | None = None,
    unix: Path | None = None,
) -> MatchRun:
    """Play one match with one process per seat; returns after every bot has exited."""

    async def main() -> MatchRun:
        return await _play(game, commands, logs, seed=seed, options=options, unix=unix)

    return trio.run(main)


def assert_clean(run: MatchRun, node_seats: Sequence[int], tmp_path: Path) -> int:
    """The match finished normally, the Node seats made every decision themselves, legally, with
    no fault, and their bots exited 0; returns the Node seats' decision count."""
    outcome = run.outcome
    assert outcome.result.reason == "normal", outcome.result.summary
    for seat in node_seats:
        bot = run.bots[seat]
        assert bot.returncode == 0, f"seat {seat} exited {bot.returncode}:\n{bot.stderr}"
        assert outcome.faults_of(seat) == 0, [f for f in outcome.faults if f.seat == seat]
        assert "server error" not in bot.stderr, bot.stderr
        assert outcome.players[seat].bot_name.startswith("node-")
    mine = [t for t in outcome.timings if t.seat in node_seats]
    assert mine, "the Node seats made no decision"
    assert not [t for t in mine if t.fallback], "the referee replaced a Node bot's decision"
    # Replaying the record through the engine re-checks that every action was legal.
    record = tmp_path / f"{outcome.spec.match_id}.jsonl.gz"
    write_record(record, outcome.header, outcome.entries, outcome.result_dict())
    assert verify(record) == len(outcome.timings)
    return len(mine)


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
    async def main() -> subprocess.CompletedProcess[str]:
        async with open_arena_server("127.0.0.1:0") as server:
            env = {**os.environ, "ARENA_ADDRESS": server.address, "ARENA_TOKEN": "not-a-token"}
            return await trio.to_thread.run_sync(
                lambda: subprocess.run(
                    node_bot, env=env, capture_output=True, text=True, timeout=30, check=False
                )
            )

    done = trio.run(main)
    assert done.returncode == 3
    assert done.stderr.splitlines() == ["bot: rejected by the server: unknown token"]


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
