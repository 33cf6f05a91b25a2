"""Events' tables (schema 6): an event as started, each round's pairing, and each unit's place in
it (round, tie, deal). An event's start with its first round, and every later round (or a
round's extra deals), is one transaction; a deal of a tie is stored once (``UNIQUE``), so a host
killed mid-event derives the same next round again and stores nothing twice."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.host.store.ratings import RatingTables
from arena.host.store.schema import Conflict, NotFound, StoredMatch, UnitState
from arena.sqlite import Connection, Row, now, serialized


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as stored."""

    id: int
    name: str
    format: str
    #: ``running`` or ``finished``.
    state: str
    #: Its ``[[events]]`` entry when it started.
    config: dict[str, Any]
    seed: int
    #: Version ids by seed, the best first.
    entrants: tuple[int, ...]
    created: str
    finished: str | None
    #: The winning version; ``None`` while running (or when it ended without one).
    winner: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class EventUnit:
    """One unit of an event: a deal of a tie (a pairing, a heat) of a round."""

    unit_id: int
    round: int
    tie: int
    deal: int
    state: UnitState
    #: The version of each place.
    table: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class NewEventUnit:
    """A unit to store: its tie and deal, its deal's seed, its table and its rotations."""

    tie: int
    deal: int
    seed: int
    table: tuple[int, ...]
    #: ``(rotation, the version of each seat)``: ``unit_matches``.
    rotations: Sequence[tuple[int, tuple[int, ...]]]


def event_match_id(unit_id: int, rotation: int) -> str:
    """An event unit's match id: ``e12-r1``."""
    return f"e{unit_id}-r{rotation}"


def _read_event(row: Row) -> StoredEvent:
    config, entrants = json.loads(row["config"]), json.loads(row["entrants"])
    if not isinstance(config, dict) or not all(isinstance(v, int) for v in entrants):
        raise ValueError("config or entrants damaged")
    return StoredEvent(
        id=int(row["id"]),
        name=str(row["name"]),
        format=str(row["format"]),
        state=str(row["state"]),
        config=config,
        seed=int(row["seed"]),
        entrants=tuple(entrants),
        created=str(row["created"]),
        finished=None if row["finished"] is None else str(row["finished"]),
        winner=None if row["winner"] is None else int(row["winner"]),
        reason=str(row["reason"]),
    )


