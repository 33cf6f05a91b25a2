"""``arena bot NAME``: run a reference bot against an arena server as a plain command.

Address, token and seed default to ``$ARENA_ADDRESS``, ``$ARENA_TOKEN`` and ``$ARENA_SEED``, which
the arena sets when it launches a bot, so ``arena bot rules`` is a complete bot command.
"""

from __future__ import annotations

import argparse
import os

from arena.errors import ArenaError, UsageError
from arena.logging import configure, get_logger
from arena.sdk import run_bot
from reference_bots.catalog import BOTS, make_bot


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


def run(args: argparse.Namespace) -> int:
    """The ``arena bot`` command: exit status 0 once done (or the server is gone for good),
    :class:`ArenaError` when no server ever answered."""
    configure(args.log_level, lazy=True)
    if args.name not in BOTS:
        raise UsageError(f"unknown bot {args.name!r} (reference bots: {', '.join(sorted(BOTS))})")
    seed = args.seed if args.seed is not None else _env_int("ARENA_SEED")
    try:
        bot = make_bot(args.name, seed, budget_ms=args.budget_ms, iterations=args.iterations)
    except ValueError as err:
        raise UsageError(str(err)) from None
    result = run_bot(bot, args.server, args.token, matches=args.matches, give_up_s=args.give_up)
    get_logger("reference_bots").info(
        "bot finished", matches=result.matches, decisions=result.decisions, why=result.stopped
    )
    if result.stopped == "unreachable":
        # Silence and exit status 0 would read as "played and done".
        raise ArenaError(f"no arena server answered at {result.address} within {args.give_up:g} s")
    return 0
