"""Dealing unseen cards among the places they may be: the solver behind ``determinize()``.

A game knows where its hidden cards are and what play has shown about them (a player who
failed to follow suit holds none of it); this module knows nothing of rules. It gets the unseen
cards as a bit mask and the places as ``(size, forbidden)`` pairs (how many cards the place
holds, and the cards it may not hold), and returns one mask per place.

With nothing forbidden, the deal is a plain shuffle, uniform over every deal. Otherwise cards
are dealt one at a time, the most constrained first (fewest places they may go), each to a
place drawn in proportion to the room left among those it may go to; a dead end (a card with
nowhere to go) starts over. That gives every consistent deal a chance (following any consistent
deal's choices never runs out of room), though not exactly equal chances. After
:data:`ATTEMPTS` dead ends a max-flow construction finds a consistent deal whenever one exists,
so the solver never loops forever.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

#: Random attempts before the deal is built by max-flow (dead ends are rare outside
#: near-forced positions, where one attempt in a few succeeds).
ATTEMPTS = 40


def deal_unseen(rng: random.Random, unseen: int, places: Sequence[tuple[int, int]]) -> list[int]:
    """The cards of ``unseen`` dealt to ``places`` (``(size, forbidden mask)`` each): one mask
    per place, each of its size, holding no card it forbids. ``ValueError`` when the sizes do not
    add up to the unseen cards or no consistent deal exists."""
    sizes = [size for size, _ in places]
    if sum(sizes) != unseen.bit_count() or min(sizes, default=0) < 0:
        raise ValueError(f"{unseen.bit_count()} unseen cards for places of sizes {sizes}")
    if not any(forbidden & unseen for _, forbidden in places):
        cards = _cards(unseen)
        shuffle(rng, cards)
        out, at = [], 0
        for size in sizes:
            out.append(_mask(cards[at : at + size]))
            at += size
        return out
    # Cards that the same places allow are alike: split the unseen cards by place, mask by mask.
    groups = {unseen: [p for p, size in enumerate(sizes) if size]}
    for p, (size, forbidden) in enumerate(places):
        if size and forbidden & unseen:
            split: dict[int, list[int]] = {}
            for part, where in groups.items():
                for sub, keep in ((part & ~forbidden, True), (part & forbidden, False)):
                    if sub:
                        split[sub] = where if keep else [q for q in where if q != p]
            groups = split
    # The most constrained first; a group every place allows is dealt last, by one shuffle.
    ordered = sorted(((where, _cards(part)) for part, where in groups.items()), key=_width)
    for _ in range(ATTEMPTS):
        dealt = _attempt(rng, ordered, sizes)
        if dealt is not None:
            return dealt
    allowed = [where for where, group in ordered for _ in group]
    return _by_flow(rng, [c for _, group in ordered for c in group], allowed, sizes)


def _width(group: tuple[list[int], list[int]]) -> int:
    return len(group[0])


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


_BIT = (1).__lshift__


def _mask(cards: Sequence[int]) -> int:
    return sum(map(_BIT, cards))  # distinct cards: the sum is the union


def shuffle(rng: random.Random, items: list[int]) -> None:
    """Shuffle ``items`` in place: Fisher–Yates on ``getrandbits``, several times faster than
    ``rng.shuffle`` (which calls Python per card) and as uniform."""
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]


def _below(rng: random.Random, n: int) -> int:
    k = n.bit_length()
    j = rng.getrandbits(k)
    while j >= n:
        j = rng.getrandbits(k)
    return j


def _attempt(
    rng: random.Random, ordered: list[tuple[list[int], list[int]]], sizes: list[int]
) -> list[int] | None:
    """One random deal, groups of alike cards most constrained first, or ``None`` at a dead end."""
    room = sizes.copy()
    out = [0] * len(sizes)
    everywhere = sum(1 for size in sizes if size)
    for where, group in ordered:
        if len(where) == everywhere:  # allowed anywhere (sorted last): a shuffle into the room
            rest = group.copy()
            shuffle(rng, rest)
            at = 0
            for p in where:
                out[p] |= _mask(rest[at : at + room[p]])
                at += room[p]
            return out
        for c in group:
            options = [p for p in where if room[p]]
            if not options:
                return None
            # In proportion to the room left, as a shuffled deal would place a free card.
            pick = _below(rng, sum(room[p] for p in options))
            for p in options:
                pick -= room[p]
                if pick < 0:
                    break
            room[p] -= 1
            out[p] |= 1 << c
    return out


def _by_flow(
    rng: random.Random, cards: list[int], allowed: list[list[int]], sizes: list[int]
) -> list[int]:
    """A consistent deal by augmenting paths (cards to places), tried in random order."""
    owner = [-1] * len(cards)  # the place each card went to
    held: list[list[int]] = [[] for _ in sizes]  # the cards each place holds
    order = list(range(len(cards)))
    rng.shuffle(order)
    options = [rng.sample(a, len(a)) for a in allowed]

    def place(i: int, seen: set[int]) -> bool:
        # Card i takes a place with room, or one whose card can move elsewhere (seen: the
        # places this search already tried, so none is tried twice and the search ends).
        for p in options[i]:
            if p in seen:
                continue
            seen.add(p)
            if len(held[p]) < sizes[p]:
                held[p].append(i)
                owner[i] = p
                return True
            for j in held[p]:
                if place(j, seen):  # j moved on (p is seen, so not back to p)
                    held[p].remove(j)
                    held[p].append(i)
                    owner[i] = p
                    return True
        return False

    for i in order:
        if not place(i, set()):
            raise ValueError("no deal of the unseen cards is consistent with the play")
    out = [0] * len(sizes)
    for i, p in enumerate(owner):
        out[p] |= 1 << cards[i]
    return out