class EventTables(RatingTables):
    """The events tables of :class:`~arena.host.store.CompetitionStore`."""

    @serialized
    def events(self) -> list[StoredEvent]:
        """Every started event, in start order."""
        sql = "SELECT * FROM events ORDER BY id"
        return self._rows(
            "the events table", sql, (), lambda r: f"event {r['name']!r}", _read_event
        )

    @serialized
    def event(self, name: str) -> StoredEvent:
        """A started event by name; :class:`NotFound` if it has not started."""
        sql = "SELECT * FROM events WHERE name=?"
        found = self._rows(
            "the events table", sql, (name,), lambda r: f"event {name!r}", _read_event
        )
        if not found:
            raise NotFound(f"no event {name!r} has started")
        return found[0]

    @serialized
    def start_event(
        self,
        name: str,
        format_: str,
        config: dict[str, Any],
        seed: int,
        entrants: Sequence[int],
        ties: Sequence[Sequence[int | None]],
        units: Sequence[NewEventUnit],
    ) -> StoredEvent:
        """Store a new event with its first round (``ties`` and their units), in one
        transaction; :class:`Conflict` if an event of that name has started."""
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM events WHERE name=?", (name,)).fetchone():
                raise Conflict(f"event {name!r} has already started")
            cur = db.execute(
                "INSERT INTO events (name, format, config, seed, entrants, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (name, format_, json.dumps(config), seed, json.dumps(list(entrants)), now()),
            )
            assert cur.lastrowid is not None
            self._insert_round(db, cur.lastrowid, 0, ties, units)
        return self.event(name)

    @serialized
    def add_event_round(
        self,
        event_id: int,
        round_: int,
        ties: Sequence[Sequence[int | None]] | None,
        units: Sequence[NewEventUnit],
    ) -> None:
        """Store round ``round_`` (its ``ties`` and units) in one transaction; with ``ties``
        ``None``, more deals of a stored round (a knockout's extra deals). :class:`Conflict`
        if the round, or a deal of it, is stored already."""
        with self._transaction() as db:
            self._insert_round(db, event_id, round_, ties, units)

    def _insert_round(
        self,
        db: Connection,
        event_id: int,
        round_: int,
        ties: Sequence[Sequence[int | None]] | None,
        units: Sequence[NewEventUnit],
    ) -> None:
        state = db.execute("SELECT state FROM events WHERE id=?", (event_id,)).fetchone()
        if state is None or state[0] != "running":
            raise Conflict(f"event {event_id} is not running")
        if ties is not None:
            if db.execute(
                "SELECT 1 FROM event_rounds WHERE event_id=? AND round=?", (event_id, round_)
            ).fetchone():
                raise Conflict(f"round {round_} of event {event_id} is stored already")
            db.execute(
                "INSERT INTO event_rounds (event_id, round, ties, created) VALUES (?, ?, ?, ?)",
                (event_id, round_, json.dumps([list(t) for t in ties]), now()),
            )
        for u in units:
            taken = db.execute(
                "SELECT 1 FROM event_units WHERE event_id=? AND round=? AND tie=? AND deal=?",
                (event_id, round_, u.tie, u.deal),
            ).fetchone()
            if taken:
                raise Conflict(f"deal {u.deal} of tie {u.tie}, round {round_} is stored already")
            (last,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM units").fetchone()
            unit_id = int(last) + 1
            matches = [(event_match_id(unit_id, r), r, seats) for r, seats in u.rotations]
            places = self._check_unit("event", u.seed, u.table, matches)
            self._insert_unit(db, "event", u.seed, places, matches, unit_id)
            db.execute("UPDATE units SET event_id=? WHERE id=?", (event_id, unit_id))
            db.execute(
                "INSERT INTO event_units (unit_id, event_id, round, tie, deal) "
                "VALUES (?, ?, ?, ?, ?)",
                (unit_id, event_id, round_, u.tie, u.deal),
            )

    @serialized
    def event_rounds(self, event_id: int) -> list[list[list[int | None]]]:
        """Each stored round's ties (seeds; ``None``: a bye's empty side), in round order."""
        with self._reading("the event_rounds table"):
            rows = self._db.execute(
                "SELECT ties FROM event_rounds WHERE event_id=? ORDER BY round", (event_id,)
            ).fetchall()
            return [json.loads(r[0]) for r in rows]

    @serialized
    def event_units(self, event_id: int) -> list[EventUnit]:
        """The event's units, by round, tie and deal."""

        def read(r: Row) -> EventUnit:
            table = json.loads(r["table_versions"])
            return EventUnit(
                int(r["unit_id"]), int(r["round"]), int(r["tie"]), int(r["deal"]),
                r["state"], tuple(int(v) for v in table),
            )  # fmt: skip

        sql = (
            "SELECT e.unit_id, e.round, e.tie, e.deal, u.state, u.table_versions "
            "FROM event_units e JOIN units u ON u.id = e.unit_id WHERE e.event_id=? "
            "ORDER BY e.round, e.tie, e.deal"
        )
        return self._rows("the event_units table", sql, (event_id,), lambda r: "a unit", read)

    @serialized
    def event_matches(self, event_id: int) -> list[StoredMatch]:
        """The event's matches, by unit and rotation."""
        return self._matches("WHERE u.event_id=?", (event_id,))

    @serialized
    def finish_event(self, event_id: int, winner: int | None, reason: str) -> bool:
        """The event is over (with its ``winner``); ``False`` if it already was."""
        with self._transaction() as db:
            cur = db.execute(
                "UPDATE events SET state='finished', finished=?, winner=?, reason=? "
                "WHERE id=? AND state='running'",
                (now(), winner, reason, event_id),
            )
            return cur.rowcount == 1

    @serialized
    def pending_event_units(self) -> int:
        """Units of events still to play (the ladder gives way to them)."""
        with self._reading("the units table"):
            (n,) = self._db.execute(
                "SELECT COUNT(*) FROM units WHERE phase='event' AND state='pending'"
            ).fetchone()
            return int(n)
