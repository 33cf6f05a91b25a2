"""Pieces shared by the trick-taking games (whist, tennis whist, spoil five, forty-five)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import CARD_TEXT, SUIT_MASKS
from engine.core import Action


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


#: ``play:<card>`` for every card, interned so legal-action lists allocate nothing new.
PLAY_ACTIONS: tuple[Action, ...] = tuple(Action("play", t) for t in CARD_TEXT)


def follow_suit_mask(hand: int, led_suit: int | None) -> int:
    """Plain follow-suit rule: the cards of the suit led if any, else the whole hand."""
    if led_suit is None:
        return hand
    same = hand & SUIT_MASKS[led_suit]
    return same if same else hand


def play_actions(mask: int) -> tuple[Action, ...]:
    """``play`` actions for the cards of ``mask``, ascending (the canonical order)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(PLAY_ACTIONS[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


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
