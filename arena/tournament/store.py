"""The tournament's results in one SQLite file (``results.sqlite``, WAL journal).

The file holds the config, the bots and every scheduled match. A match row is ``pending`` until
its result is committed, in the same transaction as its ``done`` status, so a process killed at
any moment (kill -9 included) leaves each match either wholly finished or wholly unplayed. A
resume recomputes the schedule from the config, checks it against the stored one and plays the
matches still pending; nothing is counted twice.

A file that is damaged (not a database, a garbage page, a table dropped, a stored value of the
wrong type), locked by another process for too long, or gone from beside the records it produced
is reported in one line (:class:`StoreError`) and left as it was.

Threads: the runner makes its database calls in worker threads (``trio.to_thread.run_sync``) so
that a slow or locked file never blocks the trio loop; the store uses its one connection from one
thread at a time (:class:`arena.sqlite.SQLiteStore`). During a run only the runner's single writer
task calls the store (one call at a time), so its lock is never contended there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from cardarena.messages import FaultInfo

import arena.sqlite
from arena.errors import ArenaError
from arena.layout import LOGS_DIR, RECORDS_DIR, make_output_dir
from arena.sqlite import (
    SQLiteStore,
    earlier_output,
    file_size,
    locked_line,
    now,
    peek,
    serialized,
    take_lock,
)
from arena.tournament.schedule import MatchPlan
from engine import Result

#: The database's file name inside the output directory.
DB_NAME = "results.sqlite"

_SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE bots (
    name     TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    command  TEXT NOT NULL
);
CREATE TABLE matches (
    match_id    TEXT PRIMARY KEY,
    position    INTEGER NOT NULL UNIQUE,
    table_no    INTEGER NOT NULL,
    deal        INTEGER NOT NULL,
    rotation    INTEGER NOT NULL,
    seed        INTEGER NOT NULL,
    seats       TEXT NOT NULL,     -- JSON list: the bot of each seat
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    attempts    INTEGER NOT NULL DEFAULT 0,  -- times the match was started
    result      TEXT,              -- JSON: Result.to_dict()
    faults      TEXT,              -- JSON list of {seat, kind, detail}
    record_path TEXT,              -- relative to the output directory
    seconds     REAL,              -- wall-clock time of the finished attempt
    finished_at TEXT
);
"""


# Schema 1. Released migrations are never edited: a change is a new entry in MIGRATIONS.
#: The schema, as the migrations that build it (:class:`arena.sqlite.SQLiteStore`); a new file
#: gets it in the transaction that stores the tournament (:meth:`Store.initialize`).
MIGRATIONS: Final[tuple[str, ...]] = (_SCHEMA,)
#: Version of the database layout: how many migrations this code knows.
SCHEMA_VERSION: Final = len(MIGRATIONS)

#: Environment variable: the runner's patience with another process's lock (seconds).
LOCK_WAIT_ENV: Final = arena.sqlite.LOCK_WAIT_ENV

#: The lock file :meth:`Store.lock` holds next to the database of a running tournament.
LOCK_NAME = DB_NAME + ".lock"


def lock_wait_seconds() -> float:
    """The runner's patience with another process's lock on the results file
    (:data:`arena.sqlite.LOCK_WAIT_ENV`, ``BEGIN EXCLUSIVE`` in an ``sqlite3`` shell, say); a
    malformed value is one line."""
    return arena.sqlite.lock_wait_seconds(StoreError)


def locked_error(path: Path, waited: float) -> StoreError:
    """The one line a tournament stops with when another process keeps the file locked."""
    return StoreError(
        f"{locked_line(path, waited)}; the matches not yet stored stay pending: end that "
        "process, then run the same command again to resume"
    )


class StoreError(ArenaError):
    """The results file cannot be used (another tournament, another schema, unreadable)."""


class StoreLocked(StoreError):
    """A write waited :data:`arena.sqlite.BUSY_TIMEOUT_S` for a lock another process holds on
    the file (nothing was written; retrying may succeed)."""


