"""The ``challenges`` table: authors' matches against the ladder's versions, a person in one seat
(arena/host/challenges.py). A challenge is stored ``playing`` when it starts and ends ``done``
(its result, faults and record, in one update) or ``failed``; a finished one is never changed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from cardarena.messages import FaultInfo

from arena.host.store.ratings import RatingTables
from arena.host.store.rows import result_problem
from arena.host.store.schema import CompetitionStoreError, NotFound
from arena.sqlite import Row, now, serialized
from engine import Result

ChallengeState = Literal["playing", "done", "failed"]


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge, as stored."""

    match_id: str
    author_id: int
    #: The seat the author plays.
    person_seat: int
    #: The version of each seat; ``None`` at the person's.
    seats: tuple[int | None, ...]
    seed: int
    #: Whether it counts in the ladder's ratings (``[challenges] rated`` when it started).
    rated: bool
    state: ChallengeState
    #: Why it failed.
    reason: str
    result: dict[str, Any] | None
    faults: list[dict[str, Any]]
    record_path: str | None
    created: str
    finished: str | None
    #: The season current when it started.
    season: int = 1


def _read(row: Row) -> Challenge:
    seats = json.loads(row["seats"])
    if not isinstance(seats, list) or not all(s is None or isinstance(s, int) for s in seats):
        raise ValueError("seats must be a list of version ids and one null")
    state = str(row["state"])
    if state not in ("playing", "done", "failed"):
        raise ValueError(f"state {state!r}")
    return Challenge(
        match_id=str(row["match_id"]),
        author_id=int(row["author_id"]),
        person_seat=int(row["person_seat"]),
        seats=tuple(seats),
        seed=int(row["seed"]),
        rated=bool(row["rated"]),
        state=cast(ChallengeState, state),
        reason=str(row["reason"]),
        result=None if row["result"] is None else json.loads(row["result"]),
        faults=[] if row["faults"] is None else json.loads(row["faults"]),
        record_path=None if row["record_path"] is None else str(row["record_path"]),
        created=str(row["created"]),
        finished=None if row["finished"] is None else str(row["finished"]),
        season=int(row["season"]),
    )


class ChallengeTables(RatingTables):
    """The ``challenges`` table of :class:`~arena.host.store.CompetitionStore`."""

    _CHALLENGE_SQL = "SELECT * FROM challenges"

    def _challenges(self, where: str, args: Sequence[object]) -> list[Challenge]:
        return self._rows(
            "the challenges table",
            f"{self._CHALLENGE_SQL} {where}",
            args,
            lambda r: f"challenge {r['match_id']!r}",
            _read,
        )

    @serialized
    def add_challenge(
        self,
        match_id: str,
        author_id: int,
        seats: Sequence[int | None],
        seed: int,
        rated: bool,
    ) -> None:
        """Store a challenge as ``playing``: ``seats`` the version of each seat, ``None`` at the
        author's own (exactly one)."""
        people = [s for s, v in enumerate(seats) if v is None]
        if len(people) != 1:
            raise CompetitionStoreError(f"a challenge has one person's seat; got {len(people)}")
        with self._transaction() as db:
            db.execute(
                "INSERT INTO challenges (match_id, author_id, person_seat, seats, seed, rated, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (match_id, author_id, people[0], json.dumps(list(seats)), seed, int(rated), now()),
            )

    @serialized
    def challenge(self, match_id: str) -> Challenge:
        """One challenge by its match id; :class:`NotFound` if there is none."""
        found = self._challenges("WHERE match_id=?", (match_id,))
        if not found:
            raise NotFound(f"no challenge {match_id!r}")
        return found[0]

    @serialized
    def challenges(
        self, author_id: int | None = None, limit: int = 100, offset: int = 0
    ) -> list[Challenge]:
        """Challenges newest first (``author_id``'s only, if given)."""
        where, args = ("WHERE author_id=?", [author_id]) if author_id is not None else ("", [])
        return self._challenges(
            f"{where} ORDER BY id DESC LIMIT ? OFFSET ?", [*args, limit, offset]
        )

    @serialized
    def author_challenges(self, author_id: int, since: str) -> tuple[list[str], int]:
        """When ``author_id``'s challenges since ``since`` (UTC) started, and how many of theirs
        are playing now: what ``[challenges]``' limits count."""
        with self._reading("the challenges table"):
            rows = self._db.execute(
                "SELECT created FROM challenges WHERE author_id=? AND created>=? ORDER BY created",
                (author_id, since),
            ).fetchall()
            (playing,) = self._db.execute(
                "SELECT COUNT(*) FROM challenges WHERE author_id=? AND state='playing'",
                (author_id,),
            ).fetchone()
        return [str(r[0]) for r in rows], int(playing)

    @serialized
    def finish_challenge(
        self,
        match_id: str,
        result: Result,
        faults: Sequence[FaultInfo],
        record_path: str,
    ) -> bool:
        """Store a challenge's result with its ``done`` state, if it is still playing."""
        stored, stored_faults = result.to_dict(), [f.to_dict() for f in faults]
        with self._transaction() as db:
            row = db.execute(
                "SELECT seats FROM challenges WHERE match_id=?", (match_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no challenge {match_id!r}")
            problem = result_problem(len(json.loads(row["seats"])), stored, stored_faults)
            if problem:
                raise CompetitionStoreError(f"challenge {match_id!r}: {problem}")
            changed = db.execute(
                "UPDATE challenges SET state='done', result=?, faults=?, record_path=?, "
                "finished=? WHERE match_id=? AND state='playing'",
                (
                    json.dumps(stored, sort_keys=True),
                    json.dumps(stored_faults, sort_keys=True),
                    record_path,
                    now(),
                    match_id,
                ),
            ).rowcount
        return bool(changed)

    @serialized
    def fail_challenges(self, reason: str, match_id: str | None = None) -> int:
        """End ``match_id`` (or every challenge still playing: after a restart, none is) as
        failed, for ``reason``; how many were."""
        where, args = ("AND match_id=?", [match_id]) if match_id is not None else ("", [])
        with self._transaction() as db:
            return int(
                db.execute(
                    f"UPDATE challenges SET state='failed', reason=?, finished=? "
                    f"WHERE state='playing' {where}",
                    [reason, now(), *args],
                ).rowcount
            )
