"""Pieces shared by the trick-taking games (whist, tennis whist, spoil five, forty-five)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from engine._fast import quick_init
from engine.cards import CARD_TEXT, SUIT_MASKS
from engine.core import JSON, Action, Event, number_actions


@quick_init
@dataclass(frozen=True, slots=True)
class TrickView:
    """One trick as a seat sees it: public once played."""

    #: Seat that led the trick.
    leader: int
    #: Cards played, in play order starting with the leader's (text form).
    cards: tuple[str, ...]
    #: Seats that played them, in the same order.
    seats: tuple[int, ...]
    #: Seat that won it, or -1 while it is still being played.
    winner: int


def trick_view(
    leader: int, cards: Sequence[int], seats: Sequence[int], winner: int = -1
) -> TrickView:
    """The public view of a trick from card numbers (``winner`` -1 while it is played)."""
    return TrickView(leader, tuple(map(CARD_TEXT.__getitem__, cards)), tuple(seats), winner)


def trick_from_dict(data: Mapping[str, JSON]) -> TrickView:
    """A trick from an observation's plain-data form (``TrickView`` as ``to_dict()`` writes it)."""
    cards = tuple(str(c) for c in cast(list[JSON], data["cards"]))
    seats = tuple(int(cast(int, s)) for s in cast(list[JSON], data["seats"]))
    if len(cards) != len(seats) or any(c not in _CARD_NUMBER for c in cards):
        raise ValueError(f"not a trick: {dict(data)!r}")
    return TrickView(int(cast(int, data["leader"])), cards, seats, int(cast(int, data["winner"])))


def tricks_so_far(
    finished: Sequence[TrickView], leader: int, cards: Sequence[int], seats: Sequence[int]
) -> tuple[TrickView, ...]:
    """A deal's tricks as observations show them: finished ones, then the one being played."""
    if not cards:
        return tuple(finished)
    return (*finished, trick_view(leader, cards, seats))


#: ``play:<card>`` for every card, interned so legal-action lists allocate nothing new. They are
#: actions 0..51 of every trick game's action space (the space begins with them).
PLAY_ACTIONS: tuple[Action, ...] = number_actions(tuple(Action("play", t) for t in CARD_TEXT))


#: Most seats at any trick-taking table here (spoil five takes up to ten players).
MAX_SEATS = 10

#: ``PLAY_EVENTS[seat][card]``: the public ``play`` event ``{"seat": seat, "card": text}``,
#: interned. Events are immutable facts, so one object can stand in every match's log; a fresh
#: Event and dict per card played weighed on every playout (allocation, then the garbage
#: collector walking ever longer event logs; docs/performance.md has the figures).
PLAY_EVENTS: tuple[tuple[Event, ...], ...] = tuple(
    tuple(Event("play", {"seat": seat, "card": text}) for text in CARD_TEXT)
    for seat in range(MAX_SEATS)
)


def _suit_plays(suit: int) -> tuple[tuple[Action, ...], ...]:
    # Entry m holds the plays of the cards whose bits are set in the 13-bit suit mask m. The
    # masks with highest bit b are those below 2**b plus that card: doubling 13 times.
    table: list[tuple[Action, ...]] = [()]
    for rank in range(13):
        card = (PLAY_ACTIONS[suit * 13 + rank],)
        table += [t + card for t in table]
    return tuple(table)


#: ``SUIT_PLAYS[suit][bits]``: the ``play`` actions, ascending, for the cards of ``suit`` whose
#: rank bits (bit 0 = the 2) are set in ``bits`` (``hand >> 13 * suit & 0x1FFF``). Legal-action
#: lists are table look-ups instead of bit loops: the profile's biggest engine cost per decision.
#: (4 × 8192 shared tuples, built once at import.)
SUIT_PLAYS: tuple[tuple[tuple[Action, ...], ...], ...] = tuple(_suit_plays(s) for s in range(4))
_CLUBS, _DIAMONDS, _HEARTS, _SPADES = SUIT_PLAYS


def follow_suit_mask(hand: int, led_suit: int | None) -> int:
    """Plain follow-suit rule: the cards of the suit led if any, else the whole hand."""
    if led_suit is None:
        return hand
    same = hand & SUIT_MASKS[led_suit]
    return same if same else hand


