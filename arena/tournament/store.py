"""The tournament's results in one SQLite file (``results.sqlite``, WAL journal).

The file holds the config, the bots and every scheduled match. A match row is ``pending`` until
its result is committed, in the same transaction as its ``done`` status, so a process killed at
any moment (kill -9 included) leaves each match either wholly finished or wholly unplayed. A
resume recomputes the schedule from the config, checks it against the stored one and plays the
matches still pending; nothing is counted twice.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.layout import make_output_dir
from arena.tournament.schedule import MatchPlan

#: Version of the database layout; a file with another version is refused.
SCHEMA_VERSION = 1
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


#: The lock file :meth:`Store.lock` holds next to the database of a running tournament.
LOCK_NAME = DB_NAME + ".lock"


def try_lock(path: Path, create: bool = True) -> int | None:
    """Take an exclusive ``flock`` on ``path`` without waiting: the descriptor holding it (closing
    it releases the lock, as does the process's end, kill -9 included), or ``None`` when another
    process holds it. Raises ``OSError`` when the file cannot be opened (``FileNotFoundError``
    when it is missing and ``create`` is false)."""
    fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


class StoreError(ArenaError):
    """The results file cannot be used (another tournament, another schema, unreadable)."""


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


class Store:
    """The results database of one tournament."""

    def __init__(self, path: Path, create: bool = True) -> None:
        """Open (``create``: or create) the results file; without ``create`` it is only read:
        ``arena ratings`` on a file that is no results file must leave it as it was."""
        if not create and not path.exists():
            raise StoreError(f"{path}: no results file (run `arena tournament` first)")
        if create:
            make_output_dir(path.parent, StoreError)
        #: The database file.
        self.path = path
        self._lock_fd: int | None = None
        try:
            if create:
                # Autocommit mode: transactions are explicit (BEGIN IMMEDIATE … COMMIT) below.
                self._db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
                self._db.execute("PRAGMA journal_mode=WAL")
                # NORMAL is durable against a killed process (not against power loss) and fast.
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
            else:
                uri = f"{path.absolute().as_uri()}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0)
            self._check_schema()
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{path}: not a usable results database ({err})") from None

    def lock(self) -> None:
        """Hold an exclusive lock on the tournament until :meth:`close` (or the process's end,
        kill -9 included): two runners on one directory would play the same matches twice."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            fd = try_lock(lock_path)
        except OSError as err:
            raise StoreError(f"{lock_path}: cannot create the lock file ({err.strerror})") from None
        if fd is None:
            raise StoreError(
                f"{self.path.parent}: another `arena tournament` is running on this directory"
            )
        self._lock_fd = fd

    def close(self) -> None:
        """Close the connection (and release the lock)."""
        self._db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """Turn a file whose content was damaged (edited by hand, a table dropped, a row cut)
        into one line naming it, instead of a traceback from deep inside a report."""
        try:
            yield
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError, IndexError) as err:
            raise StoreError(
                f"{self.path}: {what} is damaged ({err}); was the file changed outside the arena?"
            ) from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _check_schema(self) -> None:
        has_meta = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if not has_meta:
            return
        with self._reading("the schema version"):
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            supported = row is not None and int(row[0]) == SCHEMA_VERSION
        if not supported:
            found = None if row is None else row[0]
            raise StoreError(
                f"{self.path}: results schema {found} is not supported (this arena uses "
                f"{SCHEMA_VERSION})"
            )

    # --- setting up and resuming ---------------------------------------------------------------

    def stored_config(self) -> dict[str, Any] | None:
        """The config identity stored with the tournament, or ``None`` for a new file."""
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key='config'").fetchone()
        except sqlite3.OperationalError:  # no tables yet
            return None
        with self._reading("the stored config"):
            return None if row is None else dict(json.loads(row[0]))

    def meta(self, key: str) -> str | None:
        """A stored meta value."""
        with self._reading(f"meta {key!r}"):
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

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
            return
        with self._transaction() as db:
            # One statement at a time: executescript() would commit the open transaction.
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
            meta = {
                "schema": str(SCHEMA_VERSION),
                "config": json.dumps(identity, sort_keys=True),
                "created_at": _now(),
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
        differs = sorted(
            k for k in stored.keys() | identity.keys() if stored.get(k) != identity.get(k)
        )
        if differs:
            raise StoreError(
                f"{self.path} holds a tournament with a different config (differs in: "
                f"{', '.join(differs)}); use another output directory, or delete it to start over"
            )
        rows = self._db.execute("SELECT match_id, seed, seats FROM matches ORDER BY position")
        stored_plans = [(m, s, tuple(json.loads(seats))) for m, s, seats in rows]
        if stored_plans != [(p.match_id, p.seed, p.seats) for p in plans]:
            raise StoreError(
                f"{self.path}: the stored schedule differs from this config's (was it made by "
                "another version of the arena?); use another output directory"
            )

    # --- playing ------------------------------------------------------------------------------

    def pending_ids(self) -> set[str]:
        """Ids of the matches not yet finished."""
        with self._reading("the matches table"):
            rows = self._db.execute("SELECT match_id FROM matches WHERE status='pending'")
            return {r[0] for r in rows}

    def mark_started(self, match_id: str) -> None:
        """Count an attempt (the match stays pending until its result is committed)."""
        with self._transaction() as db:
            db.execute("UPDATE matches SET attempts = attempts + 1 WHERE match_id=?", (match_id,))

    def finish(
        self,
        match_id: str,
        result: Mapping[str, Any],
        faults: Sequence[Mapping[str, Any]],
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
                    json.dumps(result, sort_keys=True),
                    json.dumps(list(faults), sort_keys=True),
                    record_path,
                    round(seconds, 3),
                    _now(),
                    match_id,
                ),
            )
            return cur.rowcount == 1

    # --- reading ------------------------------------------------------------------------------

    def bots(self) -> list[tuple[str, str]]:
        """``(name, command)`` of every bot, in config order."""
        with self._reading("the bots table"):
            rows = self._db.execute("SELECT name, command FROM bots ORDER BY position")
            return [(str(n), str(c)) for n, c in rows]

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
        with self._reading("the matches table"):
            rows = self._db.execute(sql + " ORDER BY position", args).fetchall()
        out = []
        for row in rows:
            with self._reading(f"match {row[0]!r}"):
                out.append(_stored_match(row))
        return out

    def counts(self) -> tuple[int, int]:
        """``(done, total)`` matches."""
        with self._reading("the matches table"):
            row = self._db.execute(
                "SELECT COALESCE(SUM(status='done'), 0), COUNT(*) FROM matches"
            ).fetchone()
            return int(row[0]), int(row[1])


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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def open_existing(directory: Path) -> Store:
    """The store of a tournament already run in ``directory``."""
    path = directory / DB_NAME if directory.is_dir() else directory
    store = Store(path, create=False)
    if store.stored_config() is None:
        store.close()
        raise StoreError(f"{path}: not a tournament results file (no config stored)")
    return store