@dataclass(frozen=True, slots=True)
class StoredMatch(MatchPlan):
    """A match row as read back: its plan, and how it went."""

    #: ``pending`` or ``done``.
    status: str
    #: Times the match was started (a resume restarts unfinished ones).
    attempts: int
    #: ``Result.to_dict()`` once done.
    result: dict[str, Any] | None
    #: Faults charged during the match.
    faults: list[dict[str, Any]]
    #: Path of the match record relative to the output directory.
    record_path: str | None


class Store(SQLiteStore):
    """The results database of one tournament."""

    ERROR = StoreError
    LOCKED = StoreLocked
    FILE = "tournament results file"
    SCHEMA = "results"

    def __init__(self, path: Path, create: bool = True) -> None:
        """Open (``create``: or create) the results file; without ``create`` it is only read:
        ``arena ratings`` on a file that is no results file must leave it as it was."""
        if not create and not path.exists():
            raise StoreError(f"{path}: no results file (run `arena tournament` first)")
        if create:
            make_output_dir(path.parent, StoreError)
        super().__init__(path)
        self._open(MIGRATIONS, read_only=not create, create_schema=False)

    def lock(self) -> None:
        """Hold an exclusive lock on the tournament until :meth:`close` (or the process's end,
        kill -9 included): two runners on one directory would play the same matches twice."""
        self._lock_fd = _lock_tournament(self.path)

    @serialized
    def is_new(self) -> bool:
        """Whether the file holds no tournament yet (no tables at all)."""
        with self._reading("the database"):
            return not self._tables()

    # --- setting up and resuming ---------------------------------------------------------------

    @serialized
    def stored_config(self) -> dict[str, Any] | None:
        """The config identity stored with the tournament, or ``None`` for a new file; its
        types checked (what the reports and a resume read from it)."""
        with self._reading("the stored config"):
            if not self._tables():  # a new file
                return None
            row = self._db.execute("SELECT value FROM meta WHERE key='config'").fetchone()
            if row is None:
                return None
            config = json.loads(row[0])
            _check_identity(config)
            assert isinstance(config, dict)
            return config

    @serialized
    def initialize(
        self,
        identity: Mapping[str, Any],
        bots: Sequence[tuple[str, str]],
        plans: Sequence[MatchPlan],
        extra_meta: Mapping[str, str] | None = None,
    ) -> None:
        """Create the tables and store config, bots and schedule, in one transaction; or, for an
        existing tournament, check that the config and schedule are the same."""
        stored = self.stored_config()
        if stored is not None:
            self._check_same(stored, dict(identity), plans)
            self._check_rows(bots)
            return
        with self._transaction() as db:
            self._apply(db, MIGRATIONS, 0, len(MIGRATIONS))
            meta = {
                "config": json.dumps(identity, sort_keys=True),
                "created_at": now(),
                **(extra_meta or {}),
            }
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
            db.executemany(
                "INSERT INTO bots (name, position, command) VALUES (?, ?, ?)",
                [(name, i, command) for i, (name, command) in enumerate(bots)],
            )
            db.executemany(
                "INSERT INTO matches (match_id, position, table_no, deal, rotation, seed, seats) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        p.match_id,
                        p.index,
                        p.table,
                        p.deal,
                        p.rotation,
                        p.seed,
                        json.dumps(p.seats),
                    )
                    for p in plans
                ],
            )

    def _check_same(
        self, stored: dict[str, Any], identity: dict[str, Any], plans: Sequence[MatchPlan]
    ) -> None:
        self._refuse_other_config(
            stored,
            identity,
            f"{self.path} holds a tournament",
            "use another output directory, or delete it to start over",
        )
        with self._reading("the matches table"):
            rows = self._db.execute("SELECT match_id, seed, seats FROM matches ORDER BY position")
            stored_plans = [(m, s, tuple(json.loads(seats))) for m, s, seats in rows]
        if stored_plans != [(p.match_id, p.seed, p.seats) for p in plans]:
            raise StoreError(
                f"{self.path}: the stored schedule differs from this config's (was it made by "
                "another version of the arena?); use another output directory"
            )

    def _check_rows(self, bots: Sequence[tuple[str, str]]) -> None:
        """Every stored row read now, before a resume plays anything: a damaged result, or a
        bot row the config does not name (renamed by hand, it would stand as a phantom bot),
        is one line at the start, not after the pending matches were played."""
        self.matches()
        stored = self.bots()
        if stored == list(bots):
            return
        names = {name for name, _ in bots}
        phantom = [name for name, _ in stored if name not in names]
        why = f"bot {phantom[0]!r} is not in the config" if phantom else "not the config's bots"
        raise StoreError(
            f"{self.path}: the bots table is damaged ({why}); was the file changed outside the "
            "arena?"
        )

    # --- playing ------------------------------------------------------------------------------

    @serialized
    def pending_ids(self) -> set[str]:
        """Ids of the matches not yet finished."""
        with self._reading("the matches table"):
            rows = self._db.execute("SELECT match_id FROM matches WHERE status='pending'")
            return {r[0] for r in rows}

    @serialized
    def mark_started(self, match_id: str) -> None:
        """Count an attempt (the match stays pending until its result is committed)."""
        with self._transaction() as db:
            db.execute("UPDATE matches SET attempts = attempts + 1 WHERE match_id=?", (match_id,))

    @serialized
    def finish(
        self,
        match_id: str,
        result: Result,
        faults: Sequence[FaultInfo],
        record_path: str | None,
        seconds: float,
    ) -> bool:
        """Commit a match's result together with its ``done`` status; ``False`` when it was
        already done (the result is then not counted again)."""
        with self._transaction() as db:
            cur = db.execute(
                "UPDATE matches SET status='done', result=?, faults=?, record_path=?, "
                "seconds=?, finished_at=? WHERE match_id=? AND status='pending'",
                (
                    json.dumps(result.to_dict(), sort_keys=True),
                    json.dumps([f.to_dict() for f in faults], sort_keys=True),
                    record_path,
                    round(seconds, 3),
                    now(),
                    match_id,
                ),
            )
            return cur.rowcount == 1

    # --- reading ------------------------------------------------------------------------------

    @serialized
    def bots(self) -> list[tuple[str, str]]:
        """``(name, command)`` of every bot, in config order."""
        with self._reading("the bots table"):
            rows = self._db.execute("SELECT name, command FROM bots ORDER BY position")
            return [(str(n), str(c)) for n, c in rows]

    @serialized
    def matches(self, status: str | None = None) -> list[StoredMatch]:
        """Every match (or those with ``status``), in schedule order."""
        sql = (
            "SELECT match_id, position, table_no, deal, rotation, seed, seats, status, attempts, "
            "result, faults, record_path FROM matches"
        )
        args: tuple[str, ...] = ()
        if status is not None:
            sql += " WHERE status=?"
            args = (status,)
        sql += " ORDER BY position"
        return self._rows("the matches table", sql, args, _match_name, _stored_match)

    @serialized
    def counts(self) -> tuple[int, int]:
        """``(done, total)`` matches."""
        with self._reading("the matches table"):
            row = self._db.execute(
                "SELECT COALESCE(SUM(status='done'), 0), COUNT(*) FROM matches"
            ).fetchone()
            return int(row[0]), int(row[1])


