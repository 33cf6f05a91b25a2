"""Rule-based reference bots, one strategy module per game.

Each module ``reference_bots.rules.<game_id>`` defines
``choose(observation: Mapping[str, Any], legal: Sequence[Choice], rng: random.Random) -> int``:
a pure function of the observation (as plain data, the keys of the engine observation's
``to_dict()``) and the legal actions in canonical order, returning an index into ``legal``.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cardarena.bot import Bot

from reference_bots.rules.choice import Choice

Strategy = Callable[[Mapping[str, Any], Sequence[Choice], random.Random], int]


def strategy_for(game: str) -> Strategy:
    """The rule-based strategy of ``game``; ``ValueError`` when there is none."""
    try:
        module = importlib.import_module(f"reference_bots.rules.{game}")
    except ModuleNotFoundError:
        raise ValueError(f"no rule-based bot for game {game!r}") from None
    choose: Strategy = module.choose
    return choose


class RulesBot(Bot):
    """Plays each game by its rule-based strategy."""

    name = "rules"

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Choice]) -> int:
        return strategy_for(game)(observation, legal, self.rng)
