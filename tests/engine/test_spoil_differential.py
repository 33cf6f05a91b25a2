"""Differential test: a second, deliberately plain reading of the Spoil Five rules of play.

Everything below the line is written straight from ../shared/rules/spoil-five.md with card texts,
lists and dicts (no bit masks, no shared tables), then compared with the engine's legal-play and
trick-winner functions over many random positions, and with the referee inside real playouts.
"""

from __future__ import annotations

import random

import pytest

from engine import get_game
from engine.cards import CARD_TEXT, parse_card
from engine.games.spoil_rules import SpoilTableState, legal_play_mask, trick_winner

#: Every test here plays many random deals against a plain model: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

# --- the plain model ---------------------------------------------------------------------------

SUITS = ["C", "D", "H", "S"]
ALL_CARDS = [rank + suit for suit in SUITS for rank in "23456789TJQKA"]

# Trumps, high to low, from the table of the rules page ("AH" = ace of hearts).
TRUMP_RANKING = {
    "S": ["5S", "JS", "AH", "AS", "KS", "QS", "2S", "3S", "4S", "6S", "7S", "8S", "9S", "TS"],
    "C": ["5C", "JC", "AH", "AC", "KC", "QC", "2C", "3C", "4C", "6C", "7C", "8C", "9C", "TC"],
    "D": ["5D", "JD", "AH", "AD", "KD", "QD", "TD", "9D", "8D", "7D", "6D", "4D", "3D", "2D"],
    "H": ["5H", "JH", "AH", "KH", "QH", "TH", "9H", "8H", "7H", "6H", "4H", "3H", "2H"],
}
# Plain suits, high to low: "high in red, low in black"; the ace of hearts is no heart.
PLAIN_RANKING = {
    "S": ["KS", "QS", "JS", "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS"],
    "C": ["KC", "QC", "JC", "AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC"],
    "D": ["KD", "QD", "JD", "TD", "9D", "8D", "7D", "6D", "5D", "4D", "3D", "2D", "AD"],
    "H": ["KH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H"],
}


def ace_of_trumps(trump: str) -> str:
    """The ace of the trump suit (the ace of hearts when hearts are trumps)."""
    return "A" + trump


def trumps_high_to_low(trump: str, demoted: bool) -> list[str]:
    """The trump order; a demoted ace of trumps drops to the bottom."""
    order = list(TRUMP_RANKING[trump])
    if demoted:
        order.remove(ace_of_trumps(trump))
        order.append(ace_of_trumps(trump))
    return order


def is_trump(card: str, trump: str) -> bool:
    return card == "AH" or card[1] == trump


def suit_for_play(card: str, trump: str) -> str:
    """The suit a card counts as: the ace of hearts is always a trump."""
    return trump if card == "AH" else card[1]


def may_hold_back(card: str, led: str, trump: str, demoted: bool) -> bool:
    """Reneging privilege: 5, J of trumps and AH need not be played to a lower trump led.

    The comparison is with the card led; a demoted ace has no privilege.
    """
    privileged = ["5" + trump, "J" + trump, "AH"]
    if demoted and ace_of_trumps(trump) in privileged:
        privileged.remove(ace_of_trumps(trump))
    if card not in privileged:
        return False
    order = trumps_high_to_low(trump, demoted)
    return order.index(card) < order.index(led)


def plain_legal(hand: list[str], led: str | None, trump: str, demoted: bool) -> set[str]:
    """The cards of ``hand`` that may be played (``led`` None: leading)."""
    if led is None:
        return set(hand)
    if is_trump(led, trump):
        my_trumps = [c for c in hand if is_trump(c, trump)]
        if not my_trumps:
            return set(hand)
        if all(may_hold_back(c, led, trump, demoted) for c in my_trumps):
            return set(hand)
        return set(my_trumps)
    led_suit = led[1]
    same_suit = [c for c in hand if suit_for_play(c, trump) == led_suit]
    if same_suit:  # follow suit or trump
        return set(same_suit) | {c for c in hand if is_trump(c, trump)}
    return set(hand)


