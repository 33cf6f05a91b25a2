"""``arena bot NAME``: run a reference bot against an arena server as a plain command.

Address and token default to ``$ARENA_ADDRESS`` and ``$ARENA_TOKEN``, which the arena sets when it
launches a bot, so ``arena bot rules`` is a complete bot command. Without ``--seed`` the bot's
generator is seeded from each match's ``bot_seed`` (the SDK does it), so a bot plays the same
moves in a match however many its process played before.
"""

from __future__ import annotations

import argparse

from cardarena import BotError, run_bot
from cardarena.log import configure, get_logger

from arena.errors import ArenaError, UsageError
from reference_bots.catalog import BOTS, make_bot


def run(args: argparse.Namespace) -> int:
    """The ``arena bot`` command: exit status 0 once done (or the server is gone for good),
    :class:`ArenaError` when no server ever answered."""
    configure(args.log_level)
    if args.name not in BOTS:
        raise UsageError(f"unknown bot {args.name!r} (reference bots: {', '.join(sorted(BOTS))})")
    try:
        bot = make_bot(
            args.name,
            args.seed,
            budget_ms=args.budget_ms,
            iterations=args.iterations,
            solver=args.solver,
        )
    except ValueError as err:
        raise UsageError(str(err)) from None
    try:
        result = run_bot(bot, args.server, args.token, matches=args.matches, give_up_s=args.give_up)
    except BotError as err:
        raise ArenaError(str(err)) from None
    get_logger("reference_bots").info(
        "bot finished", matches=result.matches, decisions=result.decisions, why=result.stopped
    )
    if result.stopped == "unreachable":
        # Silence and exit status 0 would read as "played and done".
        raise ArenaError(f"no arena server answered at {result.address} within {args.give_up:g} s")
    return 0
