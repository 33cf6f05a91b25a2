"""The text views' wording: every phrase and template in one table, so that the version hash
(:data:`TEXT_VERSION`) covers the words, and card and suit names.

A change of wording changes :data:`WORDS` and so the hash. A change of how the words are put
together (in ``trick_view.py``, ``tennis_view.py`` or ``parse.py``) shows in the golden texts
(tests/engine/text/); ``make text-views`` refuses to rewrite them until :data:`REVISION` is
bumped, which changes the hash too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Final

from engine.cards import RANK_LETTERS, SUIT_LETTERS, SUIT_NAMES

#: Bump when the rendering's layout or the soft-match rules change (the words are hashed anyway).
REVISION: Final = 1

RANK_WORDS: Final = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
#: Suit symbols read on input (``Q♠``), both the filled and the outlined forms.
SUIT_SYMBOLS: Final = {
    "♣": "C",
    "♦": "D",
    "♥": "H",
    "♠": "S",
    "♧": "C",
    "♢": "D",
    "♡": "H",
    "♤": "S",
}
#: Suits as a hand is written: spades first, as players sort a hand.
HAND_ORDER: Final = "SHDC"

#: Tennis: the four areas of a court, from the player facing the net.
AREA_WORDS: Final = {
    "RF": "right fore court",
    "LF": "left fore court",
    "RB": "right back court",
    "LB": "left back court",
}

WORDS: Final[Mapping[str, str]] = {
    # the table
    "game": "Game: {title}.",
    "you": "You are {name} (seat {seat} of {seats}).",
    "partner": "Your partner is {partner}; your opponents are {opponents}.",
    "alone": "You play alone against {opponents}.",
    "dealer": "Dealer: {dealer}.",
    "trump": "Trumps: {suit}; the turn-up is the {card}.",
    "trump_open": "Trumps: not named yet; the turn-up is the {card}.",
    "trump_none": "Trumps: not named yet.",
    "trump_named": "Trumps: {suit}.",
    "pending_ace": "The turned-up ace you robbed, {card}, joins your hand after trick 1.",
    "rob_discard": "You discarded {card} face down to rob the turn-up.",
    "ace_demoted": "You stayed silent: your ace of trumps ranks as the lowest trump this deal.",
    "hand": "Your hand ({count} cards):",
    "hand_empty": "Your hand: no cards.",
    "suit_line": "  {suit}{mark}: {cards}",
    "trump_mark": " (trumps)",
    "out": "Out of this set: {who}.",
    "rank_trumps": "Trumps rank, high to low: {cards}.",
    "rank_plain": "Other suits rank, high to low: {suits}.",
    # tricks
    "tricks_none": "No card has been played in this deal yet.",
    "trick_done": "Trick {number}: {plays}; won by {winner}.",
    "trick_now": "Trick {number}, in progress: {plays}.",
    "trick_now_empty": "Trick {number}: nobody has played yet.",
    "lead": "{who} led {card}",
    "play": "{who} {card}",
    # score and match
    "score_head": "Score:",
    "score_row": "  {label}: {cells}",
    "cell": "{who} {value}",
    "facts": "{label}: {value}.",
    "earlier_head": "Earlier in the match (most recent last):",
    "earlier_more": "  ({count} earlier lines left out)",
    "earlier_line": "  {what}: {details}",
    # whose turn
    "your_turn": "It is your turn.",
    "not_your_turn": "It is not your turn: wait.",
    "waiting_for": "It is not your turn: waiting for {who}.",
    "legal_head": "Your legal actions (answer with one's code, e.g. {example}, or its number):",
    "legal_line": "  {number}. {code} - {words}",
    "how_to_answer": "Answer with one action in its code form: {formats}. Example: {example}.",
    # actions
    "a_play": "play the {card}",
    "a_trump": "name {suit} trumps",
    "a_rob": "rob the turn-up, discarding the {card} face down",
    "a_decline": "decline to rob the turned-up ace",
    "a_announce": "announce that you hold the ace of trumps (do not rob)",
    "a_silent": "stay silent about the ace of trumps",
    "a_claim": "claim the pool now with three tricks",
    "a_jinx": "jinx: play on to win all five tricks",
    "a_pass": "pass (concede the point, no discard)",
    "a_pass_card": "pass, discarding {card} face down",
    "a_shot": "play the shot {card}",
    "a_smash": "play a Smash",
    "a_kill": "play a Kill",
    "a_out": "play the Out card (concede the point, showing it)",
    "a_give": "give {card} to your partner",
    "a_done": "keep your cards (end the exchange)",
    "a_leave": "leave the ball to your partner",
    "a_by": "{who}: {words}",
    "a_other": "{code}",
    "shot_card": "{code} (from your {origin} to their {dest})",
    # tennis
    "t_you": "You are {name}, playing {mode}.",
    "t_you_team": "You are team {team} ({players}): you decide for both players.",
    "t_you_player": "You are {name}, partner of {partner}, against {opponents}.",
    "t_phase_exchange": "Card exchange before the game: {stage}.",
    "t_stage_give": "give cards to your partner, or keep them",
    "t_stage_back": "the partner gives back as many cards ({given})",
    "t_ball": "The ball is in {whose} {area} ({words}).",
    "t_smash": "A Smash is pending against {whose} side: only a Kill answers it.",
    "t_no_ball": "No ball is in play.",
    "t_yours": "your",
    "t_theirs": "their",
    "t_left_by": "{who} left this ball to you.",
    "t_hand": "{name}'s hand{role}, {count} cards: {cards}",
    "t_hand_empty": "{name}'s hand{role}: no cards",
    "t_role": " ({role} court)",
    "t_other_hand": "{name}{role} holds {count} cards (hidden).",
    "t_server": "Server: {who}, serving from the {where}.",
    "t_stock": "Play deck: {stock} cards; discards: {discards}; serve deck: {serve} cards.",
    "t_seen": "Discards shown face up: {cards}.",
    "t_recent": "Recent events (oldest first):",
    # parsing
    "p_no_turn": "no action is legal now: it is not your turn",
    "p_no_answer": "the answer is empty; answer with one action's code, e.g. {example}",
    "p_nothing": (
        "{said} names no action; answer with one action's code ({formats}); legal: {legal}"
    ),
    "p_illegal": "{said} is not legal now{why}; legal: {legal}",
    "p_ambiguous": "{said} could be any of {candidates}; answer with one action's code",
    "p_not_held": ": you do not hold {card}",
    "p_follow": ": you must follow {suit}",
    "p_origin": ": a shot must start where the ball is ({area})",
    "p_more": ", and {count} more",
}

#: Public events summed up as earlier deals, by kind: what each says.
SUMMARY_KINDS: Final[Mapping[str, str]] = {
    "deal_score": "deal scored",
    "game_won": "game won",
    "rubber_won": "rubber won",
    "round_end": "round ended",
    "round_won": "round won",
    "tie_break": "tie-break",
    "set_won": "set won",
    "spoil": "deal spoiled",
    "pool_won": "pool won",
    "trump": "trumps named",
    "game": "tennis game won",
    "set": "tennis set won",
}

#: Per game: the action formats, told when the legal actions are not listed (fixed per game, so
#: they reveal nothing of the position), and an example that is a format, not a legal action.
FORMATS: Final[Mapping[str, tuple[str, str]]] = {
    "whist": ("play:<card> (a card is rank then suit: QS, TD, 4C)", "play:QS"),
    "tennis_whist": (
        "play:<card> (a card is rank then suit: QS, TD, 4C); trump:<C|D|H|S>",
        "play:QS",
    ),
    "spoil_five": (
        "play:<card> (a card is rank then suit: QS, TD, 4C); rob:<card to discard>; decline; "
        "announce; silent; claim; jinx",
        "play:QS",
    ),
    "forty_five": (
        "play:<card> (a card is rank then suit: QS, TD, 4C); rob:<card to discard>; decline; "
        "announce; silent",
        "play:QS",
    ),
    "tennis/2": ("pass; pass:<card>; shot:<card>; smash; kill; out", "shot:RF-LB"),
    "tennis/4": (
        "pass; pass:<player>:<card>; shot:<player>:<card>; smash:<player>; kill:<player>; "
        "out:<player>; give:<player>:<card>; done; leave",
        "shot:A1:RF-LB",
    ),
}


def card_words(code: str) -> str:
    """``QS`` -> ``queen of spades``; anything else as it is."""
    if len(code) == 2 and code[0] in RANK_LETTERS and code[1] in SUIT_LETTERS:
        return f"{RANK_WORDS[RANK_LETTERS.index(code[0])]} of {suit_name(code[1])}"
    return code


def suit_name(letter: str) -> str:
    """``H`` -> ``hearts``."""
    return SUIT_NAMES[SUIT_LETTERS.index(letter)] if letter in SUIT_LETTERS else letter


def said(template: str, **values: object) -> str:
    """``WORDS[template]`` filled in."""
    return WORDS[template].format(**values)


def joined(items: Sequence[str], limit: int = 30) -> str:
    """``a, b, c``, cut after ``limit`` with a count of the rest."""
    head = ", ".join(items[:limit])
    rest = len(items) - limit
    return head + (said("p_more", count=rest) if rest > 0 else "")


def text_version() -> str:
    """A hash of the wording tables and :data:`REVISION` (12 hex digits)."""
    tables = {
        "revision": REVISION,
        "words": dict(WORDS),
        "formats": {k: list(v) for k, v in FORMATS.items()},
        "ranks": list(RANK_WORDS),
        "symbols": dict(SUIT_SYMBOLS),
        "hand_order": HAND_ORDER,
        "areas": dict(AREA_WORDS),
        "summary": dict(SUMMARY_KINDS),
    }
    blob = json.dumps(tables, sort_keys=True, ensure_ascii=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]
