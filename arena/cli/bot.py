"""``arena bot NAME``: run a reference bot against an arena server as a plain command.

Address and token default to ``$ARENA_ADDRESS`` and ``$ARENA_TOKEN``, which the arena sets when it
launches a bot, so ``arena bot rules`` is a complete bot command. Without ``--seed`` the bot's
generator is seeded from each match's ``bot_seed`` (the SDK does it), so a bot plays the same
moves in a match however many its process played before. ``arena bot llm`` asks a language model
(reference_bots/llm, docs/llm.md); with ``--estimate`` or ``--show-prompt`` it plays nothing.
"""

from __future__ import annotations

import argparse

from cardarena import Bot, BotError, run_bot
from cardarena.log import configure, get_logger

from arena.cli.arguments import parse_options
from arena.errors import ArenaError, UsageError
from engine import EngineError, MatchConfig, get_game
from reference_bots.catalog import BOTS, make_bot
from reference_bots.llm.estimate import estimate_match
from reference_bots.llm.options import settings_from
from reference_bots.llm.show import show_prompt

#: The flags only ``arena bot llm`` takes.
LLM_ONLY = ("endpoint", "model", "list_legal", "estimate", "show_prompt", "game")


def run(args: argparse.Namespace) -> int:
    """The ``arena bot`` command: exit status 0 once done (or the server is gone for good),
    :class:`ArenaError` when no server ever answered."""
    configure(args.log_level)
    if args.name == "llm":
        if args.estimate or args.show_prompt:
            return _llm_offline(args)
        bot = _llm_bot(args)
    else:
        bot = _reference_bot(args)
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


def _reference_bot(args: argparse.Namespace) -> Bot:
    if args.name not in BOTS:
        known = ", ".join([*sorted(BOTS), "llm"])
        raise UsageError(f"unknown bot {args.name!r} (reference bots: {known})")
    given = [f"--{k.replace('_', '-')}" for k in LLM_ONLY if getattr(args, k, None)]
    if given:
        raise UsageError(f"only the llm bot takes {', '.join(given)}, not {args.name!r}")
    try:
        return make_bot(
            args.name,
            args.seed,
            budget_ms=args.budget_ms,
            iterations=args.iterations,
            solver=args.solver,
        )
    except ValueError as err:
        raise UsageError(str(err)) from None


def _llm_bot(args: argparse.Namespace) -> Bot:
    if args.budget_ms is not None or args.iterations is not None or not args.solver:
        raise UsageError("only the search bot takes a budget or --no-solver, not 'llm'")
    try:
        settings = settings_from(args)
    except ValueError as err:
        raise UsageError(str(err)) from None
    # Loaded here: httpx (and the rich it imports) would slow every other bot's start.
    from reference_bots.llm.bot import LLMBot

    try:
        # The key from the environment only: never a flag (a process list would show it).
        return LLMBot(settings, settings.key(), args.seed)
    except ValueError as err:
        raise UsageError(str(err)) from None


def _llm_offline(args: argparse.Namespace) -> int:
    """``--estimate`` (tokens per seat and match) or ``--show-prompt`` (what the model is
    sent at a match's first decision), for ``--game``."""
    config = _game_config(args)
    settings = settings_from(args, need_endpoint=False)
    if args.show_prompt:
        print(show_prompt(config, settings, 1 if args.seed is None else args.seed))
        return 0
    estimate = estimate_match(config, settings)
    print(f"per seat and match: {estimate.per_seat()}")
    print(f"({estimate.basis}; about 4 characters a token; retries not counted)")
    return 0


def _game_config(args: argparse.Namespace) -> MatchConfig:
    if not args.game:
        raise UsageError("--estimate and --show-prompt need --game G")
    try:
        return get_game(args.game).configure(args.players, parse_options(args.option))
    except EngineError as err:
        raise UsageError(str(err)) from None
