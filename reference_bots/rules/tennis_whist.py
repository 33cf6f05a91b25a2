"""Rule-based tennis whist: name the longest suit trumps, then whist play without a partner."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from reference_bots.rules.choice import Choice
from reference_bots.rules.whist import choose_play, rank


def nominate(hand: Sequence[str], suits: Sequence[str]) -> str:
    """The suit held most among ``suits``; on equal length, the stronger one (rank sum)."""
    return max(
        suits,
        key=lambda s: (
            sum(1 for c in hand if c[1] == s),
            sum(rank(c) + 1 for c in hand if c[1] == s),
        ),
    )


def choose(observation: Mapping[str, Any], legal: Sequence[Choice], rng: random.Random) -> int:
    """Index into ``legal`` of the rule-based choice."""
    hand: list[str] = list(observation["hand"])
    if legal[0].kind == "trump":
        suits = [a.arg for a in legal]
        return suits.index(nominate(hand, suits))
    cards = [a.arg for a in legal]
    players = sum(1 for out in observation["eliminated"] if not out)
    return cards.index(choose_play(observation, cards, players, None))
