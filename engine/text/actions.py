"""Actions in words (``describe_action``), for every game's action kinds."""

from __future__ import annotations

from engine.core import Action
from engine.text.words import AREA_WORDS, card_words, said, suit_name

TRICK_KINDS = {
    "decline": "a_decline",
    "announce": "a_announce",
    "silent": "a_silent",
    "claim": "a_claim",
    "jinx": "a_jinx",
}
TENNIS_BARE = {"smash": "a_smash", "kill": "a_kill", "out": "a_out", "leave": "a_leave"}


def card_phrase(code: str) -> str:
    """``queen of spades (QS)``."""
    return f"{card_words(code)} ({code})"


def shot_phrase(code: str) -> str:
    """A tennis card with its areas spelt out when it is a shot: ``RF-LB (from your right fore
    court to their left back court)``."""
    origin, _, dest = code.partition("-")
    if origin in AREA_WORDS and dest in AREA_WORDS:
        return said("shot_card", code=code, origin=AREA_WORDS[origin], dest=AREA_WORDS[dest])
    return code


def describe_trick_action(action: Action) -> str:
    """A trick game's action (whist, tennis whist, spoil five, forty-five) in words."""
    if action.kind == "play":
        return said("a_play", card=card_phrase(action.arg))
    if action.kind == "trump":
        return said("a_trump", suit=suit_name(action.arg)) + f" ({action.text})"
    if action.kind == "rob":
        return said("a_rob", card=card_phrase(action.arg))
    if action.kind in TRICK_KINDS:
        return said(TRICK_KINDS[action.kind])
    return said("a_other", code=action.text)


def describe_tennis_action(action: Action) -> str:
    """A tennis action in words; doubles actions name the player (``A1: play the shot …``)."""
    who, _, card = action.arg.rpartition(":") if ":" in action.arg else ("", "", action.arg)
    kind = action.kind
    if kind in TENNIS_BARE and action.arg and ":" not in action.arg:
        who, card = action.arg, ""
    if kind == "pass":
        words = said("a_pass_card", card=card) if card else said("a_pass")
    elif kind == "shot":
        words = said("a_shot", card=shot_phrase(card))
    elif kind == "give":
        words = said("a_give", card=card)
    elif kind == "done":
        words = said("a_done")
    elif kind in TENNIS_BARE:
        words = said(TENNIS_BARE[kind])
    else:
        return said("a_other", code=action.text)
    return said("a_by", who=who, words=words) if who else words
