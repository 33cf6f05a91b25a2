"""Rule-based Forty-Five: Spoil Five's strategy, leaving tricks its partner is winning."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from reference_bots.rules.choice import Choice
from reference_bots.rules.spoil_five import choose_with_partners


def choose(observation: Mapping[str, Any], legal: Sequence[Choice], rng: random.Random) -> int:
    """Index into ``legal`` of the rules bot's choice."""
    seat = int(observation["seat"])
    partners = (seat ^ 2,) if len(observation["tricks_won"]) == 4 else ()
    return choose_with_partners(observation, legal, partners)
