"""Matches between reference bots written in other languages and the Python SDK's, over the real
gRPC server, for tests/reference_bots/test_node_bot.py and test_cpp_bot.py and
tests/languages/test_go_grpc.py.

The matches run on the server's Python API (:func:`arena.server.open_arena_server`): each seat's
bot is a real process that gets ARENA_ADDRESS, ARENA_TOKEN and ARENA_SEED, as under
``arena match``. A decision the referee had to replace by its fallback, or any fault, would mean
the bot's answer was not legal; the match record is also replayed through the engine, which
checks every action. A bot's connection can also be cut (tests/reference_bots/cut_proxy.py), between
matches or mid-match, to check its exit status.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.records.format import write_record
from arena.records.replay import verify
from arena.seeds import seat_seed
from arena.server import MatchOutcome, MatchSpec, SeatSpec, new_token, open_arena_server
from engine import OptionValue, get_game
from tests.reference_bots.cut_proxy import CutProxy, open_cut_proxy
from tests.waiting import async_wait_until

ROOT = Path(__file__).resolve().parents[2]
ARENA = Path(sys.executable).with_name("arena")  # the venv's console script
# A Python bot of the SDK; it leaves after its match instead of waiting for the server to return.
PY_RANDOM = [str(ARENA), "bot", "random", "--matches", "1"]

#: Every game, tennis in singles and in both doubles modes, with short options: (game, players,
#: options).
CASES: list[tuple[str, int | None, dict[str, OptionValue]]] = [
    ("whist", None, {"points_to_win": 1, "games_per_rubber": 1}),
    ("tennis_whist", None, {"sets_to_win": 1}),
    ("spoil_five", None, {"rounds": 1}),
    ("forty_five", None, {"points_to_win": 5}),
    ("tennis", None, {"sets_to_win": 1}),
    ("tennis", 4, {"sets_to_win": 1, "control": "team"}),
    ("tennis", 4, {"sets_to_win": 1, "control": "players"}),
]
SHORT_WHIST: dict[str, OptionValue] = {"points_to_win": 1, "games_per_rubber": 1}


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
    players: int | None = None,
    unix: Path | None = None,
    cut_after: str | None = None,
) -> MatchRun:
    tokens = [new_token() for _ in commands]
    spec = MatchSpec(
        match_id=f"{game}-{seed}",
        game=game,
        seats=tuple(SeatSpec(t) for t in tokens),
        seed=seed,
        players=players,
        options=dict(options or {}),
    )
    logs.mkdir(parents=True, exist_ok=True)
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    async with open_arena_server("127.0.0.1:0", unix=unix) as server, AsyncExitStack() as stack:
        server.register(spec)
        address = server.unix_address if unix is not None else server.address
        assert address
        proxy = None
        if cut_after is not None:  # seat 0's bot connects through a proxy that will cut it
            proxy = await stack.enter_async_context(open_cut_proxy(server.address))
        for seat, (command, token) in enumerate(zip(commands, tokens, strict=True)):
            env = {
                **os.environ,
                "ARENA_ADDRESS": proxy.address if proxy and seat == 0 else address,
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
            if proxy is not None and cut_after is not None:
                nursery.start_soon(_cut_once_logged, proxy, procs[0][1], cut_after)
            with trio.move_on_after(spec.connect_timeout_s):
                await server.wait_ready(spec.match_id)
            started = time.perf_counter()
            outcome = await server.run_match(spec)
            if proxy is not None:  # cut before the server ends the streams (status OK)
                with trio.fail_after(30):
                    await proxy.was_cut.wait()
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


async def _cut_once_logged(proxy: CutProxy, log: Path, text: str) -> None:
    """Cut the proxied connections once ``text`` is in the bot's stderr ``log``."""
    await async_wait_until(
        lambda: text in log.read_text(errors="replace"), 30, what=f"{text!r} in {log.name}"
    )
    proxy.cut()


def play(
    game: str,
    commands: Sequence[list[str]],
    logs: Path,
    *,
    seed: int,
    options: Mapping[str, OptionValue] | None = None,
    players: int | None = None,
    unix: Path | None = None,
    cut_after: str | None = None,
) -> MatchRun:
    """Play one match with one process per seat; returns after every bot has exited. With
    ``cut_after``, seat 0's bot plays through a :class:`CutProxy` that resets its connection
    once its stderr shows ``cut_after``, before the server ends the streams."""

    async def main() -> MatchRun:
        return await _play(
            game,
            commands,
            logs,
            seed=seed,
            options=options,
            players=players,
            unix=unix,
            cut_after=cut_after,
        )

    return trio.run(main)


