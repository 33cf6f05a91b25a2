"""The competition's play: units (one duplicate deal at one table of versions, played in every
rotation of its places: one match per rotation) and their matches. A unit and all its matches are
inserted in one transaction; a match's result is committed with its ``done`` status only while it
is still ``pending``, and a unit is ``done`` in the transaction that stores its last match."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from cardarena.messages import FaultInfo

from arena.host.store.rows import (
    read_match,
    read_unit,
    read_unit_state,
    result_problem,
    where_clause,
)
from arena.host.store.schema import (
    PHASES,
    CompetitionStoreError,
    Conflict,
    NotFound,
    Phase,
    StoredMatch,
    Unit,
    UnitState,
)
from arena.host.store.versions import VersionTables
from arena.ratings import Entry
from arena.sqlite import Connection, now, serialized
from engine import Result

#: A unit to store (:meth:`MatchTables.create_next_unit`): its seed, its table (a version per
#: place) and its matches, ``(match_id, rotation, seats)``.
UnitPlan = tuple[int, Sequence[int], Sequence[tuple[str, int, tuple[int, ...]]]]

#: A person's name in the ladder's fit when challenges are rated (arena/host/challenges.py).
PERSON_REF = "person:"

#: The filters of the match list (:meth:`MatchTables.finished_matches_page`) by name: an SQL
#: condition on ``m`` (matches) and ``u`` (units) with one ``?``, the filter's value. A new
#: filter (a season, an event) is one line here and one field of the API's ``MatchFilters``.
MATCH_FILTERS: dict[str, str] = {
    "version": "m.unit_id IN (SELECT unit_id FROM unit_versions WHERE version_id=?)",
    "bot": (
        "m.unit_id IN (SELECT uv.unit_id FROM unit_versions uv "
        "JOIN versions v ON v.id = uv.version_id JOIN bots b ON b.id = v.bot_id WHERE b.name=?)"
    ),
    "phase": "u.phase=?",
    # A value of 1: only matches with a fault; 0: only those without.
    "faults": "(json_array_length(m.faults) > 0) = ?",
    "season": "u.season=?",
    "event": "u.event_id = (SELECT id FROM events WHERE name=?)",
}


@dataclass(frozen=True, slots=True)
class Counts:
    """What the host's ``/metrics`` reads (arena/host/metrics.py), counted by the database."""

    #: Finished matches, by phase.
    matches: dict[str, int]
    #: Units by ``(phase, state)``.
    units: dict[tuple[str, str], int]
    #: Versions waiting for or in their validation (``pending``, ``validating``).
    validating: int
    #: Faults of finished matches, by kind.
    faults: dict[str, int]


