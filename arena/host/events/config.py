"""A competition's ``[[events]]``: each checked key by key, one line per mistake naming it
(``cup.toml: events[1].best_of: must be an integer of at least 1; got 0``)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from arena.checks import Checker

EventFormat = Literal["knockout", "swiss", "heats"]
FORMATS: tuple[EventFormat, ...] = ("knockout", "swiss", "heats")
#: The stated tie-break rules of a knockout tie (docs/hosting.md, "Events").
TIEBREAKS = ("extra-deal", "seed")
#: The keys of each format, beyond ``name``, ``format``, ``start``, ``entrants``.
FORMAT_KEYS: dict[str, tuple[str, ...]] = {
    "knockout": ("best_of", "tiebreak"),
    "swiss": ("rounds", "deals_per_round"),
    "heats": ("advance", "deals_per_heat"),
}
COMMON_KEYS = ("name", "format", "start", "entrants")
#: An event's name is part of its URL: letters, digits, ``-`` and ``_``.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
MAX_ENTRANTS = 256
MAX_DEALS = 50
MAX_ROUNDS = 50


@dataclass(frozen=True, slots=True)
class EventConfig:
    """One configured event."""

    name: str
    format: EventFormat
    #: When it begins (UTC); ``None``: only when the host starts it
    #: (``arena remote admin event start NAME``).
    start: dt.datetime | None
    #: The ladder's best this many (each bot's latest validated version) enter.
    entrants: int = 8
    #: Knockout: duplicate deals per tie, and the rule for a level tie.
    best_of: int = 1
    tiebreak: str = "extra-deal"
    #: Swiss: rounds, and deals per pairing in each.
    rounds: int = 3
    deals_per_round: int = 1
    #: Heats: the best this many of each heat go through; deals each heat plays.
    advance: int = 1
    deals_per_heat: int = 1

    def to_json(self) -> dict[str, Any]:
        """What the store keeps with a started event (its rules as they were then)."""
        keys = COMMON_KEYS[1:] + FORMAT_KEYS[self.format]
        out: dict[str, Any] = {k: getattr(self, k) for k in keys}
        out["start"] = None if self.start is None else self.start.isoformat()
        return out


def check_events(c: Checker, n_places: int) -> tuple[EventConfig, ...]:
    """The ``events`` array of tables (none when absent)."""
    raw = c.raw.get("events", [])
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise c.fail("events", "must be an array of tables ([[events]])")
    out: list[EventConfig] = []
    for i, table in enumerate(raw):
        event = _event(c, f"events[{i}]", table, n_places)
        if any(e.name == event.name for e in out):
            raise c.fail(f"events[{i}].name", f"{event.name!r} is taken by an earlier event")
        out.append(event)
    return tuple(out)


def _event(c: Checker, at: str, table: dict[str, Any], n_places: int) -> EventConfig:
    e = c.within({f"{at}.{k}": v for k, v in table.items()})
    fmt = cast(EventFormat, e.choice(f"{at}.format", "knockout", FORMATS))
    known = COMMON_KEYS + FORMAT_KEYS[fmt]
    for key in table:
        if key not in known:
            raise c.fail(
                f"{at}.{key}", f"unknown key for a {fmt} event (known: {', '.join(known)})"
            )
    name = e.str_(f"{at}.name")
    if not _NAME.fullmatch(name):
        raise c.fail(f"{at}.name", f"letters, digits, - and _ (at most 40); got {name!r}")
    if fmt == "heats" and n_places < 3:
        raise c.fail(
            f"{at}.format", "heats are for tables of 3 or more places; use knockout or swiss"
        )
    if fmt != "heats" and n_places != 2:
        raise c.fail(
            f"{at}.format", f"{fmt} is for two-sided games; with {n_places} places use heats"
        )
    extra: dict[str, Any] = {}
    if fmt == "knockout":
        extra["best_of"] = e.int_(f"{at}.best_of", 1, 1, maximum=MAX_DEALS)
        extra["tiebreak"] = e.choice(f"{at}.tiebreak", "extra-deal", TIEBREAKS)
    elif fmt == "swiss":
        extra["rounds"] = e.int_(f"{at}.rounds", 3, 1, maximum=MAX_ROUNDS)
        extra["deals_per_round"] = e.int_(f"{at}.deals_per_round", 1, 1, maximum=MAX_DEALS)
    else:
        extra["advance"] = e.int_(f"{at}.advance", 1, 1, maximum=n_places - 1)
        extra["deals_per_heat"] = e.int_(f"{at}.deals_per_heat", 1, 1, maximum=MAX_DEALS)
    return EventConfig(
        name=name,
        format=fmt,
        start=_start(c, f"{at}.start", table.get("start")),
        entrants=e.int_(f"{at}.entrants", 8, 2, maximum=MAX_ENTRANTS),
        **extra,
    )


def _start(c: Checker, key: str, value: object) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            raise c.fail(key, f"must be a UTC time, 2026-01-31T18:00:00Z; got {value!r}") from None
    if not isinstance(value, dt.datetime) or value.utcoffset() != dt.timedelta(0):
        raise c.fail(key, f"must be a UTC time with its zone, 2026-01-31T18:00:00Z; got {value!r}")
    return value.astimezone(dt.UTC)


def event_named(events: Sequence[EventConfig], name: str) -> EventConfig | None:
    return next((e for e in events if e.name == name), None)
