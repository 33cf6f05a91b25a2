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
that a slow or locked file never blocks the trio loop. The simplest correct design for that is
one connection opened with ``check_same_thread=False`` and every use of it serialized by the
store's own lock (``_serialized``): SQLite connections may move between threads as long as two
threads never use one at the same time, and a single connection keeps one transaction at a time
and one view of the file. During a run only the runner's single writer task calls the store (one
call at a time), so the lock is never contended there; it makes any other caller safe too.
"""

from __future__ import annotations

import fcntl
import functools
import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from cardarena.messages import FaultInfo

from arena.errors import ArenaError
from arena.layout import LOGS_DIR, RECORDS_DIR, make_output_dir
from arena.sqlite import reading, write_transaction
from arena.tournament.schedule import MatchPlan
from engine import Result

P = ParamSpec("P")
T = TypeVar("T")

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


#: The tables of a results file; a file holding some of them but not all is damaged.
TABLES = ("meta", "bots", "matches")

#: The lock file :meth:`Store.lock` holds next to the database of a running tournament.
LOCK_NAME = DB_NAME + ".lock"

#: Environment variable: how many seconds a write of the runner waits for another process that
#: holds the write lock of the results file (``BEGIN EXCLUSIVE`` in an ``sqlite3`` shell, say)
#: before the tournament stops in one line. Default :data:`DEFAULT_LOCK_WAIT_S`.
LOCK_WAIT_ENV = "ARENA_DB_LOCK_TIMEOUT"
DEFAULT_LOCK_WAIT_S = 60.0
#: SQLite's busy timeout: one write attempt waits this long (with SQLite's own backoff) for a
#: lock before :class:`StoreLocked`; the runner then retries until its lock wait has passed.
BUSY_TIMEOUT_S = 1.0
#: SQLite's primary result codes of a lock held by another connection.


def lock_wait_seconds() -> float:
    """The runner's patience with another process's lock: :data:`LOCK_WAIT_ENV` or the
    default; a malformed value is one line."""
    raw = os.environ.get(LOCK_WAIT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_LOCK_WAIT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise StoreError(f"{LOCK_WAIT_ENV}={raw!r}: expected a number of seconds (0 or more)")
    return seconds


def locked_error(path: Path, waited: float) -> StoreError:
    """The one line a tournament stops with when another process keeps the file locked."""
    return StoreError(
        f"{path}: the database is locked by another process (waited {waited:g} s; "
        f"{LOCK_WAIT_ENV} sets how long); the matches not yet stored stay pending: end that "
        "process, then run the same command again to resume"
    )


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


class StoreLocked(StoreError):
    """A write waited :data:`BUSY_TIMEOUT_S` for a lock another process holds on the file
    (nothing was written; retrying may succeed)."""


def _serialized(method: Callable[Concatenate[Store, P], T]) -> Callable[Concatenate[Store, P], T]:
    """Run ``method`` holding the store's lock: one thread at a time uses the connection."""

    def locked(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with self._mutex:
            return method(self, *args, **kwargs)

    functools.update_wrapper(locked, method)
    return locked


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
        # Reentrant: a serialized method may call another (initialize → stored_config).
        self._mutex = threading.RLock()
        # Autocommit mode: transactions are explicit (BEGIN IMMEDIATE … COMMIT) below. Any
        # thread may use the connection, one at a time (see the module's docstring).
        options: dict[str, Any] = {
            "isolation_level": None,
            "timeout": BUSY_TIMEOUT_S,
            "check_same_thread": False,
        }
        try:
            if create:
                self._db = sqlite3.connect(path, **options)
            else:
                uri = f"{path.absolute().as_uri()}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, **options)
        except sqlite3.Error as err:
            raise StoreError(f"{path}: not a usable results database ({err})") from None
        try:
            if create:
                self._db.execute("PRAGMA journal_mode=WAL")
                # NORMAL is durable against a killed process (not against power loss) and fast.
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
            self._check_file()
        except sqlite3.Error as err:
            self._db.close()
            raise StoreError(f"{path}: not a usable results database ({err})") from None
        except BaseException:
            self._db.close()
            raise

    def lock(self) -> None:
        """Hold an exclusive lock on the tournament until :meth:`close` (or the process's end,
        kill -9 included): two runners on one directory would play the same matches twice."""
        self._lock_fd = _lock_tournament(self.path)

    @_serialized
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
        """A damaged file (edited by hand, a table dropped, a row cut) met while reading ``what``
        is one line naming it, not a traceback from deep inside a report."""
        with reading(self.path, what, StoreError):
            yield

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, all or nothing: :class:`StoreLocked` when another process holds
        the lock past the busy timeout, :class:`StoreError` for any other SQLite failure
        (disk full, file damaged); one line either way. The store's refusals pass through."""
        with write_transaction(
            self._db,
            lambda e: StoreLocked(f"{self.path}: the database is locked ({e})"),
            lambda e: StoreError(f"{self.path}: cannot store the results ({e})"),
        ) as db:
            yield db

    def _tables(self) -> set[str]:
        rows = self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        return {str(r[0]) for r in rows}

    @_serialized
    def is_new(self) -> bool:
        """Whether the file holds no tournament yet (no tables at all)."""
        with self._reading("the database"):
            return not self._tables()

    def _check_file(self) -> None:
        """Everything opening relies on, checked before anything is written: the file is whole
        (SQLite's ``quick_check`` reads every page), holds all of the arena's tables or none (a
        new file), and has this arena's schema version."""
        with self._reading("the database"):
            problems = [str(r[0]) for r in self._db.execute("PRAGMA quick_check(1)")]
            if problems != ["ok"]:
                # One line: SQLite's report may span several ("*** in database main ***\n…").
                words = " ".join(problems[0].replace("*** in database main ***", "").split())
                raise ValueError(words or "SQLite's quick_check failed")
            tables = self._tables()
        if not tables:
            return
        ours = [t for t in TABLES if t in tables]
        if not ours:
            raise StoreError(
                f"{self.path}: not a tournament results file (its tables: "
                f"{', '.join(sorted(tables))})"
            )
        missing = [t for t in TABLES if t not in tables]
        if missing:
            raise StoreError(
                f"{self.path}: the {missing[0]} table is damaged (no such table: {missing[0]}); "
                "was the file changed outside the arena?"
            )
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

    @_serialized
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

    @_serialized
    def meta(self, key: str) -> str | None:
        """A stored meta value."""
        with self._reading(f"meta {key!r}"):
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @_serialized
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
        with self._reading("the matches table"):
            rows = self._db.execute("SELECT match_id, seed, seats FROM matches ORDER BY position")
            stored_plans = [(m, s, tuple(json.loads(seats))) for m, s, seats in rows]
        if stored_plans != [(p.match_id, p.seed, p.seats) for p in plans]:
            raise StoreError(
                f"{self.path}: the stored schedule differs from this config's (was it made by "
                "another version of the arena?); use another output directory"
            )

    # --- playing ------------------------------------------------------------------------------

    @_serialized
    def pending_ids(self) -> set[str]:
        """Ids of the matches not yet finished."""
        with self._reading("the matches table"):
            rows = self._db.execute("SELECT match_id FROM matches WHERE status='pending'")
            return {r[0] for r in rows}

    @_serialized
    def mark_started(self, match_id: str) -> None:
        """Count an attempt (the match stays pending until its result is committed)."""
        with self._transaction() as db:
            db.execute("UPDATE matches SET attempts = attempts + 1 WHERE match_id=?", (match_id,))

    @_serialized
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
                    _now(),
                    match_id,
                ),
            )
            return cur.rowcount == 1

    # --- reading ------------------------------------------------------------------------------

    @_serialized
    def bots(self) -> list[tuple[str, str]]:
        """``(name, command)`` of every bot, in config order."""
        with self._reading("the bots table"):
            rows = self._db.execute("SELECT name, command FROM bots ORDER BY position")
            return [(str(n), str(c)) for n, c in rows]

    @_serialized
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

    @_serialized
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


def _lock_tournament(path: Path) -> int:
    """Take the lock of the tournament whose results file is ``path``: its descriptor."""
    lock_path = path.with_name(LOCK_NAME)
    try:
        fd = try_lock(lock_path)
    except OSError as err:
        raise StoreError(f"{lock_path}: cannot create the lock file ({err.strerror})") from None
    if fd is None:
        raise StoreError(f"{path.parent}: another `arena tournament` is running on this directory")
    return fd


def _earlier_output(directory: Path) -> list[str]:
    """What an earlier tournament left in ``directory`` besides its results file: ``["2 files
    in records/", ...]``, empty when nothing."""
    found = []
    for sub in (RECORDS_DIR, LOGS_DIR):
        try:
            n = sum(1 for _ in (directory / sub).iterdir())
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as err:
            raise StoreError(f"{directory / sub}: cannot be read ({err.strerror})") from None
        if n:
            found.append(f"{n} file{'s' if n != 1 else ''} in {sub}/")
    return found


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
        try:
            size: int | None = path.stat().st_size
        except FileNotFoundError:
            size = None
        except OSError as err:
            raise StoreError(f"{path}: cannot be read ({err.strerror})") from None
        found = _earlier_output(path.parent)
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