def play_actions(mask: int) -> tuple[Action, ...]:
    """``play`` actions for the cards of ``mask``, ascending (the canonical order).

    Four table look-ups; concatenating with an empty tuple returns the other operand, so a
    one-suit mask allocates nothing.
    """
    return (
        _CLUBS[mask & 0x1FFF]
        + _DIAMONDS[mask >> 13 & 0x1FFF]
        + _HEARTS[mask >> 26 & 0x1FFF]
        + _SPADES[mask >> 39 & 0x1FFF]
    )


def follow_suit_plays(hand: int, led_suit: int | None) -> tuple[Action, ...]:
    """``play_actions(follow_suit_mask(hand, led_suit))``, with one look-up when following."""
    if led_suit is not None:
        same = hand >> 13 * led_suit & 0x1FFF
        if same:
            return SUIT_PLAYS[led_suit][same]
    return play_actions(hand)


#: Fisher–Yates steps for a 52-card pack: (position, bound, bits of the bound).
_SHUFFLE_STEPS: tuple[tuple[int, int, int], ...] = tuple(
    (i, i + 1, (i + 1).bit_length()) for i in range(51, 0, -1)
)


def shuffled_pack(rng: random.Random) -> list[int]:
    """``list(range(52))`` shuffled exactly as ``rng.shuffle`` does it, only faster.

    The same Fisher–Yates walk and the same rejection sampling from ``getrandbits`` as
    CPython's ``Random.shuffle``/``_randbelow``, minus a Python call per card, so seeds keep
    producing the deals they always did (a test pins the equality).
    """
    deck = list(range(52))
    getrandbits = rng.getrandbits
    for i, n, k in _SHUFFLE_STEPS:
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal_hands(deck: list[int], first: int, seats: int, per_seat: int) -> list[int]:
    """Hand masks of a deal one card at a time, clockwise from seat ``first``.

    ``deck[i]`` goes to seat ``(first + i) % seats`` for the first ``seats * per_seat`` cards.
    """
    hands = [0] * seats
    shift = (1).__lshift__
    dealt = deck[: seats * per_seat]
    for k in range(seats):
        hands[(first + k) % seats] = sum(map(shift, dealt[k::seats]))
    return hands


def mask_card_texts(mask: int) -> list[str]:
    """Text forms of the cards of ``mask``, ascending, as a list (event data); table-driven."""
    return [a.arg for a in play_actions(mask)]


def standard_trick_winner(cards: list[int], trump: int | None) -> int:
    """Index in ``cards`` of the winner: highest trump, else highest card of the suit led.

    Ranks follow card numbering (2 low, A high), as in whist and tennis whist.
    """
    led = cards[0] // 13
    best = 0
    best_key = -1
    for i, c in enumerate(cards):
        s = c // 13
        if s == trump:
            key = 100 + c % 13
        elif s == led:
            key = c % 13
        else:
            continue
        if key > best_key:
            best, best_key = i, key
    return best


# --- what play has shown: determinize() deals the unseen cards consistently with it -----------

_CARD_NUMBER = {t: i for i, t in enumerate(CARD_TEXT)}


def deal_tricks(
    finished: Sequence[TrickView], cards: Sequence[int], seats: Sequence[int]
) -> list[tuple[list[int], tuple[int, ...]]]:
    """This deal's tricks, the one being played last: (card numbers in play order, seats)."""
    out = [([_CARD_NUMBER[t] for t in view.cards], view.seats) for view in finished]
    if cards:
        out.append((list(cards), tuple(seats)))
    return out


def follow_suit_voids(
    players: int, tricks: Sequence[tuple[list[int], tuple[int, ...]]]
) -> list[int]:
    """Per seat, the cards it cannot hold under the plain follow-suit rule: every suit it failed
    to follow. Cards only leave a hand during a deal, so a void lasts the deal."""
    forbidden = [0] * players
    for cards, seats in tricks:
        led = cards[0] // 13
        for i in range(1, len(cards)):
            if cards[i] // 13 != led:
                forbidden[seats[i]] |= SUIT_MASKS[led]
    return forbidden


def played_by(players: int, tricks: Sequence[tuple[list[int], tuple[int, ...]]]) -> list[int]:
    """Per seat, the mask of the cards it played this deal."""
    played = [0] * players
    for cards, seats in tricks:
        for c, s in zip(cards, seats, strict=True):
            played[s] |= 1 << c
    return played
