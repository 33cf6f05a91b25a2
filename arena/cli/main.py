"""The ``arena`` command line. Each subcommand lives in its own module; this one only dispatches.

A user's mistake ends in one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import arena.cli.grpc_env  # noqa: F401  (first: before anything imports grpc)
from arena.cli.arguments import (
    BANK_MS,
    DEFAULT_TIME,
    GAMES,
    MOVE_MS,
    NON_NEGATIVE,
    POSITIVE,
    SECONDS,
    TIMEOUT,
    ArenaParser,
    add_sandbox_argument,
    parse_options,
)
from arena.cli.console import reader_may_leave
from arena.cli.host import add_host_parser
from arena.cli.mcp import add_mcp_parser
from arena.cli.remote import add_remote_parser
from arena.cli.replay import add_replay_parser
from arena.cli.tournament import add_tournament_parsers
from arena.cli.worker import add_worker_parser
from arena.errors import ArenaError, UsageError
from arena.logging import add_log_format_option, add_log_level_option
from arena.people.clock import PEOPLE_TIME
from engine import EngineError, game_ids, get_game
from reference_bots.llm.options import add_llm_arguments

if TYPE_CHECKING:
    from cardarena.messages import TimeControl

Handler = Callable[[argparse.Namespace], int]


def _cmd_selfplay(args: argparse.Namespace) -> int:
    from arena.selfplay import selfplay

    if args.games < 1:
        raise UsageError("--games must be at least 1")
    game = get_game(args.game)
    report = selfplay(game, args.players, parse_options(args.option), args.games, args.seed)
    if args.json:
        print(json.dumps(report.to_dict(), sort_keys=False))
        return 0
    data = report.to_dict()
    print(f"{game.title}: {report.games} matches, {report.players} players, seed {report.seed}")
    print(f"decisions: {report.decisions} ({report.decisions_per_game:.1f} per match)")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in data["outcomes"].items()))  # type: ignore[union-attr]
    for key, value in report.derived.items():
        print(f"{key}: {value:.4f}")
    print(f"speed: {report.decisions_per_second:,.0f} decisions/s")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from arena.cli.serve import serve_command

    return serve_command(args)


def _cmd_match(args: argparse.Namespace) -> int:
    from arena.cli.match import run_match_command

    return run_match_command(args)


def _cmd_bot(args: argparse.Namespace) -> int:
    from arena.cli.bot import run

    return run(args)


def _add_arena_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``serve``, ``match`` and ``bot``: the gRPC arena (arena/server, arena/match.py, the SDK)."""
    games = ", ".join(game_ids())
    _add_serve_parser(sub, games)
    _add_match_parser(sub, games)
    _add_play_parser(sub, games)
    _add_bot_parser(sub)


def _add_table_options(parser: argparse.ArgumentParser) -> None:
    """How many play, and the game's options: ``serve`` and ``match`` alike."""
    parser.add_argument("--players", type=int, default=None, help="players at the table")
    parser.add_argument("--option", action="append", default=[], metavar="K=V", help="game option")


def _add_clock_options(
    parser: argparse.ArgumentParser, default: TimeControl = DEFAULT_TIME, *aliases: str
) -> None:
    """The time control and the fault policy: ``serve``, ``match`` and ``play`` alike (``play``
    with people's defaults, and ``aliases``: its ``--human-move-ms``)."""
    parser.add_argument(
        "--move-ms",
        *[f"--{a}move-ms" for a in aliases],
        type=MOVE_MS,
        default=default.move_ms,
        help="milliseconds per decision",
    )
    parser.add_argument(
        "--bank-ms",
        *[f"--{a}bank-ms" for a in aliases],
        type=BANK_MS,
        default=default.bank_ms,
        help="milliseconds of bank per seat and match",
    )
    parser.add_argument("--strict", action="store_true", help="the first fault forfeits")


def _add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], games: str) -> None:
    sv = sub.add_parser(
        "serve",
        help="run an arena server whose lobby seats whoever connects",
        description="Listen for bots; as soon as enough wait, a match of GAME starts.",
    )
    sv.add_argument("--listen", default="127.0.0.1:50051", metavar="ADDR", help="host:port")
    sv.add_argument("--unix", default=None, metavar="PATH", help="also listen on a Unix socket")
    sv.add_argument("--game", default="whist", help=f"lobby game ({games})")
    _add_table_options(sv)
    sv.add_argument(
        "--seed", type=int, default=None, help="seed the matches derive from (default: secret)"
    )
    _add_clock_options(sv)
    sv.add_argument(
        "--out", type=Path, default=None, help="write match records here (default: none kept)"
    )
    add_log_level_option(sv, "info")
    add_log_format_option(sv)
    sv.add_argument(
        "--registered-only",
        action="store_true",
        help="accept only the tokens of bots registered with `arena submit` (in --home); each "
        "plays under its registered NAME@VERSION",
    )
    sv.add_argument("--home", default=None, metavar="DIR", help="the arena's state directory")
    sv.add_argument(
        "--max-guests-per-address",
        type=POSITIVE,
        default=None,  # the hub's MAX_GUESTS_PER_ADDRESS (importing it here would load grpc)
        metavar="N",
        help="lobby bots admitted at once from one network address (default 16)",
    )
    sv.set_defaults(handler=_cmd_serve)