class MatchTables(VersionTables):
    """The units and matches tables of :class:`~arena.host.store.CompetitionStore`."""

    #: The seats of each place (``CompetitionConfig.places``), and their number.
    _places: tuple[tuple[int, ...], ...]
    _n_seats: int

    # --- units and matches --------------------------------------------------------------------

    @serialized
    def next_unit_id(self) -> int:
        """The id the next :meth:`create_unit` gets (ids are never reused), so a caller can
        derive its seed and match ids first. An event's round may take it meanwhile: the
        id is then refused (:class:`Conflict`) and the caller draws again."""
        with self._reading("the units table"):
            (last,) = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM units").fetchone()
            return int(last) + 1

    def create_next_unit(
        self,
        phase: Phase,
        plan: Callable[[int], UnitPlan | None],
    ) -> int | None:
        """Store a unit with the next id: ``plan(unit_id)`` gives its seed, table and matches
        (``None``: no unit, and ``None`` is returned). An event's round taking the id between the
        two is not an error: the next id is drawn and planned again."""
        while True:
            unit_id = self.next_unit_id()
            planned = plan(unit_id)
            if planned is None:
                return None
            seed, table, matches = planned
            try:
                return self.create_unit(phase, seed, table, matches, unit_id=unit_id)
            except Conflict:
                if self.next_unit_id() != unit_id:
                    continue
                raise

    @serialized
    def create_unit(
        self,
        phase: Phase,
        seed: int,
        table: Sequence[int],
        matches: Sequence[tuple[str, int, tuple[int, ...]]],
        *,
        unit_id: int | None = None,
    ) -> int:
        """Store a unit and its matches (``(match_id, rotation, seats)``: the version of each
        seat) in one transaction; its id (``unit_id`` when given: :meth:`next_unit_id`).

        Every version of the table must be validated; every seat's version one of the table's,
        the same for all seats of a place.
        """
        places = self._check_unit(phase, seed, table, matches)
        with self._transaction() as db:
            return self._insert_unit(db, phase, seed, places, matches, unit_id)

    def _check_unit(
        self,
        phase: Phase,
        seed: int,
        table: Sequence[int],
        matches: Sequence[tuple[str, int, tuple[int, ...]]],
    ) -> list[int]:
        """:meth:`create_unit`'s checks of its arguments; the table as a list."""
        if phase not in PHASES:
            raise CompetitionStoreError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise CompetitionStoreError(f"a unit's seed must be a 63-bit integer; got {seed!r}")
        places = list(table)
        if len(places) != len(self._places):
            raise CompetitionStoreError(
                f"a table is one version per place: {len(self._places)}; got {len(places)}"
            )
        if len(set(places)) < 2:
            raise CompetitionStoreError(f"a table needs at least 2 distinct versions; got {places}")
        if not matches:
            raise CompetitionStoreError("a unit needs at least one match")
        if len({m[0] for m in matches}) != len(matches) or len({m[1] for m in matches}) != len(
            matches
        ):
            raise CompetitionStoreError("a unit's match ids and rotations must be distinct")
        for match_id, rotation, seats in matches:
            self._check_seats(match_id, rotation, seats, places)
        return places

    def _insert_unit(
        self,
        db: Connection,
        phase: Phase,
        seed: int,
        places: list[int],
        matches: Sequence[tuple[str, int, tuple[int, ...]]],
        unit_id: int | None,
    ) -> int:
        """Insert a checked unit and its matches inside the caller's transaction (an event
        stores a whole round in one); its id."""
        at = now()
        for version_id in dict.fromkeys(places):
            row = db.execute(self._VERSION_SQL + " WHERE v.id=?", (version_id,)).fetchone()
            if row is None:
                raise NotFound(f"no version {version_id}")
            if row["status"] != "validated":
                raise Conflict(
                    f"version {row['bot']}@{row['number']} is {row['status']}; only "
                    "validated versions play"
                )
        taken = db.execute(
            f"SELECT match_id FROM matches WHERE match_id IN "
            f"({', '.join('?' * len(matches))}) LIMIT 1",
            [m[0] for m in matches],
        ).fetchone()
        if taken is not None:
            raise Conflict(f"match {taken[0]!r} already exists")
        if (
            unit_id is not None
            and db.execute("SELECT 1 FROM units WHERE id=?", (unit_id,)).fetchone()
        ):
            raise Conflict(f"unit {unit_id} already exists")
        cur = db.execute(
            "INSERT INTO units (id, phase, seed, table_versions, created) VALUES (?, ?, ?, ?, ?)",
            (unit_id, phase, seed, json.dumps(places), at),
        )
        new_id = cur.lastrowid
        assert new_id is not None
        db.executemany(
            "INSERT INTO unit_versions (unit_id, place, version_id) VALUES (?, ?, ?)",
            [(new_id, place, v) for place, v in enumerate(places)],
        )
        db.executemany(
            "INSERT INTO matches (unit_id, rotation, match_id, seats) VALUES (?, ?, ?, ?)",
            [(new_id, r, m, json.dumps(list(s))) for m, r, s in matches],
        )
        return new_id

    def _check_seats(
        self, match_id: str, rotation: int, seats: Sequence[int], table: Sequence[int]
    ) -> None:
        if not isinstance(match_id, str) or not match_id:
            raise CompetitionStoreError(f"a match id must be a non-empty string; got {match_id!r}")
        if isinstance(rotation, bool) or not isinstance(rotation, int) or rotation < 0:
            raise CompetitionStoreError(f"match {match_id}: rotation must be >= 0; got {rotation}")
        if len(seats) != self._n_seats:
            raise CompetitionStoreError(
                f"match {match_id}: {self._n_seats} seats; got {len(seats)}"
            )
        for group in self._places:
            if len({seats[s] for s in group}) != 1:
                raise CompetitionStoreError(
                    f"match {match_id}: the seats {list(group)} of a place need one version"
                )
        if not set(seats) <= set(table):
            raise CompetitionStoreError(
                f"match {match_id}: seats {list(seats)} hold versions not at the table {table}"
            )

    @serialized
    def unit(self, unit_id: int) -> Unit:
        with self._reading("the units table"):
            row = self._db.execute("SELECT * FROM units WHERE id=?", (unit_id,)).fetchone()
            if row is None:
                raise NotFound(f"no unit {unit_id}")
            return read_unit(row)

    @serialized
    def units(self, state: UnitState | None = None, phase: Phase | None = None) -> list[Unit]:
        """Units (with ``state``, of ``phase``), in creation order."""
        where, args = where_clause(("state", state), ("phase", phase))
        sql = f"SELECT * FROM units{where} ORDER BY id"
        return self._rows("the units table", sql, args, lambda r: f"unit {r['id']}", read_unit)

    @serialized
    def fail_unit(self, unit_id: int, reason: str) -> bool:
        """Give up a pending unit (a version of it retired, a live bot that did not come back):
        its unplayed matches are no longer pending but ``void`` and none of its results is
        rated. ``False`` when it was not pending."""
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM units WHERE id=?", (unit_id,)).fetchone() is None:
                raise NotFound(f"no unit {unit_id}")
            cur = db.execute(
                "UPDATE units SET state='failed', reason=?, finished=? "
                "WHERE id=? AND state='pending'",
                (reason, now(), unit_id),
            )
            return cur.rowcount == 1

    # A match left unplayed by a failed unit reads as ``void``: it will never be played, and
    # says so rather than stay pending (the row itself is never changed once its unit is over).
    _MATCH_SQL = (
        "SELECT m.match_id, m.unit_id, u.phase, u.seed, m.rotation, m.seats, "
        "CASE WHEN m.state = 'pending' AND u.state = 'failed' THEN 'void' ELSE m.state END "
        "AS state, m.result, m.faults, m.record_path, m.finished "
        "FROM matches m JOIN units u ON u.id = m.unit_id"
    )

    def _matches(self, where: str, args: Sequence[object]) -> list[StoredMatch]:
        sql = f"{self._MATCH_SQL} {where} ORDER BY m.unit_id, m.rotation"
        return self._rows(
            "the matches table", sql, args, lambda r: f"match {r['match_id']!r}", read_match
        )

    @serialized
    def match(self, match_id: str) -> StoredMatch:
        """One match by its id; :class:`NotFound` if there is none."""
        found = self._matches("WHERE m.match_id=?", (match_id,))
        if not found:
            raise NotFound(f"no match {match_id!r}")
        return found[0]

    @serialized
    def unit_matches(self, unit_id: int) -> list[StoredMatch]:
        """A unit's matches, by rotation."""
        return self._matches("WHERE m.unit_id=?", (unit_id,))

    @serialized
    def deal_matches(self, seed: int) -> list[StoredMatch]:
        """Every seating of one deal: the matches of the units dealt from ``seed`` (a unit's
        rotations, and a rerun's), whatever their state."""
        return self._matches("WHERE u.seed=?", (seed,))

    @serialized
    def pending_matches(self) -> list[StoredMatch]:
        """The matches still to play, of units still pending, in creation order: after a restart
        exactly those whose results were not committed."""
        return self._matches("WHERE m.state='pending' AND u.state='pending'", ())

    @serialized
    def commit_match(
        self,
        match_id: str,
        result: Result,
        faults: Sequence[FaultInfo],
        record_path: str | None,
    ) -> bool:
        """Store a match's result together with its ``done`` status, only if it is still pending
        (in a pending unit); ``False``, changing nothing, otherwise: a match replayed after a
        crash is never counted twice. The unit is done in the same transaction as its last
        match."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT m.unit_id, m.seats, m.state, u.state AS unit_state FROM matches m "
                "JOIN units u ON u.id = m.unit_id WHERE m.match_id=?",
                (match_id,),
            ).fetchone()
            if row is None:
                raise NotFound(f"no match {match_id!r}")
            if row["state"] != "pending" or row["unit_state"] != "pending":
                return False
            stored, stored_faults = result.to_dict(), [f.to_dict() for f in faults]
            problem = result_problem(len(json.loads(row["seats"])), stored, stored_faults)
            if problem:
                raise CompetitionStoreError(f"match {match_id!r}: {problem}")
            try:
                result_json = json.dumps(stored, sort_keys=True, allow_nan=False)
                faults_json = json.dumps(stored_faults, sort_keys=True, allow_nan=False)
            except (TypeError, ValueError) as err:
                raise CompetitionStoreError(f"match {match_id!r}: not JSON ({err})") from None
            at = now()
            db.execute(
                "UPDATE matches SET state='done', result=?, faults=?, record_path=?, finished=? "
                "WHERE match_id=? AND state='pending'",
                (result_json, faults_json, record_path, at, match_id),
            )
            unit_id = int(row["unit_id"])
            left = db.execute(
                "SELECT 1 FROM matches WHERE unit_id=? AND state='pending' LIMIT 1", (unit_id,)
            ).fetchone()
            if left is None:
                db.execute("UPDATE units SET state='done', finished=? WHERE id=?", (at, unit_id))
            return True

    @serialized
    def finished_matches(
        self, version_id: int | None = None, phase: Phase | None = None
    ) -> list[StoredMatch]:
        """Every done match (those ``version_id`` played in, of ``phase``), in creation order."""
        clauses: list[str] = ["m.state='done'"]
        args: list[object] = []
        if version_id is not None:
            clauses.append("m.unit_id IN (SELECT unit_id FROM unit_versions WHERE version_id=?)")
            args.append(version_id)
        if phase is not None:
            clauses.append("u.phase=?")
            args.append(phase)
        return self._matches("WHERE " + " AND ".join(clauses), args)

    @serialized
    def finished_matches_page(
        self,
        version_id: int | None = None,
        phase: Phase | None = None,
        limit: int = 100,
        offset: int = 0,
        *,
        filters: Mapping[str, object] | None = None,
    ) -> list[tuple[StoredMatch, UnitState]]:
        """The done matches :meth:`finished_matches` lists, newest first: ``limit`` of them after
        the ``offset`` newest, each with its unit's state (its record is public once that is no
        longer pending). ``filters`` narrows them further by :data:`MATCH_FILTERS`' names. One
        query, however long the list."""
        where, args = self._match_filters(version_id, phase, filters)
        sql = (
            f"SELECT u.state AS unit_state, {self._MATCH_SQL.removeprefix('SELECT ')} "
            f"WHERE {where} "
            "ORDER BY m.unit_id DESC, m.rotation DESC LIMIT ? OFFSET ?"
        )
        return self._rows(
            "the matches table",
            sql,
            [*args, limit, offset],
            lambda r: f"match {r['match_id']!r}",
            lambda r: (read_match(r), read_unit_state(r["unit_state"])),
        )

    @serialized
    def finished_matches_count(self, filters: Mapping[str, object] | None = None) -> int:
        """How many done matches :meth:`finished_matches_page` pages through with ``filters``."""
        where, args = self._match_filters(None, None, filters)
        with self._reading("the matches table"):
            sql = f"SELECT COUNT(*) FROM matches m JOIN units u ON u.id = m.unit_id WHERE {where}"
            (count,) = self._db.execute(sql, args).fetchone()
            return int(count)

    @serialized
    def finished_matches_paged(
        self, filters: Mapping[str, object], limit: int, offset: int
    ) -> tuple[list[tuple[StoredMatch, UnitState]], int]:
        """:meth:`finished_matches_page` and :meth:`finished_matches_count` of one moment."""
        with self._snapshot():
            page = self.finished_matches_page(limit=limit, offset=offset, filters=filters)
            return page, self.finished_matches_count(filters)

    @staticmethod
    def _match_filters(
        version_id: int | None, phase: Phase | None, filters: Mapping[str, object] | None
    ) -> tuple[str, list[object]]:
        given = {"version": version_id, "phase": phase, **(filters or {})}
        unknown = sorted(set(given) - set(MATCH_FILTERS))
        if unknown:
            raise CompetitionStoreError(f"no match filter {unknown[0]!r}")
        chosen = [(MATCH_FILTERS[k], v) for k, v in given.items() if v is not None]
        where = " AND ".join(["m.state='done'", *(clause for clause, _ in chosen)])
        return where, [v for _, v in chosen]

    @serialized
    def rating_entries(self, phase: Phase) -> list[list[Entry]]:
        """What :func:`arena.ratings.fit_ratings` takes: for every match of the ``phase``'s done
        units, one :class:`Entry` per place (its versions by :attr:`Version.ref`, its rank), as
        a tournament's standings feed it. Only whole units count: the duplicate deal's luck
        cancels over all its rotations, not over some."""
        return self.rated_matches(phase)[0]

    @serialized
    def rated_matches(
        self, phase: Phase, season: int | None = None
    ) -> tuple[list[list[Entry]], list[int]]:
        """:meth:`rating_entries` (of ``season``'s units only, if given) and, read with them,
        each match's unit id: its cluster for ``fit_ratings(entries, clusters=units)`` (one deal
        in all its rotations)."""
        where = "WHERE m.state='done' AND u.state='done' AND u.phase=?"
        args: tuple[object, ...] = (phase,)
        if season is not None:
            where, args = where + " AND u.season=?", (phase, season)
        with self._snapshot():  # every version a match names is among those read
            refs = {v.id: v.ref for v in self.versions()}
            done = self._matches(where, args)
        entries: list[list[Entry]] = []
        units: list[int] = []
        for match in done:
            assert match.result is not None
            ranks = match.result["ranks"]
            with self._reading(f"match {match.match_id!r}"):
                entries.append(
                    [
                        Entry(
                            tuple(dict.fromkeys(refs[match.seats[s]] for s in group)),
                            int(ranks[group[0]]),
                        )
                        for group in self._places
                    ]
                )
            units.append(match.unit_id)
        if phase == "ladder":
            for entry, cluster in self._rated_challenges(season):
                entries.append(entry)
                units.append(cluster)
        return entries, units

    def _rated_challenges(self, season: int | None) -> list[tuple[list[Entry], int]]:
        """The finished challenges stored as rated (``[challenges] rated``), each a match of
        the ladder's fit with the person as a player of their own (``person:AUTHOR``) and a
        cluster of its own (a negative id: no unit's)."""
        where = "c.state='done' AND c.rated=1" + (" AND c.season=?" if season else "")
        with self._reading("the challenges table"):
            rows = self._db.execute(
                "SELECT c.id, c.seats, c.result, a.name FROM challenges c "
                f"JOIN authors a ON a.id = c.author_id WHERE {where} ORDER BY c.id",
                (season,) if season else (),
            ).fetchall()
            refs = {v.id: v.ref for v in self.versions()}
            found: list[tuple[list[Entry], int]] = []
            for cid, seats_json, result_json, author in rows:
                seats = [
                    PERSON_REF + str(author) if v is None else refs[v]
                    for v in json.loads(seats_json)
                ]
                ranks = json.loads(result_json)["ranks"]
                entry = [
                    Entry(tuple(dict.fromkeys(seats[s] for s in group)), int(ranks[group[0]]))
                    for group in self._places
                ]
                found.append((entry, -int(cid)))
        return found

    @serialized
    def counts(self) -> Counts:
        """The competition's counts, one aggregate query each (under one snapshot)."""
        with self._snapshot(), self._reading("the counts"):
            db = self._db
            matches = db.execute(
                "SELECT u.phase, COUNT(*) FROM matches m JOIN units u ON u.id = m.unit_id "
                "WHERE m.state = 'done' GROUP BY u.phase"
            ).fetchall()
            units = db.execute("SELECT phase, state, COUNT(*) FROM units GROUP BY 1, 2").fetchall()
            (validating,) = db.execute(
                "SELECT COUNT(*) FROM versions WHERE status IN ('pending', 'validating')"
            ).fetchone()
            faults = db.execute(
                "SELECT json_extract(f.value, '$.kind'), COUNT(*) "
                "FROM matches m, json_each(m.faults) f WHERE m.state = 'done' GROUP BY 1"
            ).fetchall()
        return Counts(
            matches={str(p): int(n) for p, n in matches},
            units={(str(p), str(s)): int(n) for p, s, n in units},
            validating=int(validating),
            faults={str(k): int(n) for k, n in faults},
        )
