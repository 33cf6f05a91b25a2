"""A seat's view as text, for language models and people at a terminal (docs/llm.md).

``render`` writes what a seat may know (its observation, what ``Game.present`` shows every seat,
and the public events of earlier deals when given) in words; ``describe_action`` says an action
in words; ``parse_action`` reads an answer back into one of the legal actions. All are pure.
:data:`TEXT_VERSION` names the rendering: a hash of the wording tables and a revision number
(``words.py``), so a result can say which rendering its prompts came from.

How an answer is read (``parse_action``), in order; the first rule that decides, decides:

1. **Exact** (``how="exact"``): the answer, stripped, is a legal action's code (``play:QS``),
   its number as listed (from 0), or the exact words ``describe_action`` gives.
2. **Soft** (``how="soft"``): answers are folded (case, spaces and punctuation ignored; ``the``
   dropped; suit symbols read as letters, ``Q♠`` = ``QS``; ``10`` read as ``T``, ``10S`` =
   ``TS``) and compared with each legal action's forms: its code (``play qs``), its words, and
   short forms: a bare card or its name for a play (``QS``, ``queen of spades``), a bare card
   after ``rob`` for a rob, a suit letter or name for trumps (``H``, ``hearts``), a bare tennis
   card for a shot (``RF-LB``), ``smash``/``kill``/``out`` without the player in doubles.
   The parts tried, in turn: the whole answer; the last ``Action: X`` line (or ``Answer:``,
   ``Final answer:``, ``Move:``); the last non-empty line; text in backticks or quotes; each
   word of the last line (codes kept whole, numbers left out: ``I go with play:QS``, ``I will
   announce``), which must then name one legal action only. The soft rules read the last
   2,000 characters of an answer.
3. A part that fits two or more legal actions is **refused** (``how="none"``), the reason
   listing them; nothing is guessed. Otherwise ``how="none"`` with a reason naming what the
   answer seems to mean, why it is not legal when the observation says (a card not held, the
   suit to follow, a shot not from the ball's area), and the legal actions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.core import Action, Event, MatchConfig
from engine.registry import get_game
from engine.text.actions import describe_tennis_action, describe_trick_action
from engine.text.common import public_part, score_lines, summary_lines
from engine.text.parse import read
from engine.text.tennis_view import recent_lines, render_tennis
from engine.text.trick_view import render_trick_game
from engine.text.words import FORMATS, said, text_version

__all__ = ["TEXT_VERSION", "Parsed", "TextView", "describe_action", "parse_action", "render"]

#: A hash of the rendering's wording tables and revision (12 hex digits).
TEXT_VERSION = text_version()


@dataclass(frozen=True)
class TextView:
    """One decision (or moment) of a seat, in words."""

    #: The whole view: the table, the hand, what has been played, the score, and (when asked
    #: for) the legal actions listed with their numbers.
    text: str
    #: Each legal action in words, in the order of ``legal`` (empty when there is no decision).
    actions: tuple[str, ...]
    #: :data:`TEXT_VERSION`.
    version: str = TEXT_VERSION


@dataclass(frozen=True)
class Parsed:
    """An answer read against the legal actions."""

    #: Index into ``legal`` of the action meant, or ``None`` when none is.
    index: int | None
    #: How it was read: ``exact`` (an action's text or number), ``soft`` (the stated
    #: looser matches), or ``none``.
    how: str
    #: Why nothing was read, in one line for the answerer ("" when ``index`` is set).
    reason: str = ""


def describe_action(game: str, action: Action) -> str:
    """``action`` in words: ``play the queen of spades (QS)``, ``name hearts trumps
    (trump:H)``, ``A1: play the shot RF-LB (from your right fore court to their left back
    court)``."""
    if game == "tennis":
        return describe_tennis_action(action)
    return describe_trick_action(action)


def render(
    game: str,
    config: MatchConfig,
    observation: Mapping[str, Any],
    legal: Sequence[Action] = (),
    *,
    list_legal: bool = True,
    events: Sequence[Event | Mapping[str, Any]] = (),
) -> TextView:
    """The seat's view in words: ``observation`` in ``to_dict()`` form, ``legal`` the actions
    it may take now (empty when it is not its turn). With ``list_legal`` false the legal actions
    are not listed, only how to name one (a fixed line per game, telling nothing of the
    position). ``events``, the events the seat has seen (objects or ``to_dict()`` forms), add a
    summary of earlier deals from the public ones among them."""
    rules = get_game(game)
    shown = rules.present(config, public_part(observation))
    if rules.presentation_kind == "tennis_court":
        lines = render_tennis(rules, observation, shown)
    else:
        lines = render_trick_game(rules, config, observation)
    lines += score_lines(shown)
    lines += summary_lines(rules, config, events)
    if rules.presentation_kind == "tennis_court":
        lines += recent_lines(observation)
    actions = tuple(describe_action(game, a) for a in legal)
    lines += _decision_lines(game, config, legal, actions, list_legal)
    if not legal and observation.get("acting"):
        lines[-1] = said("waiting_for", who=observation["acting"])
    return TextView(text="\n".join(lines), actions=actions)


def _decision_lines(
    game: str,
    config: MatchConfig,
    legal: Sequence[Action],
    actions: Sequence[str],
    list_legal: bool,
) -> list[str]:
    if not legal:
        return [said("not_your_turn")]
    key = f"tennis/{config.players}" if game == "tennis" else game
    formats, example = FORMATS[key]
    lines = [said("your_turn")]
    if list_legal:
        lines.append(said("legal_head", example=legal[0].text))
        lines += [
            said("legal_line", number=i, code=a.text, words=words)
            for i, (a, words) in enumerate(zip(legal, actions, strict=True))
        ]
    else:
        lines.append(said("how_to_answer", formats=formats, example=example))
    return lines


def parse_action(
    game: str,
    answer: str,
    legal: Sequence[Action],
    *,
    observation: Mapping[str, Any] | None = None,
) -> Parsed:
    """The legal action ``answer`` names: exact, then the soft rules of this module's
    docstring; ambiguous answers are refused. ``observation`` (the seat's, ``to_dict()`` form),
    when given, lets the reason say why an action is not legal (a card not held, a suit to
    follow)."""
    found = read(answer, legal, lambda a: describe_action(game, a), game, observation)
    return Parsed(found.index, found.how, found.reason)