def _add_match_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], games: str) -> None:
    mp = sub.add_parser(
        "match",
        help="play one match between bot commands over gRPC",
        description="Play one match: one --bot shell command per seat, in seat order. Each bot "
        "gets ARENA_ADDRESS, ARENA_TOKEN and ARENA_SEED in its environment. Exit status: 0, or 3 "
        "when a seat faulted or forfeited (unless --allow-faults), 4 when the arena itself failed "
        "a match (no result), 2 for a usage error.",
    )
    mp.add_argument("game", help=f"game id ({games})")
    _add_table_options(mp)
    _add_bot_options(mp, "once per seat", required=True)
    _add_clock_options(mp)
    _add_connect_option(mp)
    mp.add_argument("--unix", action="store_true", help="bots connect over the Unix socket")
    mp.add_argument(
        "--games",
        type=GAMES,
        default=1,
        metavar="N",
        help="play N matches on the same bot processes (one per seat, replaced after a crash "
        "or forfeit), each on its own deal (default 1)",
    )
    mp.add_argument(
        "--json",
        action="store_true",
        help="print the result, each seat's faults and forfeit, and the answer times as one "
        "JSON object (nothing else on stdout)",
    )
    mp.add_argument(
        "--allow-faults",
        action="store_true",
        help="exit 0 even when a seat faulted or forfeited (default: exit status 3)",
    )
    add_sandbox_argument(mp)
    add_log_level_option(mp, "warning", "server")
    add_log_format_option(mp)
    mp.set_defaults(handler=_cmd_match)


def _add_bot_options(parser: argparse.ArgumentParser, seats: str, required: bool) -> None:
    """``--bot``, ``--seed`` and ``--out``: ``match`` and ``play`` alike."""
    parser.add_argument(
        "--bot",
        action="append",
        required=required,
        default=None if required else [],
        metavar="CMD",
        help="the next seat's bot command, e.g. 'arena bot rules', image:IMAGE [CMD] for a "
        "Docker image, or stdio:CMD for a bot speaking JSON lines on its stdin and stdout "
        f"({seats})",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="match seed (default: a fresh one nobody can guess)"
    )
    parser.add_argument("--out", type=Path, default=Path("out/matches"), help="record directory")


def _add_connect_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--connect-timeout",
        type=TIMEOUT,
        default=20.0,
        metavar="S",
        help="seconds to wait for every bot to connect",
    )


def _cmd_play(args: argparse.Namespace) -> int:
    from arena.cli.play import run_play_command

    return run_play_command(args)


def _add_play_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], games: str) -> None:
    pp = sub.add_parser(
        "play",
        help="play a match yourself in the browser, against bot commands",
        description="Start a match on loopback with a person in each --human SEAT and the --bot "
        "commands in the other seats, in seat order; print each person's page (a local URL "
        "with a secret) and play. The time control holds for every seat (docs/play.md).",
    )
    pp.add_argument("game", help=f"game id ({games})")
    pp.add_argument(
        "--human",
        action="append",
        type=NON_NEGATIVE,
        required=True,
        metavar="SEAT",
        help="a seat a person plays, from 0 (repeat for more people)",
    )
    _add_table_options(pp)
    _add_bot_options(pp, "one per seat no person plays", required=False)
    _add_clock_options(pp, PEOPLE_TIME, "human-")
    _add_connect_option(pp)
    pp.add_argument("--open", action="store_true", help="open each page in the web browser")
    add_sandbox_argument(pp)
    add_log_level_option(pp, "warning", "server")
    add_log_format_option(pp)
    pp.set_defaults(handler=_cmd_play)


def _add_bot_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bp = sub.add_parser(
        "bot",
        help="run a reference bot (random, rules, search) or a language model (llm) against an "
        "arena server",
        description="Address and token default to ARENA_ADDRESS and ARENA_TOKEN; without --seed "
        "the bot is seeded from each match's bot_seed. llm: docs/llm.md.",
    )
    bp.add_argument("name", help="random, rules, search or llm")
    bp.add_argument(
        "--budget-ms",
        type=MOVE_MS,
        default=None,
        metavar="MS",
        help="search: think MS ms per decision (default: a quarter of the decision's deadline, "
        "at most 500 ms)",
    )
    bp.add_argument(
        "--iterations",
        type=POSITIVE,
        default=None,
        metavar="N",
        help="search: N iterations per decision instead of a time budget (with the match's "
        "seed, the same moves every run)",
    )
    bp.add_argument(
        "--no-solver",
        dest="solver",
        action="store_false",
        help="search: value every decision by rollouts, never by the exact solver near a "
        "deal's end (the search bot before it used the solver)",
    )
    bp.add_argument("--server", default=None, metavar="ADDR", help="host:port or unix:PATH")
    bp.add_argument("--token", default=None, help="the bot's token")
    bp.add_argument(
        "--seed", type=int, default=None, help="a fixed seed (default: each match's bot_seed)"
    )
    bp.add_argument("--matches", type=POSITIVE, default=None, help="stop after N matches")
    bp.add_argument(
        "--give-up",
        type=SECONDS,
        default=10.0,
        metavar="S",
        help="stop after S s without a server (default 10); exit status 2 if none ever answered",
    )
    add_llm_arguments(bp)
    add_log_level_option(bp, "warning")
    bp.set_defaults(handler=_cmd_bot)


