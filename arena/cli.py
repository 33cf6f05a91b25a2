"""The ``arena`` command line. Each subcommand lives in its own module; this one only dispatches.

A user's mistake ends in one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from arena.errors import ArenaError, UsageError
from engine import EngineError, OptionValue, game_ids, get_game

Handler = Callable[[argparse.Namespace], int]


def parse_options(pairs: Sequence[str]) -> dict[str, OptionValue]:
    """``K=V`` pairs from ``--option``; values stay text for the game to validate."""
    options: dict[str, OptionValue] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option expects KEY=VALUE; got {pair!r}")
        options[key.strip()] = value.strip()
    return options


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="arena", description="Card Arena: bots play refereed card games."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sp = sub.add_parser("selfplay", help="play random legal actions in one process")
    sp.add_argument("game", help=f"game id ({', '.join(game_ids())})")
    sp.add_argument("--players", type=int, default=None, help="players at the table")
    sp.add_argument("--option", action="append", default=[], metavar="K=V", help="game option")
    sp.add_argument("--games", type=int, default=100, help="matches to play (default 100)")
    sp.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(handler=_cmd_selfplay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``arena`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except (EngineError, ArenaError) as err:
        print(f"arena: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
