"""A seat's view as text, for language models and people at a terminal (docs/llm.md).

``render`` writes what a seat may know (its observation, and what ``Game.present`` shows every
seat) in words; ``parse_action`` reads an answer back into one of the legal actions. Both are
pure. :data:`TEXT_VERSION` names the rendering: it changes whenever the wording may change, so a
result can say which rendering its prompts came from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.core import Action, MatchConfig
from engine.registry import get_game

#: A hash of this module's source: the rendering's version (12 hex digits).
TEXT_VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


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
    """``action`` in words."""
    return action.text


def render(
    game: str,
    config: MatchConfig,
    observation: Mapping[str, Any],
    legal: Sequence[Action] = (),
    *,
    list_legal: bool = True,
) -> TextView:
    """The seat's view in words: ``observation`` in ``to_dict()`` form, ``legal`` the actions
    it may take now (empty when it is not its turn). With ``list_legal`` false the legal actions
    are not listed, only how to name one."""
    rules = get_game(game)
    shown = rules.present(config, observation)
    lines = [f"Game: {rules.title}. You are seat {observation.get('seat')}."]
    lines += [f"{row.label}: " + ", ".join(f"{k} {v}" for k, v in row.cells) for row in shown.rows]
    lines += [f"{key}: {value}" for key, value in shown.facts]
    lines += list(shown.notes)
    lines.append("Your view: " + json.dumps(dict(observation), sort_keys=True))
    actions = tuple(describe_action(game, a) for a in legal)
    if legal and list_legal:
        lines.append("Legal actions:")
        lines += [f"{i}. {a.text}" for i, a in enumerate(legal)]
    elif legal:
        lines.append("Answer with one action, e.g. play:QS.")
    return TextView(text="\n".join(lines), actions=actions)


def parse_action(game: str, answer: str, legal: Sequence[Action]) -> Parsed:
    """The legal action ``answer`` names: an action's text or its number exactly."""
    said = answer.strip()
    for i, action in enumerate(legal):
        if said == action.text:
            return Parsed(i, "exact")
    if said.isdigit() and int(said) < len(legal):
        return Parsed(int(said), "exact")
    return Parsed(None, "none", f"{said[:40]!r} names no legal action")
