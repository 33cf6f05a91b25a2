"""``arena match``: one match between bot commands, refereed over real gRPC.

The arena starts a server on a free loopback port (and a Unix socket in a temporary directory),
launches one process per seat from the given shell commands (``ARENA_ADDRESS``, ``ARENA_TOKEN``
and ``ARENA_SEED`` in its environment), plays the match, kills the bots, writes the record, and
prints the result. A bot that does not start or exits early is a ``crash`` fault, never a hang.

Bot commands run sandboxed by default (arena/sandbox.py: bubblewrap, no network, reaching the
arena only through the Unix socket); ``--bot image:IMAGE [CMD]`` runs a seat's bot from a Docker
image (arena/docker_bots.py). ``--no-sandbox`` runs commands as plain processes.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.errors import ArenaError, UsageError
from arena.home import arena_home
from arena.launcher import Confinement, RunningBot, bot_environment, last_line, start_bot
from arena.outdir import make_output_dir
from arena.records import write_record
from arena.sandbox import SOCKET_NAME, Limits, prepare_socket, prepare_socket_dir
from arena.seeds import fresh_seed, seat_seed
from arena.serde import TimeControl
from arena.server import (
    FAULT_POLICIES,
    ArenaServer,
    FaultPolicy,
    MatchOutcome,
    MatchSpec,
    SeatSpec,
    new_token,
    open_arena_server,
)
from arena.server.api import run_trio
from engine import EngineError, OptionValue, get_game

#: Seconds a bot has to exit on its own once its stream has ended after the match.
EXIT_GRACE_S = 2.0

#: Default directory for match records.
DEFAULT_OUT = Path("out/matches")


@dataclass(frozen=True, slots=True)
class CommandMatch:
    """What :func:`play_commands` produced."""

    #: The match's outcome.
    outcome: MatchOutcome
    #: The record written.
    record: Path
    #: Each seat's bot output (stdout and stderr).
    logs: tuple[Path, ...]


def record_path(out_dir: Path, match_id: str) -> Path:
    """Where a match's record goes."""
    return out_dir / f"{match_id}.jsonl.gz"


async def play_commands(
    game_id: str,
    commands: Sequence[str],
    *,
    players: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    seed: int | None = None,
    out_dir: Path = DEFAULT_OUT,
    time_control: TimeControl | None = None,
    fault_policy: FaultPolicy = "lenient",
    connect_timeout_s: float = 20.0,
    match_id: str | None = None,
    via_unix: bool = False,
    sandbox: Limits | None = None,
) -> CommandMatch:
    """Play one match between bot ``commands`` (one per seat) and write its record.

    Raises ``ConfigError``/:class:`UsageError` for a
    bad game configuration or the wrong number of commands, before anything is started.
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
    spec = MatchSpec(
        match_id=match_id,
        game=game_id,
        seats=tuple(SeatSpec(new_token()) for _ in commands),
        seed=seed,
        players=config.players,
        options=dict(options or {}),
        time_control=time_control or TimeControl(),
        fault_policy=fault_policy,
        connect_timeout_s=connect_timeout_s,
    )
    logs = tuple(out_dir / "logs" / f"{match_id}-seat{seat}.log" for seat in range(seats))
    make_output_dir(out_dir)  # before the match: its record and logs need somewhere to go
    with tempfile.TemporaryDirectory(prefix="arena-") as tmp:
        async with open_arena_server("127.0.0.1:0", unix=Path(tmp) / SOCKET_NAME) as server:
            server.register(spec)
            address = server.unix_address if via_unix and server.unix_address else server.address
            # Sandboxed and containerised bots (uid nobody) reach the arena by its socket only.
            prepare_socket_dir(Path(tmp))
            prepare_socket(Path(tmp) / SOCKET_NAME)
            confinement = Confinement(Path(tmp), sandbox, hide=(out_dir, arena_home()))
            launches = [BotLaunch(c, log) for c, log in zip(commands, logs, strict=True)]
            outcome = await run_with_bots(server, spec, launches, address, confinement)
    path = record_path(out_dir, match_id)
    write_record(path, outcome.header, outcome.entries, outcome.result_dict())
    return CommandMatch(outcome, path, logs)


@dataclass(frozen=True, slots=True)
class BotLaunch:
    """How to start the bot of one seat."""

    #: Shell command (run by ``/bin/sh -c``), or the container command with ``image``.
    command: str
    #: Where its output goes.
    log: Path
    #: A Docker image to run it in, or ``None`` for a local process.
    image: str | None = None
    #: The bot's own directory (read-only in the sandbox), or ``None``.
    bot_dir: Path | None = None


async def run_with_bots(
    server: ArenaServer,
    spec: MatchSpec,
    launches: Sequence[BotLaunch],
    address: str,
    confinement: Confinement | None = None,
) -> MatchOutcome:
    """Launch one bot per seat, referee ``spec`` (already registered), stop the bots.

    A bot that exits before the match ends, or never starts, is charged a crash at once.
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
        async with trio.open_nursery() as nursery:
            for seat, (launch, seat_spec) in enumerate(zip(launches, spec.seats, strict=True)):
                env = bot_environment(address, seat_spec.token, seat_seed(spec.seed, seat))
                try:
                    proc = await start_bot(
                        launch.command,
                        env,
                        launch.log,
                        confinement,
                        image=launch.image,
                        bot_dir=launch.bot_dir,
                    )
                except (OSError, ArenaError) as err:
                    server.seat_crashed(spec.match_id, seat, f"bot command did not start: {err}")
                    continue
                procs.append(proc)
                exited.append(trio.Event())
                nursery.start_soon(watch, seat, proc, exited[-1])
            outcome = await server.run_match(spec)
            done = True
            # Each bot's stream ends after its MatchEnd, as docs/protocol.md promises, and the
            # bot may finish (save what it learnt, exit 0) before it is stopped.
            for seat_spec in spec.seats:
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