def assert_clean(run: MatchRun, seats: Sequence[int], tmp_path: Path, name_prefix: str) -> int:
    """The match finished normally, the bots of ``seats`` (named ``name_prefix``…) made every
    decision themselves, legally, with no fault, and exited 0; returns their decision count."""
    outcome = run.outcome
    assert outcome.result.reason == "normal", outcome.result.summary
    for seat in seats:
        bot = run.bots[seat]
        assert bot.returncode == 0, f"seat {seat} exited {bot.returncode}:\n{bot.stderr}"
        assert outcome.faults_of(seat) == 0, [f for f in outcome.faults if f.seat == seat]
        assert "server error" not in bot.stderr, bot.stderr
        assert outcome.players[seat].bot_name.startswith(name_prefix)
    mine = [t for t in outcome.timings if t.seat in seats]
    assert mine, f"the {name_prefix}* seats made no decision"
    assert not [t for t in mine if t.fallback], "the referee replaced one of their decisions"
    # Replaying the record through the engine re-checks that every action was legal.
    record = tmp_path / f"{outcome.spec.match_id}.jsonl.gz"
    write_record(record, outcome.header, outcome.entries, outcome.result_dict())
    assert verify(record) == len(outcome.timings)
    return len(mine)


def play_beside_python(
    game: str,
    players: int | None,
    options: Mapping[str, OptionValue],
    bot: list[str],
    tmp_path: Path,
    name_prefix: str,
) -> None:
    """One clean match of ``bot`` in every seat but, at a table of more than two, the last, which
    a Python SDK bot plays (the bots of two languages at one table); every bot exits 0."""
    g = get_game(game)
    seats = g.num_seats(g.configure(players, dict(options)))
    commands = [bot] * seats
    if seats > 2:
        commands[-1] = PY_RANDOM
    mine = [s for s in range(seats) if commands[s] is bot]
    run = play(game, commands, tmp_path, seed=7, options=options, players=players)
    assert assert_clean(run, mine, tmp_path, name_prefix) > 0
    assert {b.returncode for b in run.bots} == {0}, [b.stderr for b in run.bots]


def run_with_a_bad_token(bot: list[str]) -> subprocess.CompletedProcess[str]:
    """``bot`` started against a real server with a token it does not know: it is Rejected."""

    async def main() -> subprocess.CompletedProcess[str]:
        async with open_arena_server("127.0.0.1:0") as server:
            env = {**os.environ, "ARENA_ADDRESS": server.address, "ARENA_TOKEN": "not-a-token"}
            return await trio.to_thread.run_sync(
                lambda: subprocess.run(
                    bot, env=env, capture_output=True, text=True, timeout=30, check=False
                )
            )

    return trio.run(main)


def assert_gone_between_matches(bot: list[str], tmp_path: Path) -> None:
    """``bot``'s connection, cut after its match has ended (as a server shutting down may cut it
    before the stream's OK status comes), is a normal stop: one line, exit 0."""
    run = play(
        "whist", [bot, *[PY_RANDOM] * 3], tmp_path, seed=9, options=SHORT_WHIST, cut_after=" ends ("
    )
    assert run.outcome.result.reason == "normal", run.outcome.result.summary
    cut = run.bots[0]
    assert cut.returncode == 0, cut.stderr
    gone = [line for line in cut.stderr.splitlines() if line.startswith("bot:")]
    assert len(gone) == 1 and gone[0].startswith("bot: server gone between matches ("), cut.stderr


def assert_cut_mid_match_fails(bot: list[str], tmp_path: Path) -> None:
    """``bot``'s connection, cut while its match is in play, is a failure: exit 1."""
    run = play(
        "whist", [bot, *[PY_RANDOM] * 3], tmp_path, seed=9, options=SHORT_WHIST, cut_after="starts"
    )
    cut = run.bots[0]
    assert cut.returncode == 1, cut.stderr
    assert "server gone" not in cut.stderr, cut.stderr
