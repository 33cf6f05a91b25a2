"""Rule-based whist: win cheaply, duck when partner already wins or the trick is lost.

Also the trick-play core of :mod:`reference_bots.rules.tennis_whist` (the same cards and play,
without a partner). Everything is read from the observation as plain data.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from reference_bots.rules.choice import Choice

RANKS = "23456789TJQKA"
_RANK = {r: i for i, r in enumerate(RANKS)}


def rank(card: str) -> int:
    """0 for a 2 … 12 for an ace."""
    return _RANK[card[0]]


def current_trick(observation: Mapping[str, Any]) -> tuple[list[str], list[int]]:
    """Cards and seats of the trick being played, empty when the seat is to lead."""
    tricks = observation.get("tricks") or []
    if tricks and tricks[-1]["winner"] == -1:
        return list(tricks[-1]["cards"]), list(tricks[-1]["seats"])
    return [], []


def played_cards(observation: Mapping[str, Any]) -> set[str]:
    """Every card played so far in this deal (finished tricks and the current one)."""
    return {c for t in observation.get("tricks") or [] for c in t["cards"]}


def beats(a: str, b: str, led: str, trump: str) -> bool:
    """Whether card ``a`` beats card ``b`` in a trick of suit ``led``."""
    if a[1] == b[1]:
        return rank(a) > rank(b)
    if a[1] == trump:
        return True
    if b[1] == trump:
        return False
    return a[1] == led


def winning_index(cards: Sequence[str], trump: str) -> int:
    """Index of the card currently winning a trick."""
    best = 0
    for i in range(1, len(cards)):
        if beats(cards[i], cards[best], cards[0][1], trump):
            best = i
    return best


def is_master(card: str, gone: set[str], hand: set[str]) -> bool:
    """No unseen card of its suit is higher: it wins any trick of its suit not trumped."""
    suit = card[1]
    return all(f"{r}{suit}" in gone or f"{r}{suit}" in hand for r in RANKS[rank(card) + 1 :])


def cost(card: str, trump: str) -> tuple[int, int]:
    """How dear a card is to give up: trumps cost more than any plain card, then rank."""
    return (1 if card[1] == trump else 0, rank(card))


def lowest(cards: Sequence[str], hand: Sequence[str], trump: str) -> str:
    """The cheapest card to throw: lowest plain card, from the shortest suit on equal rank."""

    def key(c: str) -> tuple[int, int, int]:
        return (*cost(c, trump), sum(1 for h in hand if h[1] == c[1]))

    return min(cards, key=key)


def choose_play(
    observation: Mapping[str, Any], cards: Sequence[str], players: int, partner: int | None
) -> str:
    """The card to play among ``cards`` (the legal ones), ``players`` taking part in the trick."""
    trump: str = observation["trump"]
    hand: list[str] = list(observation["hand"])
    held = set(hand)
    gone = played_cards(observation)
    trick, seats = current_trick(observation)
    if not trick:
        return _lead(cards, hand, held, gone, trump)
    led = trick[0][1]
    best = winning_index(trick, trump)
    winners = [c for c in cards if beats(c, trick[best], led, trump)]
    last = len(trick) == players - 1
    partner_safe = last or is_master(trick[best], gone, held) or trick[best][1] == trump
    if partner is not None and seats[best] == partner and partner_safe:
        return lowest(cards, hand, trump)
    if not winners:
        return lowest(cards, hand, trump)
    cheapest = min(winners, key=lambda c: cost(c, trump))
    if last:
        return cheapest
    safe = [c for c in winners if c[1] == trump or is_master(c, gone, held)]
    if safe:
        return min(safe, key=lambda c: cost(c, trump))
    if partner is not None and len(trick) == 1:
        return lowest(cards, hand, trump)  # second hand low: partner plays after
    return cheapest


def _lead(cards: Sequence[str], hand: list[str], held: set[str], gone: set[str], trump: str) -> str:
    trumps = [c for c in hand if c[1] == trump]
    masters = [c for c in cards if is_master(c, gone, held)]
    plain_masters = [c for c in masters if c[1] != trump]
    if plain_masters:
        # Cash a winner from the longest suit first.
        return max(plain_masters, key=lambda c: (sum(1 for h in hand if h[1] == c[1]), rank(c)))
    if len(trumps) >= 4 and any(c[1] == trump for c in masters):
        return max(trumps, key=rank)  # draw the opponents' trumps
    plain = [c for c in cards if c[1] != trump] or list(cards)
    length = {s: sum(1 for h in hand if h[1] == s) for s in "CDHS"}
    longest = max(plain, key=lambda c: (length[c[1]], -rank(c)))
    return min((c for c in plain if c[1] == longest[1]), key=rank)


def choose(observation: Mapping[str, Any], legal: Sequence[Choice], rng: random.Random) -> int:
    """Index into ``legal`` of the rule-based choice."""
    cards = [a.arg for a in legal]
    partner = (int(observation["seat"]) + 2) % 4
    return cards.index(choose_play(observation, cards, 4, partner))
