"""Rule-based Spoil Five: rob with the weakest discard, win tricks cheaply, lead low, jinx only
when sure.

The same play serves Forty-Five (``reference_bots.rules.forty_five``), which adds a partner.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from engine.cards import SUIT_LETTERS, parse_card
from engine.games.spoil_rules import card_power, is_trump, trick_winner
from reference_bots.rules.choice import Choice


def choose(observation: Mapping[str, Any], legal: Sequence[Choice], rng: random.Random) -> int:
    """Index into ``legal`` of the rules bot's choice."""
    return choose_with_partners(observation, legal, partners=())


def choose_with_partners(
    obs: Mapping[str, Any], legal: Sequence[Choice], partners: Collection[int]
) -> int:
    """The shared strategy; ``partners`` are seats whose winning tricks need no help."""
    trump = SUIT_LETTERS.index(obs["trump"])
    demoted = bool(obs["ace_demoted"] or obs["demoted_played"])

    def value(c: int) -> int:  # plain cards (1..13) sort below every trump (> 100)
        return card_power(c, trump, demoted)

    kinds = [a.kind for a in legal]
    if "rob" in kinds:  # always rob: the turn-up is a trump; throw the weakest card
        robs = [i for i, k in enumerate(kinds) if k == "rob"]
        return min(robs, key=lambda i: value(parse_card(legal[i].arg)))
    if "claim" in kinds:
        hand = [parse_card(t) for t in obs["hand"]]
        sure = all(_is_boss(c, obs, trump) for c in hand)
        return kinds.index("jinx" if sure else "claim")
    if "play" not in kinds:  # announce rather than demote the ace; decline never chosen
        return kinds.index("announce") if "announce" in kinds else 0

    cards = [parse_card(a.arg) for a in legal]
    tricks = obs["tricks"]
    current = tricks[-1] if tricks and tricks[-1]["winner"] == -1 else None
    if current is None:
        return cards.index(_lead(cards, obs, trump, value, high=bool(partners)))
    played = [parse_card(t) for t in current["cards"]]
    leader_wins = current["seats"][trick_winner(played, trump, demoted)]
    if leader_wins in partners:
        return cards.index(min(cards, key=value))
    winners = [c for c in cards if trick_winner([*played, c], trump, demoted) == len(played)]
    if winners:
        return cards.index(min(winners, key=value))
    return cards.index(min(cards, key=value))


def _lead(
    cards: list[int], obs: Mapping[str, Any], trump: int, value: Callable[[int], int], high: bool
) -> int:
    """Lead a sure winner cheaply; else a plain card, the highest when ``high`` (a partner may
    follow it up) and else the lowest; else the lowest trump.

    A trump led that is not the highest left is overtaken: it is better kept to win a trick
    someone else leads. Alone at the table, a high plain card led is trumped too, and leading low
    gives the lead away cheaply. Each choice beat "draw trumps with two or more, else the highest
    plain card" in duplicate duels (docs/bots.md).
    """
    bosses = [c for c in cards if _is_boss(c, obs, trump)]
    if bosses:
        return min(bosses, key=value)
    plain = [c for c in cards if not is_trump(c, trump)]
    if plain:
        return (max if high else min)(plain, key=value)
    return min(cards, key=value)


def _is_boss(c: int, obs: Mapping[str, Any], trump: int) -> bool:
    """Whether trump ``c`` beats every trump not yet seen (the stock counts as unseen)."""
    if not is_trump(c, trump):
        return False
    seen = {parse_card(t) for t in obs["hand"]}
    for t in obs["tricks"]:
        seen.update(parse_card(x) for x in t["cards"])
    for key in ("pending_ace", "rob_discard"):
        if obs[key]:
            seen.add(parse_card(obs[key]))
    if obs["robbed_by"] in (-1, obs["seat"]):
        seen.add(parse_card(obs["turn_up"]))  # out of play, or in our own hand
    mine = card_power(c, trump, bool(obs["ace_demoted"]))
    return all(
        card_power(o, trump) < mine for o in range(52) if o not in seen and is_trump(o, trump)
    )
