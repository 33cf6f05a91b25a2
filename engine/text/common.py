"""Pieces every game's text view shares: the score from ``Game.present``, the summary of
earlier deals from public events, and the seats' names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.core import Event, Game, MatchConfig, Presentation
from engine.text.words import SUMMARY_KINDS, said

#: Earlier-deal lines kept (the most recent): a long match's summary stays short.
SUMMARY_LINES = 12
#: Event data keys that hold a seat number, or a list of seat numbers.
SEAT_KEYS = frozenset({"seat", "winner", "dealer"})
SEATS_KEYS = frozenset({"out", "survivors", "seats", "players"})


def score_lines(shown: Presentation) -> list[str]:
    """The presentation's rows, facts and notes as lines."""
    lines: list[str] = []
    if shown.rows:
        lines.append(said("score_head"))
        for row in shown.rows:
            cells = ", ".join(said("cell", who=w, value=v) for w, v in row.cells)
            lines.append(said("score_row", label=row.label, cells=cells))
    lines += [said("facts", label=label, value=value) for label, value in shown.facts]
    lines += [f"{note}." if not note.endswith(".") else note for note in shown.notes]
    return lines


def _event_parts(event: Event | Mapping[str, Any]) -> tuple[str, Any, Mapping[str, Any]]:
    if isinstance(event, Event):
        return event.kind, event.to, event.data
    data = {k: v for k, v in event.items() if k not in ("kind", "to")}
    return str(event.get("kind", "")), event.get("to"), data


def _value(key: str, value: Any, names: Sequence[str], sides: Sequence[str]) -> str:
    """One event value in words: seats by name, per-side and per-seat lists labelled."""
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if key in SEAT_KEYS and is_int and 0 <= value < len(names):
        return str(names[value])
    if isinstance(value, list | tuple):
        if key in SEATS_KEYS:
            return " ".join(names[v] if 0 <= v < len(names) else str(v) for v in value)
        if sides and len(value) == len(sides) and len(sides) != len(names):
            return ", ".join(f"{w} {v}" for w, v in zip(sides, value, strict=True))
        if len(value) == len(names):
            return ", ".join(f"{w} {v}" for w, v in zip(names, value, strict=True))
        return " ".join(str(v) for v in value)
    return str(value)


def _summarized(event: Event | Mapping[str, Any]) -> bool:
    """Whether ``event`` is public and of a kind the summary tells (read cheaply: most are not)."""
    if isinstance(event, Event):
        return event.to is None and event.kind in SUMMARY_KINDS
    return event.get("to") is None and str(event.get("kind", "")) in SUMMARY_KINDS


def summary_lines(
    game: Game, config: MatchConfig, events: Sequence[Event | Mapping[str, Any]]
) -> list[str]:
    """Earlier deals (rounds, games) in one line each, from the public events among ``events``
    (what every seat saw, so nothing private is told), the most recent last. Only the lines
    shown are written (the last :data:`SUMMARY_LINES`); the others are counted: a render late in
    a long match costs a pass over the events, not a line per earlier deal."""
    found = [event for event in events if _summarized(event)]
    if not found:
        return []
    names = game.seat_names(config)
    sides_of = game.sides(config)
    sides = ["+".join(names[s] for s in side) for side in sides_of] if sides_of else []
    kept: list[str] = []
    for event in found[-SUMMARY_LINES:]:
        kind, _, data = _event_parts(event)
        details = "; ".join(
            f"{key.replace('_', ' ')} {_value(key, value, names, sides)}"
            for key, value in data.items()
        )
        kept.append(said("earlier_line", what=SUMMARY_KINDS[kind], details=details))
    lines = [said("earlier_head")]
    if len(found) > len(kept):
        lines.append(said("earlier_more", count=len(found) - len(kept)))
    return lines + kept


def public_part(observation: Mapping[str, Any]) -> dict[str, Any]:
    """The observation without the seat's own cards, for ``Game.present`` (which must read
    only what every seat shares)."""
    public = {k: v for k, v in observation.items() if k not in ("hand", "seat")}
    players = public.get("players")
    if isinstance(players, list | tuple):
        public["players"] = [
            {k: v for k, v in p.items() if k not in ("hand", "visible")}
            if isinstance(p, Mapping)
            else p
            for p in players
        ]
    return public
