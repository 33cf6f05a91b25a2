"""``arena play``: a person's seat (or several) against bots, in the browser (arena/people)."""

from __future__ import annotations

import argparse
import sys
import webbrowser
from collections.abc import Callable, Mapping, Sequence

from cardarena.messages import TimeControl

from arena.bots.command import BotProgram
from arena.bots.launch import confine
from arena.cli.arguments import parse_options
from arena.cli.match import ARENA_FAILED, FAULTED, faulted, format_outcome
from arena.logging import configure, wants_json
from arena.match import CommandMatch
from arena.people.play import play_people, seat_people
from arena.policy import FaultPolicy
from arena.server.api import run_trio


def run_play_command(args: argparse.Namespace) -> int:
    """The ``arena play`` command: print each person's page (and open it with ``--open``),
    play the match, print its result as ``arena match`` does."""
    configure(args.log_level, json=wants_json(args.log_format, sys.stderr))
    options = parse_options(args.option)
    seating = seat_people(args.game, args.human, args.bot, args.players, options)
    bots = [c for c in seating.commands if c is not None]
    sandbox = confine([BotProgram.of_command(c) for c in bots], args.no_sandbox)

    async def main() -> CommandMatch:
        return await play_people(
            args.game,
            seating,
            announce=announcer(args.open),
            players=args.players,
            options=options,
            seed=args.seed,
            out_dir=args.out,
            time_control=TimeControl(args.move_ms, args.bank_ms),
            fault_policy=FaultPolicy.STRICT if args.strict else FaultPolicy.LENIENT,
            connect_timeout_s=args.connect_timeout,
            sandbox=sandbox,
        )

    return reported(run_trio(main), seating.commands, "arena play")


def announcer(open_pages: bool) -> Callable[[Mapping[int, str]], None]:
    """Print each person's page (and open it with ``--open``): ``arena play``, ``replay play``."""

    def announce(urls: Mapping[int, str]) -> None:
        for seat, url in sorted(urls.items()):
            if seat < 0:  # the watch link, for people without a seat
                print(f"watch at {url}", flush=True)
                continue
            print(f"seat {seat}: play at {url}", flush=True)
            if open_pages:
                webbrowser.open(url)

    return announce


def reported(played: CommandMatch, commands: Sequence[str | None], command: str) -> int:
    """Print a match with people as ``arena match`` prints one; its exit status, as that's."""
    print(format_outcome(played, [c if c is not None else "(a person)" for c in commands]))
    result = played.outcome.result
    if result.reason == "error":
        print(f"{command}: the arena failed the match ({result.summary})", file=sys.stderr)
        return ARENA_FAILED
    if faulted([played]):
        # As `arena match`: a seat (a person who left, say) faulted or forfeited.
        print(f"{command}: a seat faulted or forfeited: exit status {FAULTED}", file=sys.stderr)
        return FAULTED
    return 0
