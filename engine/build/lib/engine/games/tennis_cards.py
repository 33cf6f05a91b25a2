"""Tennis card game: the court, both decks and the text forms of cards and actions.

Every count here is part of the game's definition (../shared/rules/tennis.md): changing one
changes the game, so bump :attr:`engine.games.tennis.Tennis.version` with it.

Cards of one type are interchangeable, so a hand is a list of 19 counts indexed by card type.
Card types in canonical order: the 16 shot cards by origin then destination, each in area
order RF, LF, RB, LB (``RF-RF``, ``RF-LF``, ``RF-RB``, ``RF-LB``, ``LF-RF`` … ``LB-LB``), then
``SMASH``, ``KILL``, ``OUT``.
"""

from __future__ import annotations

from typing import Final

# --- the court -------------------------------------------------------------------------------

#: Areas of one side, named from that side's player facing the net: right/left fore court (the
#: service boxes), right/left back court. The index is the area's number everywhere.
AREAS: Final = ("RF", "LF", "RB", "LB")
RF: Final = 0
LF: Final = 1
RB: Final = 2
LB: Final = 3
#: Whether an area is in the fore court (doubles: only that box's player may hit a shot from it).
IS_FORE: Final = (True, True, False, False)

# --- the Play Deck -----------------------------------------------------------------------------

#: Shot cards per origin, by destination (RF, LF, RB, LB): O→RF ×2, O→LF ×2, O→RB ×5, O→LB ×5.
SHOTS_PER_ORIGIN_BY_DEST: Final = (2, 2, 5, 5)
#: Smash cards: win the point unless answered by a Kill.
SMASH_COUNT: Final = 6
#: Kill cards: win the point at once; the only answer to a Smash.
KILL_COUNT: Final = 3
#: Out cards: concede the point (shown).
OUT_COUNT: Final = 7

#: Card type indices of the three special cards (after the 16 shot types).
SMASH: Final = 16
KILL: Final = 17
OUT: Final = 18
#: Number of card types.
NUM_TYPES: Final = 19
#: Shot types are 0..15.
NUM_SHOT_TYPES: Final = 16


def shot_type(origin: int, dest: int) -> int:
    """The card type of the shot from ``origin`` (hitter's side) to ``dest`` (other side)."""
    return origin * 4 + dest


#: Origin area of each shot type (-1 for the special cards).
SHOT_ORIGIN: Final = tuple(t // 4 if t < NUM_SHOT_TYPES else -1 for t in range(NUM_TYPES))
#: Destination area of each shot type (-1 for the special cards).
SHOT_DEST: Final = tuple(t % 4 if t < NUM_SHOT_TYPES else -1 for t in range(NUM_TYPES))
#: The shot types that may be played against a ball in each area, in canonical order.
SHOTS_FROM: Final = tuple(tuple(shot_type(o, d) for d in range(4)) for o in range(4))
#: Text form of each card type: ``RF-LB``, ``SMASH``, ``KILL``, ``OUT``.
TYPE_TEXT: Final = tuple(
    f"{AREAS[t // 4]}-{AREAS[t % 4]}" if t < NUM_SHOT_TYPES else ("SMASH", "KILL", "OUT")[t - 16]
    for t in range(NUM_TYPES)
)
#: Card type of each text form.
TYPE_INDEX: Final = {text: t for t, text in enumerate(TYPE_TEXT)}
#: How many cards of each type the Play Deck holds.
PLAY_DECK_COUNTS: Final = tuple(
    SHOTS_PER_ORIGIN_BY_DEST[t % 4]
    if t < NUM_SHOT_TYPES
    else (SMASH_COUNT, KILL_COUNT, OUT_COUNT)[t - 16]
    for t in range(NUM_TYPES)
)
#: Cards in the Play Deck (72 with the default counts).
PLAY_DECK_SIZE: Final = sum(PLAY_DECK_COUNTS)

# --- the Serve Deck ----------------------------------------------------------------------------

#: Serve card kinds, in canonical order.
ACE: Final = 0
FAULT: Final = 1
IN: Final = 2
SERVE_TEXT: Final = ("ACE", "FAULT", "IN")
#: How many of each serve card the Serve Deck holds: Ace ×3, Fault ×9, In ×28.
SERVE_DECK_COUNTS: Final = (3, 9, 28)
#: Cards in the Serve Deck (40 with the default counts).
SERVE_DECK_SIZE: Final = sum(SERVE_DECK_COUNTS)

# --- hands and scoring -------------------------------------------------------------------------

#: Hand size in singles, refilled at every new game.
SINGLES_HAND: Final = 10
#: Hand size of each player in doubles.
DOUBLES_HAND: Final = 7
#: Points that win a game: 0, 15, 30, 40, and at 40–40 the next point wins (first to 4).
POINTS_FOR_GAME: Final = 4
#: Games that win a set, with a lead of SET_MARGIN and no tie-break.
SET_GAMES: Final = 6
SET_MARGIN: Final = 2
#: Safety cap: a set that reaches this many games is decided on points.
SET_GAME_CAP: Final = 60
#: Tennis names of 0..3 points in a game.
POINT_NAMES: Final = ("0", "15", "30", "40")


def hand_texts(counts: list[int] | tuple[int, ...]) -> tuple[str, ...]:
    """A hand of counts as card texts in canonical order, repeated per copy."""
    out: list[str] = []
    for t, n in enumerate(counts):
        if n:
            out.extend([TYPE_TEXT[t]] * n)
    return tuple(out)


def counts_of(texts: list[str] | tuple[str, ...]) -> list[int]:
    """Counts per card type of ``texts``; ``ValueError`` names an unknown card."""
    counts = [0] * NUM_TYPES
    for text in texts:
        t = TYPE_INDEX.get(text.strip().upper())
        if t is None:
            raise ValueError(f"not a tennis card: {text!r}")
        counts[t] += 1
    return counts