def _cmd_submit(args: argparse.Namespace) -> int:
    from arena.registry import check_submission, registry

    workdir = Path(args.dir) if args.dir is not None else Path.cwd()
    if args.command is not None and not workdir.is_dir():
        raise UsageError(f"--dir {workdir}: no such directory")
    # Refused before the home or its registry is created.
    check_submission(
        args.name, args.version, command=args.command, image=args.image, workdir=workdir
    )
    with registry(args.home) as reg:
        bot, token = reg.submit(
            args.name, args.version, command=args.command, image=args.image, workdir=workdir
        )
    if args.json:
        print(json.dumps({**bot.to_dict(), "token": token}))
        return 0
    program = bot.program
    where = (
        f"`{program.command}` in {program.workdir}" if program.kind == "command" else program.image
    )
    print(f"registered {bot.ref} ({bot.kind}: {where}) in {reg.path.parent}")
    print(f"token: {token}")
    print("(shown once; a bot that connects on its own gives it as ARENA_TOKEN)")
    return 0


def _cmd_bots(args: argparse.Namespace) -> int:
    from arena.layout import arena_home, registry_path
    from arena.registry import registry

    home = arena_home(args.home)
    if not registry_path(home).exists():
        bots = []
    else:
        with registry(home) as reg:
            bots = reg.bots()
    if args.json:
        print(json.dumps([b.to_dict() for b in bots]))
        return 0
    if not bots:
        print(f"no bots registered in {home} (arena submit NAME --version V --command CMD)")
        return 0
    rows = [("bot", "kind", "submitted", "runs")]
    rows += [(b.ref, b.kind, b.created, b.program.target) for b in bots]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3])
    return 0


def _add_state_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``submit``, ``bots`` and ``health``: the bot registry in the arena's home, and the
    server health check (arena/registry.py, arena/layout.py, arena/server/health.py)."""
    from arena.cli.arguments import add_home_argument
    from arena.cli.health import add_health_parser
    from arena.cli.watch import add_watch_parser

    su = sub.add_parser(
        "submit",
        help="register a bot (a command or a Docker image) and print its token",
        description="Register version V of bot NAME in the arena's home; tournaments then name "
        "it NAME (its latest version) or NAME@V. A command runs sandboxed in --dir (default: "
        "the current directory); an image runs in a locked-down container.",
    )
    su.add_argument("name", help="bot name (letters, digits, '_', '.', '-')")
    su.add_argument("--version", required=True, help="version label; never replaced once given")
    what = su.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--command",
        default=None,
        metavar="CMD",
        help="shell command of the bot; its program must exist (on PATH or in --dir)",
    )
    what.add_argument("--image", default=None, metavar="IMAGE", help="Docker image of the bot")
    su.add_argument("--dir", default=None, metavar="DIR", help="the command's directory")
    su.add_argument("--json", action="store_true", help="print one JSON object (with the token)")
    add_home_argument(su)
    su.set_defaults(handler=_cmd_submit)

    bl = sub.add_parser("bots", help="list the registered bots")
    bl.add_argument("--json", action="store_true", help="print a JSON list")
    add_home_argument(bl)
    bl.set_defaults(handler=_cmd_bots)

    add_health_parser(sub)
    add_watch_parser(sub)


class _Version(argparse.Action):
    """``--version``; the installed metadata is read only when asked (every bot's start-up
    parses these arguments)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from arena.version import arena_version

        print(f"arena {arena_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser: argparse.ArgumentParser = ArenaParser(
        prog="arena", description="Card Arena: bots play refereed card games."
    )
    parser.add_argument("--version", action=_Version, help="print the arena's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sp = sub.add_parser("selfplay", help="play random legal actions in one process")
    sp.add_argument("game", help=f"game id ({', '.join(game_ids())})")
    _add_table_options(sp)
    sp.add_argument("--games", type=int, default=100, help="matches to play (default 100)")
    sp.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(handler=_cmd_selfplay)

    add_replay_parser(sub)
    add_tournament_parsers(sub)
    add_host_parser(sub)
    add_remote_parser(sub)
    add_worker_parser(sub)
    _add_arena_parsers(sub)
    add_mcp_parser(sub)
    _add_state_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``arena`` console script."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if getattr(args, "rest", None) is None:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        # `arena host` parses its own words: options before its first word land here.
        args.rest = [*extra, *args.rest]
    handler: Handler = args.handler
    try:
        with reader_may_leave():  # `arena … | head -1`: a reader that leaves is no error
            return handler(args)
        return 0  # only when the reader left
    except (EngineError, ArenaError) as err:
        print(f"arena: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