def format_outcome(played: CommandMatch, commands: Sequence[str]) -> str:
    """The result as printed by ``arena match``."""
    outcome = played.outcome
    spec, result = outcome.spec, outcome.result
    lines = [
        f"{spec.game} match {spec.match_id} (seed {spec.seed}): {result.summary} [{result.reason}]"
    ]
    rows = [("seat", "name", "bot", "score", "rank", "faults", "command")]
    for p in outcome.players:
        bot = f"{p.bot_name} {p.bot_version}".strip()
        rows.append(
            (
                str(p.seat),
                p.seat_name,
                bot,
                f"{result.scores[p.seat]:g}",
                str(result.ranks[p.seat]),
                str(outcome.faults_of(p.seat)),
                commands[p.seat] if p.seat < len(commands) else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)] + [r[-1]]
        lines.append("  " + "  ".join(cells).rstrip())
    if outcome.faults:
        lines.append("faults:")
        names = {p.seat: p.seat_name for p in outcome.players}
        lines.extend(
            f"  {names.get(f.seat, f.seat)} (seat {f.seat}) {f.kind}: {f.detail}"
            for f in outcome.faults
        )
        # A bot that died may be charged `disconnect` (its stream broke first) or `crash` (its
        # exit was seen first): either way its own output says why.
        gone = {f.seat for f in outcome.faults if f.kind in ("crash", "disconnect")}
        for seat in sorted(gone):
            tail = last_line(played.logs[seat])
            lines.append(f"  seat {seat} output ({played.logs[seat]}): {tail or '(none)'}")
    lines.extend(log_notes(played.logs))
    answered = [t.ms for t in outcome.timings if not t.fallback]
    if answered:
        mean = sum(answered) / len(answered)
        lines.append(
            f"decisions: {len(outcome.timings)} ({len(outcome.timings) - len(answered)} by the "
            f"referee), answer time mean {mean:.2f} ms, max {max(answered):.1f} ms"
        )
    else:
        lines.append(f"decisions: {len(outcome.timings)}, all played by the referee")
    lines.append(f"record: {played.record}")
    return "\n".join(lines)


#: What the Python SDK logs when a bot's strategy fails and it plays the first legal action
#: (arena/sdk.py): the referee sees a legal answer, so only the bot's log knows.
SDK_FALLBACKS = (b"bot.choose failed;", b"bot.choose returned a bad index;")
#: What a seat's log says where its output was cut (arena/launcher.py, CappedLog).
LOG_CUT = b"bytes of output dropped here"


def log_notes(logs: Sequence[Path]) -> list[str]:
    """Lines about what only the seats' logs know: strategy failures the SDK covered with a
    fallback (no fault, yet not the bot's choice), and output past the log's cap (past it the
    bot's writes are slowed, which may cost it time faults)."""
    notes = []
    for seat, path in enumerate(logs):
        try:
            text = path.read_bytes()
        except OSError:
            continue
        failed = sum(text.count(marker) for marker in SDK_FALLBACKS)
        if failed:
            notes.append(
                f"  seat {seat}: its strategy failed {failed} time(s) and the SDK played the "
                f"first legal action instead; see {path}"
            )
        if LOG_CUT in text:
            notes.append(
                f"  seat {seat}: it wrote more output than its log keeps; past the cap its "
                f"writes were slowed, which can cost it time; see {path}"
            )
    return ["bot logs:", *notes] if notes else []


def confine_commands(commands: Sequence[str]) -> Limits:
    """The sandbox limits for ``commands``; raises (one line) when they need a sandbox or a
    Docker engine this machine lacks, before anything starts."""
    from arena.docker_bots import check_available as check_docker
    from arena.docker_bots import parse_image_bot
    from arena.sandbox import check_available, default_limits

    images = [c for c in commands if parse_image_bot(c) is not None]
    if len(images) < len(commands):
        check_available()
    if images:
        check_docker()
    return default_limits()


def run_match_command(args: argparse.Namespace) -> int:
    """The ``arena match`` command."""
    from arena.cli import parse_options
    from arena.logging import configure

    configure(args.log_level)
    policy: FaultPolicy = "strict" if args.strict else "lenient"
    assert policy in FAULT_POLICIES
    commands: list[str] = args.bot
    sandbox = None if args.no_sandbox else confine_commands(commands)

    async def main() -> CommandMatch:
        return await play_commands(
            args.game,
            commands,
            players=args.players,
            options=parse_options(args.option),
            seed=args.seed,
            out_dir=args.out,
            time_control=TimeControl(args.move_ms, args.bank_ms),
            fault_policy=policy,
            connect_timeout_s=args.connect_timeout,
            via_unix=args.unix,
            sandbox=sandbox,
        )

    print(format_outcome(run_trio(main), commands))
    return 0