def _check_identity(config: object) -> None:
    """Hold a stored config to the types the arena reads from it (a ``ValueError`` otherwise:
    :meth:`Store._reading` words it): a hand-edited ``"players": "two"`` must be one line."""
    if not isinstance(config, dict):
        raise ValueError("it must be a JSON object")
    if not isinstance(config.get("game"), str):
        raise ValueError(f"game must be a game id; got {config.get('game')!r}")
    players = config.get("players")
    if not (isinstance(players, int) and not isinstance(players, bool) and players >= 1):
        raise ValueError(f"players must be a whole number from 1; got {players!r}")
    if not isinstance(config.get("options"), dict):
        raise ValueError(f"options must be a table; got {config.get('options')!r}")
    seed = config.get("seed")
    if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool)):
        raise ValueError(f"seed must be a whole number; got {seed!r}")
    if "bots" in config and not isinstance(config["bots"], list):
        raise ValueError(f"bots must be a list; got {config['bots']!r}")


def _match_name(row: Sequence[Any]) -> str:
    return f"match {row[0]!r}"


def _stored_match(row: Sequence[Any]) -> StoredMatch:
    """A row of ``matches`` read back, its JSON held to the shape the reports rely on (a
    ``ValueError`` or ``TypeError`` otherwise: :meth:`Store._reading` words it)."""
    seats = json.loads(row[6])
    if not isinstance(seats, list) or not all(isinstance(b, str) for b in seats):
        raise ValueError("seats must be a list of bot names")
    result = None if row[9] is None else json.loads(row[9])
    if result is not None:
        ranks = result["ranks"]
        if not isinstance(ranks, list) or len(ranks) != len(seats):
            raise ValueError(f"result ranks must be a list of {len(seats)}")
        if not all(isinstance(r, int) and not isinstance(r, bool) and r >= 1 for r in ranks):
            raise ValueError("result ranks must be whole numbers from 1")
        by = result.get("forfeited_by")
        if by is not None and not (isinstance(by, int) and 0 <= by < len(seats)):
            raise ValueError(f"forfeited_by must be a seat; got {by!r}")
    faults = [] if row[10] is None else json.loads(row[10])
    if not isinstance(faults, list) or not all(
        isinstance(f, dict) and isinstance(f.get("seat"), int) and 0 <= f["seat"] < len(seats)
        for f in faults
    ):
        raise ValueError("faults must be a list of faults of the match's seats")
    return StoredMatch(
        match_id=row[0],
        index=row[1],
        table=row[2],
        deal=row[3],
        rotation=row[4],
        seed=row[5],
        seats=tuple(seats),
        status=row[7],
        attempts=row[8],
        result=result,
        faults=faults,
        record_path=row[11],
    )


