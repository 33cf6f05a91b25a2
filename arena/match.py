"""One match between bot commands, refereed over real gRPC: what ``arena match`` plays, and the
launching of a match's bots that tournaments share.

:func:`play_commands` starts a server on a free loopback port (and a Unix socket in a temporary
directory), launches one process per seat from the given shell commands (``ARENA_ADDRESS``,
``ARENA_TOKEN`` and ``ARENA_SEED`` in its environment), plays the match, stops the bots and writes
the record; ``arena match`` (arena/cli/match.py) prints it. :func:`run_with_bots` is the part a
tournament's match job shares: launch, referee, stop. A bot that does not start or exits early is
a ``crash`` fault, never a hang.

Given sandbox limits, bot commands run boxed (arena/bots/sandbox.py: bubblewrap, no network,
reaching the arena only through the Unix socket); ``image:IMAGE [CMD]`` runs a seat's bot from a
Docker image (arena/bots/docker.py); without limits, commands run as plain processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import secrets
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

import trio
from cardarena.messages import TimeControl

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement, start_bot
from arena.bots.process import EXIT_GRACE_S, RunningBot, bot_environment
from arena.bots.sandbox import Limits
from arena.boxed import boxed_arena
from arena.errors import ArenaError, HostTrouble, UsageError, is_host_trouble
from arena.layout import (
    LOGS_DIR,
    RECORDS_DIR,
    arena_home,
    make_output_dir,
    record_name,
    seat_log_name,
)
from arena.policy import FaultPolicy
from arena.pool import BotPool, play_seated
from arena.records.format import write_record
from arena.rules import MatchRules
from arena.seeds import derive_seed, fresh_seed, seat_seed
from arena.server import (
    ArenaServer,
    Branch,
    MatchOutcome,
    MatchSpec,
    SeatSpec,
    new_token,
)
from engine import EngineError, OptionValue, get_game

#: Default directory for match records.
DEFAULT_OUT = Path("out/matches")


#: What plays the seats no command plays (a person's bridge, arena/people): entered with the
#: registered match and the server's TCP address before the bots start, left after the match.
Attend = Callable[[MatchSpec, str], AbstractAsyncContextManager[object]]


@dataclass(frozen=True, slots=True)
class CommandMatch:
    """What :func:`play_commands` produced."""

    #: The match's outcome.
    outcome: MatchOutcome
    #: The record written.
    record: Path
    #: Each seat's bot output (stdout and stderr).
    logs: tuple[Path, ...]


async def play_commands(
    game_id: str,
    commands: Sequence[str | None],
    *,
    players: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    seed: int | None = None,
    out_dir: Path = DEFAULT_OUT,
    time_control: TimeControl | None = None,
    fault_policy: FaultPolicy = FaultPolicy.LENIENT,
    connect_timeout_s: float = 20.0,
    match_id: str | None = None,
    via_unix: bool = False,
    sandbox: Limits | None = None,
    games: int = 1,
    attend: Attend | None = None,
    branch: Branch | None = None,
) -> CommandMatch | list[CommandMatch]:
    """Play one match between bot ``commands`` (one per seat) and write its record; with
    ``games`` > 1, that many matches (seeds derived from ``seed``, ids ``MATCH_ID-gN``) on the
    same long-lived bot processes, one per seat (arena/pool.py: a process whose seat crashed or
    forfeited is replaced), and a list of them.

    Raises ``ConfigError``/:class:`UsageError` for a bad game configuration or the wrong number
    of commands, and :class:`~arena.bots.launch.NotInBox` for a sandboxed command that names what
    its box does not show, before any bot is started. Nothing it starts outlives it
    (:func:`~arena.bots.reaper.bot_run`). A ``None`` command is a seat played by whatever
    ``attend`` connects with the seat's token (one match only). ``branch``: the match starts
    at a recorded match's decision (``arena replay play``; one match only).
    """
    game = get_game(game_id)
    config = game.configure(players, options or {})
    seats = game.num_seats(config)
    if len(commands) != seats:
        hint = ""
        if players is None:  # the game's default table: say which one these bots would fill
            with contextlib.suppress(EngineError):
                if game.num_seats(game.configure(len(commands), options or {})) == len(commands):
                    hint = f" (for {len(commands)} players: --players {len(commands)})"
        raise UsageError(
            f"{game_id} with {config.players} players needs {seats} --bot commands; "
            f"got {len(commands)}{hint}"
        )
    if seed is None:
        seed = fresh_seed()
    # Not the seed in the id: every bot is told its match id.
    match_id = match_id or f"{game_id}-{secrets.token_hex(4)}"
    rules = MatchRules(config, time_control or TimeControl(), fault_policy)
    seat_specs = [SeatSpec(new_token()) for _ in commands]
    spec = MatchSpec.of(rules, match_id, seat_specs, seed, connect_timeout_s)
    if branch is not None:
        spec = dataclasses.replace(spec, branch=branch)
    programs = [None if c is None else BotProgram.of_command(c) for c in commands]
    if games > 1:
        bots = [p for p in programs if p is not None]
        if len(bots) < len(programs) or branch is not None:
            raise UsageError("a series (--games) is for bot commands only, from the deal")
        return await _play_series(spec, bots, games, out_dir, via_unix, sandbox)
    logs = tuple(out_dir / LOGS_DIR / seat_log_name(match_id, seat) for seat in range(seats))
    # Checked before anything is made: a command its box does not show would forfeit the match.
    check = [
        (f"seat {seat} (--bot {c!r})", p)
        for seat, (c, p) in enumerate(zip(commands, programs, strict=True))
        if p is not None
    ]
    async with boxed_arena(sandbox, (out_dir, arena_home()), check=check) as arena:
        make_output_dir(out_dir)  # before the match: its record and logs need somewhere to go
        arena.server.register(spec)
        launches = [
            None if p is None else BotLaunch(p, log) for p, log in zip(programs, logs, strict=True)
        ]
        address = arena.address(via_unix)
        attended = attend(spec, arena.address()) if attend else contextlib.nullcontext()
        async with attended:
            outcome = await run_with_bots(
                arena.server, spec, launches, address, arena.box.confinement
            )
    path = out_dir / record_name(match_id)
    write_record(path, outcome.header, outcome.entries, outcome.result_dict())
    return CommandMatch(outcome, path, logs)


async def _play_series(
    first: MatchSpec,
    programs: Sequence[BotProgram],
    games: int,
    out_dir: Path,
    via_unix: bool,
    sandbox: Limits | None,
) -> list[CommandMatch]:
    """``games`` matches like ``first`` on one long-lived process per seat."""
    played: list[CommandMatch] = []
    names = [f"seat{seat}" for seat in range(len(programs))]
    check = [(f"seat {seat}", program) for seat, program in enumerate(programs)]
    async with boxed_arena(sandbox, (out_dir, arena_home()), check=check) as arena:
        make_output_dir(out_dir)
        (out_dir / LOGS_DIR).mkdir(parents=True, exist_ok=True)
        server = arena.server
        async with trio.open_nursery() as processes:
            pool = BotPool(
                server,
                dict(zip(names, programs, strict=True)),
                out_dir / LOGS_DIR,
                first.seed,
                processes,
                arena.box.confinement,
                arena.address(via_unix),
            )
            try:
                for game in range(games):
                    seed = first.seed if game == 0 else derive_seed(first.seed, "game", game)
                    spec_id = f"{first.match_id}-g{game + 1}"

                    def spec_for(
                        tokens: Sequence[str], s: int = seed, m: str = spec_id
                    ) -> MatchSpec:
                        return dataclasses.replace(
                            first,
                            match_id=m,
                            seed=s,
                            seats=tuple(SeatSpec(t) for t in tokens),
                        )

                    outcome = await play_seated(server, pool, names, seed, spec_for)
                    path = out_dir / record_name(spec_id)
                    write_record(path, outcome.header, outcome.entries, outcome.result_dict())
                    played.append(CommandMatch(outcome, path, pool.logs(names)))
            finally:
                await pool.close()
                processes.cancel_scope.cancel()
    return played


async def save_record(outcome: MatchOutcome, directory: Path) -> str:
    """Write a finished match's record under ``directory/records/`` (in a worker thread); its
    path relative to ``directory``. Raises :class:`ArenaError` when the arena itself failed the
    match (no result to keep: the caller leaves it pending and plays it again), and a
    ``RecordError`` when the record cannot be written."""
    if outcome.result.reason == "error":
        raise ArenaError(outcome.result.summary)
    record = Path(RECORDS_DIR) / record_name(outcome.spec.match_id)
    write = functools.partial(
        write_record, directory / record, outcome.header, outcome.entries, outcome.result_dict()
    )
    await trio.to_thread.run_sync(write)
    return str(record)


@dataclass(frozen=True, slots=True)
class BotLaunch:
    """The bot of one seat: what to start, and where its output goes."""

    #: How to start it.
    program: BotProgram
    #: Where its output goes.
    log: Path


async def run_with_bots(
    server: ArenaServer,
    spec: MatchSpec,
    launches: Sequence[BotLaunch | None],
    address: str,
    confinement: Confinement | None = None,
) -> MatchOutcome:
    """Launch one bot per seat, referee ``spec`` (already registered), stop the bots.

    A ``None`` launch is a seat played by a bot that connects by itself (a competition's live
    bot, with the seat's token): nothing is started for it, and its stream is left open.
    A bot that exits before the match ends, or never starts, is charged a crash at once; the
    arena's own trouble starting one (:class:`HostTrouble`: no descriptors, disk or memory left)
    withdraws the match, charges nobody and is raised.
    """
    procs: list[RunningBot] = []
    exited: list[trio.Event] = []
    done = False

    async def watch(seat: int, proc: RunningBot, gone: trio.Event) -> None:
        await proc.wait()
        gone.set()
        if not done:
            # The bot's own output stays in its log: it may name the bot's private cards.
            server.seat_crashed(spec.match_id, seat, proc.exit_detail())

    try:
        # Every bot started before any is watched: the arena's own trouble starting one is
        # raised from here, as itself, not from inside a nursery.
        started = await _launch(server, spec, launches, address, confinement, procs)
        async with trio.open_nursery() as nursery:
            for seat, proc in started:
                exited.append(trio.Event())
                nursery.start_soon(watch, seat, proc, exited[-1])
            outcome = await server.run_match(spec)
            done = True
            # Each bot's stream ends after its MatchEnd, as docs/protocol.md promises, and the
            # bot may finish (save what it learnt, exit 0) before it is stopped.
            for launch, seat_spec in zip(launches, spec.seats, strict=True):
                if launch is not None:
                    server.release(seat_spec.token)
            with trio.move_on_after(EXIT_GRACE_S):
                for gone in exited:
                    await gone.wait()
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as stopper:
                for proc in procs:
                    stopper.start_soon(proc.stop)
    return outcome


async def _launch(
    server: ArenaServer,
    spec: MatchSpec,
    launches: Sequence[BotLaunch | None],
    address: str,
    confinement: Confinement | None,
    procs: list[RunningBot],
) -> list[tuple[int, RunningBot]]:
    """Start each seat's bot (appending it to ``procs``, which the caller stops); a bot that
    cannot start is charged a crash, unless the arena itself is out of descriptors, disk or
    memory: then the match is withdrawn and :class:`HostTrouble` raised (no seat's fault)."""
    started = []
    for seat, (launch, seat_spec) in enumerate(zip(launches, spec.seats, strict=True)):
        if launch is None:
            continue
        env = bot_environment(address, seat_spec.token, seat_seed(spec.seed, seat))
        try:
            proc = await start_bot(
                launch.program, env, launch.log, confinement, server.attach_stdio
            )
        except (OSError, ArenaError) as err:
            if is_host_trouble(err):
                server.withdraw(spec.match_id)
                raise HostTrouble(f"the arena could not start a bot: {err}") from err
            server.seat_crashed(spec.match_id, seat, f"bot command did not start: {err}")
            continue
        procs.append(proc)
        started.append((seat, proc))
    return started
