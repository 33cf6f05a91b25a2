"""What a Python bot is: one object with one method that picks among the legal actions.

A strategy sees the observation as plain data (the same keys as the engine's observation
``to_dict()``, whether it runs in-process or behind the gRPC SDK) and the legal actions in
canonical order; it returns the index of its choice.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from engine import Action


class Bot(ABC):
    """A bot: ``choose`` is called once per decision."""

    #: The bot's name as shown in results.
    name: str = "bot"
    #: The bot's version string.
    version: str = "1"

    def __init__(self, seed: int | None = None) -> None:
        #: The bot's own generator, seeded from ``ARENA_SEED`` when the arena launches it, and
        #: again from each match's ``bot_seed`` as the match starts (``run_bot``).
        self.rng = random.Random(seed)

    def start_match(self, game: str, seat: int, options: Mapping[str, Any]) -> None:
        """Called when a match starts (optional)."""

    @abstractmethod
    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        """Index into ``legal`` of the chosen action."""


class RandomBot(Bot):
    """Uniformly random legal actions."""

    name = "random"

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        return self.rng.randrange(len(legal))
