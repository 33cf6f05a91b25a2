"""A bot's figures per match, read from its decisions' notes (docs/sdk.md, *Telemetry*).

A word of a note shaped ``t.KEY=NUMBER`` is a figure of that decision (``t.ms=840``,
``t.tok_in=1200``); summed over a seat's decisions it is the seat's total for the match, which
``arena match``, ``arena replay show`` and a tournament's report print. Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: What starts a telemetry word in a note.
PREFIX = "t."
#: A telemetry word: the prefix, a key, ``=``, a plain decimal number.
WORD = re.compile(r"t\.([a-z][a-z0-9_]{0,31})=(-?\d{1,15}(?:\.\d{1,6})?)")
#: What a record's bytes must hold if a note holds a figure (JSON writes a word's ASCII as it
#: is), and the longest such match: a record without it need not be read for its telemetry.
FIGURE_BYTES = re.compile(rb"t\.[a-z][a-z0-9_]{0,31}=-?\d")
FIGURE_SPAN = 40


def note_figures(note: str) -> dict[str, float]:
    """The telemetry words of one note, key to value; a key said twice counts twice; words
    that are not well formed are ignored (a note is free text)."""
    found: dict[str, float] = {}
    for word in note.split():
        m = WORD.fullmatch(word)
        if m is not None:
            found[m[1]] = found.get(m[1], 0.0) + float(m[2])
    return found


@dataclass(slots=True)
class Telemetry:
    """Summed figures: a seat's over a match, or a bot's over matches."""

    #: Decisions whose note held a figure.
    decisions: int = 0
    #: Key to sum, keys in the order first seen.
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, figures: Mapping[str, float], decisions: int = 1) -> None:
        self.decisions += decisions
        for key, value in figures.items():
            self.sums[key] = self.sums.get(key, 0.0) + value

    def to_dict(self) -> dict[str, Any]:
        return {"decisions": self.decisions, **{k: number(v) for k, v in self.sums.items()}}

    def line(self, per: int = 1) -> str:
        """``decisions 29, ms 4120, tok_in 8800`` (divided by ``per``: an average)."""
        parts = [("decisions", self.decisions / per), *((k, v / per) for k, v in self.sums.items())]
        return ", ".join(f"{k} {shown(v)}" for k, v in parts)


def number(value: float) -> int | float:
    """An integral sum as an int (JSON ``12``, not ``12.0``)."""
    return int(value) if value.is_integer() and math.isfinite(value) else round(value, 3)


def shown(value: float) -> str:
    return f"{number(value):,}" if value.is_integer() else f"{value:,.1f}"


def seat_telemetry(entries: Iterable[Mapping[str, Any]]) -> dict[int, Telemetry]:
    """Per seat, the figures of its decisions' notes summed over the record's ``entries``;
    seats without any are absent (a record without telemetry gives ``{}``)."""
    seats: dict[int, Telemetry] = {}
    for entry in entries:
        note = entry.get("note")
        seat = entry.get("seat")
        if entry.get("type") != "decision" or not isinstance(note, str) or PREFIX not in note:
            continue
        figures = note_figures(note)
        if figures and isinstance(seat, int):
            seats.setdefault(seat, Telemetry()).add(figures)
    return seats


def telemetry_lines(entries: Iterable[Mapping[str, Any]], names: list[str]) -> list[str]:
    """``telemetry`` and a line per seat that has any, else nothing."""
    seats = seat_telemetry(entries)
    if not seats:
        return []
    lines = ["telemetry (the bots' notes summed over the match; docs/sdk.md):"]
    for seat in sorted(seats):
        name = names[seat] if 0 <= seat < len(names) else str(seat)
        lines.append(f"  {name} (seat {seat}): {seats[seat].line()}")
    return lines
