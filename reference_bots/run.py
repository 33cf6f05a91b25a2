"""``arena bot NAME``: run a reference bot against an arena server as a plain command.

Address, token and seed default to ``$ARENA_ADDRESS``, ``$ARENA_TOKEN`` and ``$ARENA_SEED``, which
the arena sets when it launches a bot, so ``arena bot rules`` is a complete bot command.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine import Action
from reference_bots.base import Bot, RandomBot
from reference_bots.rules import RulesBot, Strategy, strategy_for


class RulesOrRandomBot(RulesBot):
    """The rule-based bot; for a game with no strategy yet it plays uniformly at random."""

    name = "rules"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._strategies: dict[str, Strategy | None] = {}

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        if game not in self._strategies:
            try:
                self._strategies[game] = strategy_for(game)
            except ValueError:
                self._strategies[game] = None
        strategy = self._strategies[game]
        if strategy is None:
            return self.rng.randrange(len(legal))
        return strategy(observation, legal, self.rng)


#: The reference bots by name.
BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "rules": RulesOrRandomBot,
}


def make_bot(name: str, seed: int | None) -> Bot:
    """The reference bot called ``name``; ``KeyError`` for an unknown one."""
    return BOTS[name](seed)


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


def run(args: argparse.Namespace) -> int:
    """The ``arena bot`` command: exit status 0 once done (or the server is gone for good),
    :class:`ArenaError` when no server ever answered."""
    from arena.errors import ArenaError, UsageError
    from arena.logging import configure, get_logger
    from arena.sdk import run_bot

    configure(args.log_level, lazy=True)
    if args.name not in BOTS:
        raise UsageError(f"unknown bot {args.name!r} (reference bots: {', '.join(sorted(BOTS))})")
    seed = args.seed if args.seed is not None else _env_int("ARENA_SEED")
    bot = make_bot(args.name, seed)
    result = run_bot(bot, args.server, args.token, matches=args.matches, give_up_s=args.give_up)
    get_logger("reference_bots").info(
        "bot finished", matches=result.matches, decisions=result.decisions, why=result.stopped
    )
    if result.stopped == "unreachable":
        # Silence and exit status 0 would read as "played and done".
        raise ArenaError(f"no arena server answered at {result.address} within {args.give_up:g} s")
    return 0