def plain_winner(trick: list[str], trump: str, demoted: bool) -> int:
    """Index of the winner: highest trump, else highest card of the suit led."""
    trumps = [c for c in trick if is_trump(c, trump)]
    if trumps:
        order = trumps_high_to_low(trump, demoted)
        best = min(trumps, key=order.index)
    else:
        led_suit = trick[0][1]
        order = PLAIN_RANKING[led_suit]
        best = min((c for c in trick if c[1] == led_suit), key=order.index)
    return trick.index(best)


# --- comparisons -------------------------------------------------------------------------------


def to_mask(cards: list[str]) -> int:
    return sum(1 << parse_card(c) for c in cards)


def from_mask(mask: int) -> set[str]:
    return {CARD_TEXT[i] for i in range(52) if mask >> i & 1}


def random_hand(rng: random.Random, trump: str, exclude: set[str]) -> list[str]:
    """1-5 cards, often rich in trumps and privileged cards so the interesting cases come up."""
    pool = [c for c in ALL_CARDS if c not in exclude]
    if rng.random() < 0.5:
        heavy = [c for c in pool if is_trump(c, trump)]
        pool = heavy * 3 + pool
    hand: list[str] = []
    size = rng.randint(1, 5)
    while len(hand) < size:
        c = rng.choice(pool)
        if c not in hand:
            hand.append(c)
    return hand


def test_legal_plays_agree_with_the_plain_model() -> None:
    rng = random.Random(20240601)
    checked = 0
    for _ in range(150_000):
        trump = rng.choice(SUITS)
        demoted = rng.random() < 0.3
        # A tenth of the positions are leads; half the rest are trump leads.
        led: str | None = None
        if rng.random() < 0.9:
            pool = TRUMP_RANKING[trump] if rng.random() < 0.5 else ALL_CARDS
            led = rng.choice(pool)
        hand = random_hand(rng, trump, {led} if led else set())
        expected = plain_legal(hand, led, trump, demoted)
        got = legal_play_mask(
            to_mask(hand), -1 if led is None else parse_card(led), SUITS.index(trump), demoted
        )
        assert from_mask(got) == expected, (hand, led, trump, demoted)
        checked += 1
    assert checked == 150_000


def test_trick_winners_agree_with_the_plain_model() -> None:
    rng = random.Random(77)
    for _ in range(100_000):
        trump = rng.choice(SUITS)
        demoted = rng.random() < 0.3
        size = rng.randint(2, 10)
        pool = ALL_CARDS if rng.random() < 0.5 else TRUMP_RANKING[trump] + ALL_CARDS[::3]
        trick: list[str] = []
        while len(trick) < size:
            c = rng.choice(pool)
            if c not in trick:
                trick.append(c)
        expected = plain_winner(trick, trump, demoted)
        got = trick_winner([parse_card(c) for c in trick], SUITS.index(trump), demoted)
        assert got == expected, (trick, trump, demoted)


def test_referee_agrees_with_the_plain_model_in_playouts() -> None:
    """Inside real matches: every legal-action list and every trick winner."""
    positions = 0
    for game_id, players in (("spoil_five", 5), ("spoil_five", 8), ("forty_five", 4)):
        game = get_game(game_id)
        for seed in range(100):
            state = game.new_match(game.configure(players), seed)
            assert isinstance(state, SpoilTableState)
            rng = random.Random(seed)
            while (seat := state.to_move) is not None:
                legal = state.legal_actions()
                trump = SUITS[state.trump]
                demoted = state.rules.demoted
                if legal[0].kind == "play":
                    hand = sorted(from_mask(state.hands[seat]))
                    led = CARD_TEXT[state.trick_cards[0]] if state.trick_cards else None
                    assert {a.arg for a in legal} == plain_legal(hand, led, trump, demoted)
                    positions += 1
                action = rng.choice(legal)
                trick = [CARD_TEXT[c] for c in state.trick_cards]
                seats = list(state.trick_seats)
                events = state.apply(action)
                for e in events:
                    if e.kind == "trick":
                        expected = plain_winner([*trick, action.arg], trump, demoted)
                        assert e.data["winner"] == [*seats, seat][expected]
    assert positions > 10_000
