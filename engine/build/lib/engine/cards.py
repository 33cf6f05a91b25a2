"""The 52-card pack as small integers, with text forms and bit-mask helpers.

A card is ``suit * 13 + rank`` where ``rank`` 0..12 stands for 2..A and suits are ordered
clubs < diamonds < hearts < spades (the tie-break order of the rules). Sets of cards are int bit
masks (bit ``card``), which keeps the referee's hot path free of allocation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
SUITS: Final = (CLUBS, DIAMONDS, HEARTS, SPADES)
SUIT_LETTERS: Final = "CDHS"
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")
RANK_LETTERS: Final = "23456789TJQKA"

#: Rank indices of the court cards and the ace.
TEN, JACK, QUEEN, KING, ACE = 8, 9, 10, 11, 12

DECK_SIZE: Final = 52
FULL_DECK_MASK: Final = (1 << DECK_SIZE) - 1
SUIT_MASKS: Final = tuple(((1 << 13) - 1) << (13 * s) for s in SUITS)

CARD_TEXT: Final = tuple(RANK_LETTERS[c % 13] + SUIT_LETTERS[c // 13] for c in range(DECK_SIZE))
_TEXT_TO_CARD: Final = {t: c for c, t in enumerate(CARD_TEXT)}
# "10" is accepted on input as a courtesy to humans; the canonical form is "T".
_TEXT_TO_CARD.update({"10" + SUIT_LETTERS[s]: s * 13 + TEN for s in SUITS})


def card(rank: int, suit: int) -> int:
    """The card of ``rank`` (0 = 2 … 12 = A) and ``suit``."""
    return suit * 13 + rank


def parse_card(text: str) -> int:
    """Parse a card's text form (case-insensitive); raises ``ValueError`` on garbage."""
    try:
        return _TEXT_TO_CARD[text.strip().upper()]
    except KeyError:
        raise ValueError(f"not a card: {text!r}") from None


def parse_suit(text: str) -> int:
    """Parse a suit letter or name; raises ``ValueError`` on garbage."""
    t = text.strip().upper()
    if len(t) == 1 and t in SUIT_LETTERS:
        return SUIT_LETTERS.index(t)
    for i, name in enumerate(SUIT_NAMES):
        if t == name.upper():
            return i
    raise ValueError(f"not a suit: {text!r}")


def mask_of(cards: Iterable[int]) -> int:
    """The bit mask holding ``cards``."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_in(mask: int) -> Iterator[int]:
    """Cards of ``mask`` in ascending card order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def cards_list(mask: int) -> list[int]:
    """Cards of ``mask`` as a list, ascending."""
    return list(cards_in(mask))


#: Per suit: a 13-bit rank mask (bit 0 = the 2) -> the text forms of those cards, ascending;
#: filled as masks occur (at most 4 × 8192 entries). Observations show a hand at every decision.
_SUIT_TEXTS: Final[tuple[dict[int, tuple[str, ...]], ...]] = tuple({0: ()} for _ in range(4))


def mask_texts(mask: int) -> tuple[str, ...]:
    """Text forms of the cards of ``mask``, ascending by suit then rank."""
    clubs, diamonds, hearts, spades = _SUIT_TEXTS
    try:
        return (
            clubs[mask & 0x1FFF]
            + diamonds[mask >> 13 & 0x1FFF]
            + hearts[mask >> 26 & 0x1FFF]
            + spades[mask >> 39 & 0x1FFF]
        )
    except KeyError:
        for suit, table in enumerate(_SUIT_TEXTS):
            bits = mask >> 13 * suit & 0x1FFF
            if bits not in table:
                table[bits] = tuple(CARD_TEXT[c] for c in cards_in(bits << 13 * suit))
        return mask_texts(mask)
