"""Reading an answer back into one of the legal actions: exact first, then the stated soft
rules (docs/llm.md, *Text views*; the package's docstring lists them)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.cards import SUIT_LETTERS, SUIT_NAMES
from engine.core import Action
from engine.text.words import FORMATS, RANK_WORDS, SUIT_SYMBOLS, card_words, joined, said, suit_name

#: A trailing ``Action: X`` line (also ``Answer:``, ``Final answer:``, ``Move:``).
LABELLED = re.compile(
    r"^[ \t]*(?:final[ \t]+)?(?:action|answer|move)[ \t]*[:=-][ \t]*(.*\S)", re.I | re.M
)
#: Text inside backticks or quotes.
QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|'([^']+)'|“([^“”]+)”")
#: An action's code form inside a sentence: ``play:QS``, ``shot:A1:RF-LB``.
CODE = re.compile(r"\b[a-z]+(?::[a-z0-9-]+)+", re.I)
#: A word of a sentence, codes kept whole: ``play:QS``, ``RF-LB``, ``announce``.
TOKEN = re.compile(r"[a-z0-9][a-z0-9:-]*", re.I)
SUIT_WORDS = dict(zip(SUIT_NAMES, SUIT_LETTERS, strict=True))
SYMBOL_LETTERS = str.maketrans({symbol: letter.lower() for symbol, letter in SUIT_SYMBOLS.items()})
#: The soft rules read the end of an answer only: a model's reasoning comes first, its answer
#: last, and a long answer costs no more than this to read.
SOFT_TAIL = 2000


@dataclass(frozen=True)
class Reading:
    """What :func:`read` found: the index meant, how, or why not (``Parsed``'s fields)."""

    index: int | None
    how: str
    reason: str = ""


def norm(text: str) -> str:
    """Case, spacing and punctuation folded: ``Q♠`` -> ``qs``, ``10S`` -> ``ts``, ``play:QS`` ->
    ``play qs``, ``the queen of spades`` -> ``queen of spades``."""
    t = text.casefold().translate(SYMBOL_LETTERS)
    t = re.sub(r"\b10([cdhs])\b", r"t\1", t)
    t = re.sub(r"\b10 of\b", "ten of", t)
    words = re.sub(r"[^0-9a-z]+", " ", t).split()
    return " ".join(w for w in words if w != "the")


def _card_keys(code: str) -> set[str]:
    return {norm(code), norm(card_words(code))}


def keys_of(action: Action, words: str) -> set[str]:
    """Every folded form that names ``action``: its code, its words, and the short forms (a
    bare card for a play, a suit for trumps, a bare tennis card for a shot, a bare
    ``smash``/``kill``/``out`` for a doubles player's)."""
    keys = {norm(action.text), norm(words), norm(re.sub(r"\([^)]*\)", "", words))}
    kind, arg = action.kind, action.arg
    if kind == "play":
        cards = _card_keys(arg)
        keys |= cards | {f"play {c}" for c in cards}
    elif kind == "trump":
        name = suit_name(arg)
        keys |= {arg.lower(), name, f"{name} trumps", f"trump {name}", f"trumps {name}"}
    elif kind == "rob":
        keys |= {f"rob {c}" for c in _card_keys(arg)}
    elif kind == "shot":
        keys.add(norm(arg.rpartition(":")[2]))
    elif kind in ("smash", "kill", "out") and arg:
        keys.add(kind)
    return keys


def _matches(candidate: str, keys: Sequence[set[str]]) -> list[int]:
    folded = norm(candidate)
    if not folded:
        return []
    return [i for i, k in enumerate(keys) if folded in k]


def candidates(answer: str) -> list[tuple[str, list[str]]]:
    """The parts of an answer tried in turn, by rule: each rule's texts."""
    lines = [line for line in answer.splitlines() if line.strip()]
    labelled = LABELLED.findall(answer)
    quoted = [next(g for g in m if g) for m in QUOTED.findall(answer)]
    last = lines[-1] if lines else ""
    return [
        ("whole answer", [answer]),
        ("labelled line", labelled[-1:]),
        ("last line", [last]),
        ("quoted", quoted),
        ("word of the last line", [t for t in TOKEN.findall(last) if not t.isdigit()]),
    ]


def read(
    answer: str,
    legal: Sequence[Action],
    describe: Callable[[Action], str],
    game: str,
    observation: Mapping[str, Any] | None,
) -> Reading:
    """The legal action ``answer`` names (see the package docstring for the rules)."""
    said_ = answer.strip()
    if not legal:
        return Reading(None, "none", said("p_no_turn"))
    if not said_:
        return Reading(None, "none", said("p_no_answer", example=_formats(game, legal)[1]))
    words = [describe(a) for a in legal]
    for i, action in enumerate(legal):
        if said_ in (action.text, words[i]):
            return Reading(i, "exact")
    if _index(said_, legal) is not None:
        return Reading(_index(said_, legal), "exact")
    keys = [keys_of(a, w) for a, w in zip(legal, words, strict=True)]
    said_ = said_[-SOFT_TAIL:]
    for _rule, texts in candidates(said_):
        found = sorted({i for t in texts for i in _matches(t, keys) + _number(t, legal)})
        if len(found) == 1:
            return Reading(found[0], "soft")
        if len(found) > 1:
            shown = joined([legal[i].text for i in found])
            return Reading(None, "none", said("p_ambiguous", said=_quote(said_), candidates=shown))
    return Reading(None, "none", refusal(said_, legal, game, observation))


def _index(text: str, legal: Sequence[Action]) -> int | None:
    """``text`` as a number of the list (from 0), or ``None``."""
    if len(text) <= 6 and text.isascii() and text.isdigit() and int(text) < len(legal):
        return int(text)
    return None


def _number(text: str, legal: Sequence[Action]) -> list[int]:
    index = _index(norm(text), legal)
    return [] if index is None else [index]


def _quote(text: str) -> str:
    last = [line for line in text.splitlines() if line.strip()][-1].strip()
    return repr(last if len(last) <= 40 else last[:37] + "...")


def _formats(game: str, legal: Sequence[Action]) -> tuple[str, str]:
    if game == "tennis":
        doubles = any(":" in a.arg or a.kind in ("give", "done", "leave") for a in legal)
        return FORMATS["tennis/4" if doubles else "tennis/2"]
    return FORMATS.get(game, ("kind:argument", "play:QS"))


def refusal(
    answer: str, legal: Sequence[Action], game: str, observation: Mapping[str, Any] | None
) -> str:
    """One line for re-asking: what the answer seems to name and why that is not legal now, or
    that it names no action; the legal actions either way."""
    legal_text = joined([a.text for a in legal])
    meant = _meant(answer, legal, game)
    if meant is None:
        formats = _formats(game, legal)[0]
        return said("p_nothing", said=_quote(answer), formats=formats, legal=legal_text)
    why = _why(meant, legal, observation) if observation is not None else ""
    return said("p_illegal", said=repr(meant.text), why=why, legal=legal_text)


def _meant(answer: str, legal: Sequence[Action], game: str) -> Action | None:
    """The action an answer that matched none seems to name: ``kind:arg`` as written, or a
    bare card in a trick game (a play)."""
    for rule, texts in candidates(answer):
        if rule == "word of the last line":
            texts = CODE.findall(" ".join(texts))
        for text in reversed(texts):
            t = text.strip().strip("`'\"“”.")
            code = CODE.fullmatch(t)
            if code:
                kind, _, arg = t.partition(":")
                return Action(kind.lower(), arg.upper())
            folded = norm(t)
            card = _card_of(folded)
            if card and game != "tennis":
                return Action("play", card)
    return None


def _card_of(folded: str) -> str:
    """A card code from a folded answer: ``qs``, ``queen of spades``, ``play qs``; else ``""``."""
    folded = folded.removeprefix("play ")
    m = re.fullmatch(r"([2-9tjqka])([cdhs])", folded)
    if m:
        return (m.group(1) + m.group(2)).upper()
    m = re.fullmatch(r"(\w+) of (\w+)", folded)
    if m and m.group(1) in RANK_WORDS and m.group(2) in SUIT_WORDS:
        return "23456789TJQKA"[RANK_WORDS.index(m.group(1))] + SUIT_WORDS[m.group(2)]
    return ""


def _why(meant: Action, legal: Sequence[Action], obs: Mapping[str, Any]) -> str:
    """Why ``meant`` is not legal, from what the seat's observation shows: a card not held,
    the suit to follow, a shot not from the ball's area."""
    if meant.kind in ("play", "rob") and "hand" in obs:
        if meant.arg not in [str(c) for c in obs["hand"]]:
            return said("p_not_held", card=meant.arg)
        suits = {a.arg[-1] for a in legal if a.kind == "play"}
        if meant.kind == "play" and len(suits) == 1 and meant.arg[-1] not in suits:
            return said("p_follow", suit=suit_name(suits.pop()))
    if meant.kind == "shot":
        card = meant.arg.rpartition(":")[2]
        held = {str(c) for p in obs.get("players", ()) if p.get("visible") for c in p["hand"]}
        if card not in held:
            return said("p_not_held", card=card)
        area = str(obs.get("ball_area") or "")
        if area and not card.startswith(area):
            return said("p_origin", area=area)
    return ""
