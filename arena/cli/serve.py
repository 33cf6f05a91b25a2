"""``arena serve``: a standing server whose lobby seats whoever connects, until interrupted."""

from __future__ import annotations

import argparse
import sys

from cardarena.messages import TimeControl

from arena.cli.arguments import parse_options
from arena.cli.signals import run_until_stopped
from arena.layout import make_output_dir
from arena.logging import configure
from arena.policy import FaultPolicy
from arena.registry import open_registry
from arena.rules import MatchRules
from arena.server.api import open_arena_server, run_trio
from arena.server.hub import MAX_GUESTS_PER_ADDRESS
from arena.server.lobby import Lobby, LobbyConfig


def serve_command(args: argparse.Namespace) -> int:
    """The ``arena serve`` command: listen until interrupted."""
    configure(args.log_level)
    rules = MatchRules.of(  # fails early on a bad game or options
        args.game,
        args.players,
        parse_options(args.option),
        TimeControl(args.move_ms, args.bank_ms),
        FaultPolicy.STRICT if args.strict else FaultPolicy.LENIENT,
    )
    config = LobbyConfig(rules, seed=args.seed, out=args.out)
    if config.out is not None:
        make_output_dir(config.out)

    per_address = args.max_guests_per_address or MAX_GUESTS_PER_ADDRESS

    async def main() -> None:
        async with open_arena_server(
            args.listen, args.unix, max_guests_per_address=per_address
        ) as server:
            if getattr(args, "registered_only", False):
                # Only bots submitted to the arena's home (arena submit) may play.
                registry = open_registry(getattr(args, "home", None))
                server.token_owner = registry.owner
            lobby = Lobby(server, config)
            where = server.address + (f" and {server.unix_address}" if server.unix_address else "")
            print(f"arena: serving {rules.game_id} on {where}; Ctrl-C stops", flush=True)
            await lobby.run()

    stopped = run_trio(lambda: run_until_stopped(main))
    if stopped == "SIGINT":
        print("arena: interrupted", file=sys.stderr)
        return 130  # the CLI's status for an interrupt
    if stopped:
        print(f"arena: serve stopped ({stopped})", file=sys.stderr)
    return 0
