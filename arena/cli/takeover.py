"""``arena replay play``: take a seat over from a recorded match (arena/people/takeover.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arena.cli.arguments import BANK_MS, MOVE_MS, NON_NEGATIVE, TIMEOUT, add_sandbox_argument
from arena.errors import UsageError
from arena.logging import add_log_format_option, add_log_level_option

#: The recorded bot names ``arena replay play`` knows how to start: the reference bots'.
REFERENCE_BOTS = ("random", "rules", "search")


def _bot_for(text: str) -> tuple[int, str]:
    """``--bot-for SEAT=CMD``."""
    seat, sep, command = text.partition("=")
    if not sep or not seat.strip().isdigit() or not command.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not SEAT=CMD (e.g. 1='arena bot rules')")
    return int(seat), command


def _reference_command(name: str) -> str | None:
    return f"arena bot {name}" if name in REFERENCE_BOTS else None


def _cmd_replay_play(args: argparse.Namespace) -> int:
    from cardarena.messages import TimeControl

    from arena.bots.command import BotProgram
    from arena.bots.launch import confine
    from arena.cli.play import announcer, reported
    from arena.logging import configure, wants_json
    from arena.match import CommandMatch
    from arena.people.clock import PEOPLE_TIME
    from arena.people.takeover import plan_takeover, play_takeover, seat_commands
    from arena.server.api import run_trio

    configure(args.log_level, json=wants_json(args.log_format, sys.stderr))
    given: dict[int, str] = {}
    for seat, command in args.bot_for:
        if seat in given:
            raise UsageError(f"--bot-for {seat}=…: each seat once")
        given[seat] = command
    plan = plan_takeover(Path(args.file), args.at, args.seat)
    taker = None if args.human else args.bot
    commands = seat_commands(plan, taker, given, _reference_command)
    bots = [BotProgram.of_command(c) for c in commands if c is not None]
    sandbox = confine(bots, args.no_sandbox)
    clock = PEOPLE_TIME if args.human else plan.time_control
    move_ms = args.move_ms if args.move_ms is not None else clock.move_ms
    bank_ms = args.bank_ms if args.bank_ms is not None else clock.bank_ms
    branch = plan.branch
    print(
        f"branched from {branch.match_id} at decision {branch.decision}: seat {plan.seat} "
        f"({plan.seat_names[plan.seat]}) is {'yours' if args.human else args.bot}",
        flush=True,
    )

    async def main() -> CommandMatch:
        return await play_takeover(
            plan,
            commands,
            announce=announcer(args.open),
            time_control=TimeControl(move_ms, bank_ms),
            out_dir=args.out,
            connect_timeout_s=args.connect_timeout,
            sandbox=sandbox,
        )

    return reported(run_trio(main), commands, "arena replay play")


def add_replay_play_parser(rsub: Any) -> None:
    """``arena replay play`` on ``arena replay``'s subparsers."""
    pp = rsub.add_parser(
        "play",
        help="take a seat over at a recorded decision and play on, yourself or with a bot",
        description="Replay the record to decision K (numbered as `replay show` and `replay ask` "
        "number them) and play a new match on from there over the real arena: seat S is yours "
        "(--human: a local page, as `arena play`) or --bot CMD's; every other seat is its "
        "--bot-for command, or the record's own bot when it was a reference bot (arena bot "
        "random, rules, search). The new record starts with the record's first K decisions, "
        "names the record and K (branched_from) and verifies. Exit status as `arena match`'s "
        "(docs/play.md).",
    )
    pp.add_argument("file", metavar="FILE", help="match record (.jsonl.gz)")
    pp.add_argument("--at", type=NON_NEGATIVE, required=True, metavar="K", help="decision number")
    pp.add_argument(
        "--seat", required=True, metavar="S", help="the seat taken over (number or name)"
    )
    who = pp.add_mutually_exclusive_group(required=True)
    who.add_argument("--human", action="store_true", help="you play seat S in the browser")
    who.add_argument("--bot", metavar="CMD", help="this bot command plays seat S")
    pp.add_argument(
        "--bot-for",
        action="append",
        type=_bot_for,
        default=[],
        metavar="SEAT=CMD",
        help="the bot command of another seat (default: the record's, for a reference bot)",
    )
    pp.add_argument(
        "--move-ms",
        type=MOVE_MS,
        default=None,
        help="milliseconds per decision (default: the record's; --human: 60000)",
    )
    pp.add_argument(
        "--bank-ms",
        type=BANK_MS,
        default=None,
        help="bank per seat (default: the record's; --human: 600000)",
    )
    pp.add_argument("--out", type=Path, default=Path("out/matches"), help="record directory")
    pp.add_argument(
        "--connect-timeout",
        type=TIMEOUT,
        default=20.0,
        metavar="S",
        help="seconds to wait for every bot to connect",
    )
    pp.add_argument("--open", action="store_true", help="open the page in the web browser")
    add_sandbox_argument(pp)
    add_log_level_option(pp, "warning", "server")
    add_log_format_option(pp)
    pp.set_defaults(handler=_cmd_replay_play)
