"""The reference bots by name: what ``arena bot NAME`` (arena/cli/bot.py) plays."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cardarena.bot import Bot, RandomBot

from engine import MatchConfig
from reference_bots.llm.estimate import Estimate, estimate_match
from reference_bots.llm.options import command_settings
from reference_bots.rules import RulesBot, Strategy, strategy_for
from reference_bots.rules.choice import Choice
from reference_bots.search import SearchBot


class RulesOrRandomBot(RulesBot):
    """The rule-based bot; for a game with no strategy yet it plays uniformly at random."""

    name = "rules"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._strategies: dict[str, Strategy | None] = {}

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Choice]) -> int:
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
    "search": SearchBot,
}


def make_bot(
    name: str,
    seed: int | None,
    *,
    budget_ms: float | None = None,
    iterations: int | None = None,
    solver: bool = True,
) -> Bot:
    """The reference bot called ``name``; ``KeyError`` for an unknown one, ``ValueError`` for a
    budget (or ``solver=False``) given to a bot that does not search."""
    if name == "search":
        return SearchBot(seed, budget_ms=budget_ms, iterations=iterations, solver=solver)
    if budget_ms is not None or iterations is not None or not solver:
        raise ValueError(f"only the search bot takes a budget or --no-solver, not {name!r}")
    return BOTS[name](seed)


def cost_estimate(command: str, config: MatchConfig) -> Estimate | None:
    """What one seat of a match of ``config`` costs a bot started by ``command``, for the bots
    that know (``arena bot llm``: tokens, docs/llm.md); ``None`` for any other command."""
    settings = command_settings(command)
    return None if settings is None else estimate_match(config, settings)
