"""The trick games' text view (whist, tennis whist, spoil five, forty-five): the table, the
trump, the hand by suit, this deal's tricks, from a seat's observation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.cards import RANK_LETTERS, SUIT_LETTERS
from engine.core import Game, MatchConfig, name_of
from engine.games.spoil_rules import PLAIN_ORDERS, TRUMP_ORDERS
from engine.text.actions import card_phrase
from engine.text.words import HAND_ORDER, said, suit_name

#: Games whose cards rank in spoil five's order (the ace of hearts always a trump).
SPOIL_GAMES = frozenset({"spoil_five", "forty_five"})


def table_lines(game: Game, config: MatchConfig, obs: Mapping[str, Any]) -> list[str]:
    """Who the seat is, its partner and opponents, the dealer."""
    names = game.seat_names(config)
    seat = int(obs["seat"])
    lines = [
        said("game", title=game.title),
        said("you", name=names[seat], seat=seat + 1, seats=len(names)),
    ]
    sides = game.sides(config)
    mine = next((side for side in sides or () if seat in side), (seat,))
    partners = [names[s] for s in mine if s != seat]
    opponents = " and ".join(names[s] for s in range(len(names)) if s not in mine)
    if partners:
        lines.append(said("partner", partner=" and ".join(partners), opponents=opponents))
    else:
        lines.append(said("alone", opponents=opponents))
    dealer = name_of(names, obs.get("dealer"))
    if dealer:
        lines.append(said("dealer", dealer=dealer))
    return lines


def trump_lines(obs: Mapping[str, Any]) -> list[str]:
    """The trump suit and the turn-up, and what the seat alone knows about them."""
    trump, card = str(obs.get("trump") or ""), str(obs.get("turn_up") or "")
    if trump and card:
        lines = [said("trump", suit=suit_name(trump), card=card_phrase(card))]
    elif trump:
        lines = [said("trump_named", suit=suit_name(trump))]
    elif card:
        lines = [said("trump_open", card=card_phrase(card))]
    else:
        lines = [said("trump_none")]
    if obs.get("pending_ace"):
        lines.append(said("pending_ace", card=obs["pending_ace"]))
    if obs.get("rob_discard"):
        lines.append(said("rob_discard", card=obs["rob_discard"]))
    if obs.get("ace_demoted"):
        lines.append(said("ace_demoted"))
    return lines


def _spoil_orders(trump: str) -> tuple[list[str], dict[str, list[str]]]:
    """Spoil five's and forty-five's card order for ``trump``, high to low, as codes: the
    trumps (the ace of hearts among them) and each other suit."""
    t = SUIT_LETTERS.index(trump)
    trumps = [c if c == "AH" else c + trump for c in TRUMP_ORDERS[t].split()]
    plain = {
        SUIT_LETTERS[s]: [r + SUIT_LETTERS[s] for r in PLAIN_ORDERS[s].split()]
        for s in range(4)
        if s != t
    }
    return trumps, plain


def rank_lines(game: str, trump: str) -> list[str]:
    """Where the cards rank is not the usual order (spoil five, forty-five), say it."""
    if game not in SPOIL_GAMES or trump not in SUIT_LETTERS:
        return []
    trumps, plain = _spoil_orders(trump)
    suits = "; ".join(f"{suit_name(s)} {' '.join(cards)}" for s, cards in plain.items())
    return [said("rank_trumps", cards=" ".join(trumps)), said("rank_plain", suits=suits)]


def hand_lines(hand: Sequence[str], trump: str, game: str = "") -> list[str]:
    """The hand by suit, spades first, high cards first, codes kept: ``Spades: AS, QS, 7S``;
    in spoil five and forty-five, in their order, the ace of hearts among the trumps."""
    if not hand:
        return [said("hand_empty")]
    lines = [said("hand", count=len(hand))]
    groups: dict[str, list[str]] = {s: [] for s in HAND_ORDER}
    if game in SPOIL_GAMES and trump in SUIT_LETTERS:
        trumps, plain = _spoil_orders(trump)
        order = {c: i for i, c in enumerate([*trumps, *(c for v in plain.values() for c in v)])}
        for c in sorted(hand, key=lambda c: order.get(c, 99)):
            groups[trump if c in trumps else c[-1]].append(c)
    else:
        for c in sorted(
            hand, key=lambda c: -RANK_LETTERS.index(c[0]) if c[0] in RANK_LETTERS else 0
        ):
            groups[c[-1]].append(c)
    for suit in HAND_ORDER:
        cards = groups[suit]
        if cards:
            mark = said("trump_mark") if suit == trump else ""
            name = suit_name(suit).capitalize()
            lines.append(said("suit_line", suit=name, mark=mark, cards=", ".join(cards)))
    return lines


def trick_lines(names: Sequence[str], tricks: Sequence[Mapping[str, Any]]) -> list[str]:
    """This deal's tricks, one line each, the one being played last."""
    if not tricks:
        return [said("tricks_none")]
    lines = []
    for number, trick in enumerate(tricks, 1):
        seats = [name_of(names, s) or "?" for s in trick.get("seats", ())]
        cards = [str(c) for c in trick.get("cards", ())]
        plays = [
            said("lead" if i == 0 else "play", who=who, card=card)
            for i, (who, card) in enumerate(zip(seats, cards, strict=False))
        ]
        winner = name_of(names, trick.get("winner"))
        if winner:
            lines.append(said("trick_done", number=number, plays=", ".join(plays), winner=winner))
        elif plays:
            lines.append(said("trick_now", number=number, plays=", ".join(plays)))
        else:
            lines.append(said("trick_now_empty", number=number))
    return lines


def render_trick_game(game: Game, config: MatchConfig, obs: Mapping[str, Any]) -> list[str]:
    """The table, trumps, hand and tricks of a trick game (the score comes after, shared)."""
    names = game.seat_names(config)
    lines = table_lines(game, config, obs)
    out = obs.get("eliminated")
    if isinstance(out, list | tuple) and any(out):
        lines.append(said("out", who=", ".join(names[s] for s, gone in enumerate(out) if gone)))
    lines += trump_lines(obs)
    trump = str(obs.get("trump") or "")
    lines += hand_lines([str(c) for c in obs.get("hand", ())], trump, game.id)
    lines += rank_lines(game.id, trump)
    lines += trick_lines(names, obs.get("tricks", ()))
    return lines