def _lock_tournament(path: Path) -> int:
    """Take the lock of the tournament whose results file is ``path``: its descriptor."""
    busy = f"{path.parent}: another `arena tournament` is running on this directory"
    return take_lock(path.with_name(LOCK_NAME), busy, StoreError)


def _refuse_lost_results(path: Path, state: str, found: list[str]) -> StoreError:
    return StoreError(
        f"{path.parent}: holds {' and '.join(found)} of an earlier tournament but {state} "
        f"{DB_NAME}, so a new tournament here would overwrite them: restore {path.name} "
        "(from a backup), or give a new --out"
    )


def open_to_run(path: Path) -> Store:
    """The store of a tournament about to run, created if new and locked (:meth:`Store.lock`).

    A directory holding an earlier tournament's records or logs but no results file (deleted,
    emptied, or holding no tables) is refused before anything is created or written there: a
    new tournament would draw a new secret seed and overwrite those records.
    """
    make_output_dir(path.parent, StoreError)
    fd = _lock_tournament(path)
    try:
        size = file_size(path, StoreError)
        found = earlier_output(path.parent, (RECORDS_DIR, LOGS_DIR), StoreError)
        if found and not size:
            raise _refuse_lost_results(path, "no" if size is None else "an empty", found)
        store = Store(path)
        if found and store.is_new():
            store.close()
            raise _refuse_lost_results(path, "an empty", found)
    except BaseException:
        os.close(fd)
        raise
    store._lock_fd = fd
    return store


def open_existing(directory: Path) -> Store:
    """The store of a tournament already run in ``directory``."""
    path = directory / DB_NAME if directory.is_dir() else directory
    store = Store(path, create=False)
    if store.stored_config() is None:
        store.close()
        raise StoreError(f"{path}: not a tournament results file (no config stored)")
    return store


def peek_config(path: Path) -> dict[str, Any] | None:
    """The config stored in the results file ``path``, read without writing anything beside it;
    ``None`` when there is none to read."""
    row = peek(path, "SELECT value FROM meta WHERE key = 'config'")
    try:
        config = json.loads(row[0]) if row is not None else None
    except (ValueError, TypeError):
        return None
    return config if isinstance(config, dict) else None
