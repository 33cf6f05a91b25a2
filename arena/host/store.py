"""A competition's state in one SQLite file, ``DIR/competition.sqlite`` (WAL journal).

It holds the authors (their API tokens as SHA-256 only), their bots and every submitted version
(immutable once stored; only its status moves, along :data:`TRANSITIONS`), the ladder's and the
final's *units* (one duplicate deal at one table of versions, played in every rotation of its
places: one match per rotation) with their matches, and the control values (ladder state, pace,
the secret seed).

Kill -9 safe, as a tournament's results file: a unit and all its matches are inserted in one
transaction, and a match's result is committed together with its ``done`` status and only while
it is still ``pending`` (:meth:`CompetitionStore.commit_match`), so a match replayed after a crash
is never counted twice; a unit is ``done`` in the transaction that stores its last match.

The schema is the ordered list :data:`MIGRATIONS`, append-only: the file's version (``meta``
``schema``) is the number applied, each later one is applied in its own transaction on open, and
a file newer than this code is refused. A damaged file (not a database, a garbage page, a table
missing, a stored value of the wrong type), another host on the same directory, or a directory
made for another game or rules (:meth:`CompetitionConfig.identity`) is refused in one line
(:class:`CompetitionStoreError`) and left as it was.

Threads: callers (HTTP handlers, the ladder) run these synchronous calls in worker threads. One
connection, opened with ``check_same_thread=False``, is used by one thread at a time under the
store's lock (:func:`_serialized`): as in ``arena.tournament.store``, one transaction at a time
and one view of the file, with no connection pool to get wrong.
"""

from __future__ import annotations

import functools
import hmac
import json
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, Final, Literal, ParamSpec, TypeVar, cast, get_args

from cardarena.messages import FaultInfo

from arena.errors import ArenaError
from arena.host.config import CompetitionConfig, check_units_per_minute
from arena.layout import LOGS_DIR, RECORDS_DIR, SNAPSHOTS_DIR, make_output_dir
from arena.ratings import Entry, RatingTable
from arena.registry import NAME_RE, RESERVED, hash_token
from arena.sqlite import reading, write_transaction
from arena.tournament.store import try_lock
from engine import Result

P = ParamSpec("P")
T = TypeVar("T")

#: The database's file name inside the competition directory.
DB_NAME: Final = "competition.sqlite"
#: The lock file a running host holds beside it.
LOCK_NAME: Final = DB_NAME + ".lock"
#: One write waits this long inside SQLite for a lock another process holds (an ``sqlite3`` shell,
#: a backup) before :class:`DatabaseLocked`; the caller may retry.
BUSY_TIMEOUT_S: Final = 1.0

Phase = Literal["ladder", "final"]
VersionKind = Literal["archive", "image", "live"]
VersionStatus = Literal["pending", "validating", "validated", "failed", "retired"]
UnitState = Literal["pending", "done", "failed"]
MatchState = Literal["pending", "done"]
LadderState = Literal["running", "paused", "closed"]

PHASES: Final = get_args(Phase)
VERSION_KINDS: Final = get_args(VersionKind)
VERSION_STATUSES: Final = get_args(VersionStatus)
UNIT_STATES: Final = get_args(UnitState)
LADDER_STATES: Final = get_args(LadderState)

#: The status a version may move to from each status. A retired version never comes back, and a
#: verdict (validated, failed) is never revised: results stored under a version keep one meaning.
#: ``pending → retired`` lets an author withdraw a version still waiting for its validation.
TRANSITIONS: Final[Mapping[str, frozenset[str]]] = {
    "pending": frozenset({"validating", "retired"}),
    "validating": frozenset({"validated", "failed"}),
    "validated": frozenset({"retired"}),
    "failed": frozenset({"retired"}),
    "retired": frozenset(),
}
#: The ladder's states: paused and running alternate; closed is for good (the final follows).
LADDER_TRANSITIONS: Final[Mapping[str, frozenset[str]]] = {
    "running": frozenset({"paused", "closed"}),
    "paused": frozenset({"running", "closed"}),
    "closed": frozenset(),
}

_SHA256 = re.compile(r"[0-9a-f]{64}")
#: Token prefixes: an author's API token and a live bot's connection token are told apart at a
#: glance (and never start with ``-``, which would read as an option on a command line).
AUTHOR_TOKEN_PREFIX: Final = "cau_"
LIVE_TOKEN_PREFIX: Final = "cal_"

# Schema 1. Released migrations are never edited: a change is a new entry in MIGRATIONS.
_V1 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE authors (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,   -- SHA-256 of the API token, hex
    created    TEXT NOT NULL
);
CREATE TABLE bots (
    id        INTEGER PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES authors (id),
    name      TEXT NOT NULL UNIQUE,    -- competition-wide
    created   TEXT NOT NULL
);
CREATE TABLE versions (
    id              INTEGER PRIMARY KEY,
    bot_id          INTEGER NOT NULL REFERENCES bots (id),
    number          INTEGER NOT NULL CHECK (number >= 1),
    kind            TEXT NOT NULL CHECK (kind IN ('archive', 'image', 'live')),
    sha256          TEXT CHECK ((kind = 'live') = (sha256 IS NULL)),
    manifest        TEXT NOT NULL,     -- JSON object: {command, runtime} of the snapshot
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'validating', 'validated', 'failed', 'retired')),
    reason          TEXT NOT NULL DEFAULT '',
    log_path        TEXT,              -- relative to the competition directory
    live_token_hash TEXT UNIQUE CHECK ((kind = 'live') = (live_token_hash IS NOT NULL)),
    created         TEXT NOT NULL,
    updated         TEXT NOT NULL,
    UNIQUE (bot_id, number)
);
CREATE INDEX versions_by_status ON versions (status);
-- What a version is never changes: results stored under it always mean the same code.
CREATE TRIGGER versions_immutable
BEFORE UPDATE OF id, bot_id, number, kind, sha256, manifest, live_token_hash, created ON versions
BEGIN
    SELECT RAISE(ABORT, 'a version is immutable');
END;
CREATE TRIGGER versions_kept BEFORE DELETE ON versions
BEGIN
    SELECT RAISE(ABORT, 'a version is never deleted');
END;
-- The second line behind CompetitionStore.set_status (TRANSITIONS).
CREATE TRIGGER versions_status BEFORE UPDATE OF status ON versions
WHEN OLD.status <> NEW.status AND (OLD.status, NEW.status) NOT IN (VALUES
    ('pending', 'validating'), ('pending', 'retired'), ('validating', 'validated'),
    ('validating', 'failed'), ('validated', 'retired'), ('failed', 'retired'))
BEGIN
    SELECT RAISE(ABORT, 'illegal status change');
END;
CREATE TABLE units (
    id             INTEGER PRIMARY KEY,
    phase          TEXT NOT NULL CHECK (phase IN ('ladder', 'final')),
    seed           INTEGER NOT NULL,  -- the deal, secret: derived one-way from the secret seed
    table_versions TEXT NOT NULL,     -- JSON list: the version of each place
    state          TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    reason         TEXT NOT NULL DEFAULT '',
    created        TEXT NOT NULL,
    finished       TEXT
);
CREATE INDEX units_by_state ON units (state);
-- The table again, one row per place: foreign keys to the versions, and "units of a version".
CREATE TABLE unit_versions (
    unit_id    INTEGER NOT NULL REFERENCES units (id),
    place      INTEGER NOT NULL,
    version_id INTEGER NOT NULL REFERENCES versions (id),
    PRIMARY KEY (unit_id, place)
);
CREATE INDEX unit_versions_by_version ON unit_versions (version_id);
CREATE TRIGGER units_final BEFORE UPDATE ON units WHEN OLD.state <> 'pending'
BEGIN
    SELECT RAISE(ABORT, 'a finished unit is never changed');
END;
CREATE TABLE matches (
    id          INTEGER PRIMARY KEY,
    unit_id     INTEGER NOT NULL REFERENCES units (id),
    rotation    INTEGER NOT NULL CHECK (rotation >= 0),
    match_id    TEXT NOT NULL UNIQUE,
    seats       TEXT NOT NULL,        -- JSON list: the version of each seat
    state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
    result      TEXT,                 -- JSON: Result.to_dict()
    faults      TEXT,                 -- JSON list of {seat, kind, detail}
    record_path TEXT,                 -- relative to the competition directory
    finished    TEXT,
    UNIQUE (unit_id, rotation),
    CHECK ((state = 'done') = (result IS NOT NULL))
);
CREATE INDEX matches_by_state ON matches (state);
CREATE TRIGGER matches_final BEFORE UPDATE ON matches WHEN OLD.state = 'done'
BEGIN
    SELECT RAISE(ABORT, 'a finished match is never changed');
END;
"""

# Schema 2: the leaderboard over time, one row per refit that counted new matches (the web
# pages' rating history; a fit is not cheap enough to redo for every past moment on request).
_V2 = """
CREATE TABLE rating_history (
    id      INTEGER PRIMARY KEY,
    phase   TEXT NOT NULL CHECK (phase IN ('ladder', 'final')),
    at      TEXT NOT NULL,
    matches INTEGER NOT NULL CHECK (matches >= 0),
    ratings TEXT NOT NULL              -- JSON list of [ref, elo, plus_minus]
);
CREATE INDEX rating_history_by_phase ON rating_history (phase, id);
"""

#: The schema, as the migrations that build it in order; the file's schema version is how many
#: it has applied. Append only: a released migration is never edited or removed.
MIGRATIONS: list[str] = [_V1, _V2]


class CompetitionStoreError(ArenaError):
    """The competition's database cannot be used, or refuses a change; one line saying why."""


class NotFound(CompetitionStoreError):
    """No author, version, unit or match by that id."""


class Conflict(CompetitionStoreError):
    """The change contradicts what is stored (a taken name, an illegal transition)."""


class Forbidden(CompetitionStoreError):
    """The caller may not do this (another author's bot, a wrong invite code)."""


class DatabaseLocked(CompetitionStoreError):
    """Another process held the write lock past :data:`BUSY_TIMEOUT_S`; nothing was written
    (retrying may succeed)."""


@dataclass(frozen=True, slots=True)
class Author:
    """A registered author (the token is never part of it)."""

    id: int
    name: str
    created: str


@dataclass(frozen=True, slots=True)
class Bot:
    """A bot: a name, competition-wide, owned by one author."""

    id: int
    author_id: int
    name: str
    created: str


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """The leaderboard after one refit."""

    #: When (UTC, ISO 8601).
    at: str
    #: Rated matches the fit counted.
    matches: int
    #: ``(ref, elo, plus_minus)`` of each rated version, best first.
    ratings: tuple[tuple[str, float, float], ...]


@dataclass(frozen=True, slots=True)
class Version:
    """One submitted version of a bot."""

    id: int
    bot_id: int
    #: The bot's name.
    bot: str
    author_id: int
    #: 1, 2, … per bot.
    number: int
    kind: VersionKind
    #: The snapshot's content address; ``None`` for a live bot.
    sha256: str | None
    #: ``{command, runtime}`` from the archive's manifest.
    manifest: dict[str, Any]
    status: VersionStatus
    #: Why it failed or was retired.
    reason: str
    #: Its validation log, relative to the competition directory.
    log_path: str | None
    created: str
    updated: str

    @property
    def ref(self) -> str:
        """``BOT@NUMBER``: its name on leaderboards and in :meth:`CompetitionStore.rating_entries`
        (bot names have no ``@``)."""
        return f"{self.bot}@{self.number}"


@dataclass(frozen=True, slots=True)
class Unit:
    """One duplicate deal at one table, played in every rotation."""

    #: Also its serial: ids grow in creation order and are never reused.
    id: int
    phase: Phase
    seed: int
    #: The version of each place, in place order.
    table: tuple[int, ...]
    state: UnitState
    reason: str
    created: str
    finished: str | None


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """One rotation of a unit, as stored."""

    match_id: str
    unit_id: int
    phase: Phase
    #: The unit's seed (the same deal in every rotation).
    seed: int
    rotation: int
    #: The version of each engine seat.
    seats: tuple[int, ...]
    state: MatchState
    #: ``Result.to_dict()`` once done.
    result: dict[str, Any] | None
    faults: list[dict[str, Any]]
    record_path: str | None
    finished: str | None


@dataclass(frozen=True, slots=True)
class Activity:
    """A version's share of one phase, for matchmaking (``arena.host.matchmaking.Candidate``)."""

    #: Units it was chosen for (any state).
    units: int
    #: The id of the last unit it was chosen for; ``None`` if never.
    last_unit: int | None
    #: Its units still pending.
    running: int
    #: Its finished matches.
    matches: int


def _serialized(
    method: Callable[Concatenate[CompetitionStore, P], T],
) -> Callable[Concatenate[CompetitionStore, P], T]:
    """Run ``method`` holding the store's lock: one thread at a time uses the connection."""

    def locked(self: CompetitionStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with self._mutex:
            return method(self, *args, **kwargs)

    functools.update_wrapper(locked, method)
    return locked


class CompetitionStore:
    """The database of one competition directory, locked against a second host while open."""

    def __init__(
        self,
        directory: Path,
        config: CompetitionConfig,
        *,
        migrations: Sequence[str] = MIGRATIONS,
    ) -> None:
        """Open (creating if new) ``directory``'s database for ``config``, migrating it to
        ``migrations`` (tests pass an extended list; the host never does)."""
        #: The competition directory.
        self.directory = directory
        #: The database file.
        self.path = directory / DB_NAME
        self._places = config.places
        self._n_seats = sum(len(group) for group in config.places)
        self._migrations = tuple(migrations)
        # Reentrant: a serialized method may call another.
        self._mutex = threading.RLock()
        make_output_dir(directory, CompetitionStoreError)
        self._lock_fd: int | None = _lock(directory)
        try:
            self._db = self._connect()
            try:
                self._open(config)
            except BaseException:
                self._db.close()
                raise
        except BaseException:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise

    @_serialized
    def close(self) -> None:
        """Close the connection and release the directory's lock (safe to call twice)."""
        if self._lock_fd is None:
            return
        self._db.close()
        os.close(self._lock_fd)
        self._lock_fd = None

    def __enter__(self) -> CompetitionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- opening ------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            size: int | None = self.path.stat().st_size
        except FileNotFoundError:
            size = None
        except OSError as err:
            raise CompetitionStoreError(f"{self.path}: cannot be read ({err.strerror})") from None
        if not size:
            # A new database draws a new secret seed and forgets every author: never beside the
            # snapshots, records or logs of a competition whose database was lost.
            found = _earlier_output(self.directory)
            if found:
                state = "no" if size is None else "an empty"
                raise CompetitionStoreError(
                    f"{self.directory}: holds {' and '.join(found)} of an earlier competition but "
                    f"{state} {DB_NAME}: restore it (from a backup), or use a new directory"
                )
        if size is None:
            # Owner only from its first byte: it holds token hashes and the secret seed.
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except OSError as err:
                raise CompetitionStoreError(
                    f"{self.path}: cannot create the database ({err.strerror})"
                ) from None
        try:
            # Autocommit mode: every transaction below is an explicit BEGIN IMMEDIATE … COMMIT.
            db = sqlite3.connect(
                self.path,
                isolation_level=None,
                timeout=BUSY_TIMEOUT_S,
                check_same_thread=False,
            )
        except sqlite3.Error as err:
            raise CompetitionStoreError(
                f"{self.path}: not a usable competition database ({err})"
            ) from None
        db.row_factory = sqlite3.Row
        return db

    def _open(self, config: CompetitionConfig) -> None:
        """Check the whole file before anything is written (switching to WAL writes to it, so
        that comes after), then migrate and initialize it."""
        try:
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as err:
            raise CompetitionStoreError(
                f"{self.path}: not a usable competition database ({err})"
            ) from None
        with self._reading("the database"):
            problems = [str(r[0]) for r in self._db.execute("PRAGMA quick_check(1)")]
            if problems != ["ok"]:
                # One line: SQLite's report may span several ("*** in database main ***\n…").
                words = " ".join(problems[0].replace("*** in database main ***", "").split())
                raise ValueError(words or "SQLite's quick_check failed")
            tables = self._tables()
        version = self._schema_version(tables)
        latest = len(self._migrations)
        if version > latest:
            raise CompetitionStoreError(
                f"{self.path}: competition schema {version} is newer than this arena's "
                f"({latest}); run a newer arena"
            )
        missing = sorted(_tables_of(self._migrations[:version]) - tables)
        if missing:
            raise CompetitionStoreError(
                f"{self.path}: the {missing[0]} table is damaged (no such table: {missing[0]}); "
                "was the file changed outside the arena?"
            )
        identity = config.identity()
        stored = self._stored_identity() if version else None
        if stored is not None:
            differs = sorted(
                k for k in stored.keys() | identity.keys() if stored.get(k) != identity.get(k)
            )
            if differs:
                raise CompetitionStoreError(
                    f"{self.directory} holds a competition with a different config (differs in: "
                    f"{', '.join(differs)}); use another directory"
                )
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable against a killed process (not against power loss) and fast.
            self._db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as err:
            raise CompetitionStoreError(f"{self.path}: cannot use the database ({err})") from None
        for number in range(version + 1, latest + 1):
            self._migrate(number)
        if stored is None:
            self._initialize(config, identity)
        # Read once now, so a hand-edited control value is one line at open, not later.
        self.ladder_state()
        self.units_per_minute()
        self.secret_seed()

    def _tables(self) -> set[str]:
        rows = self._db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        )
        return {str(r[0]) for r in rows}

    def _schema_version(self, tables: set[str]) -> int:
        """The number of migrations the file has applied (0: a new, empty file)."""
        if not tables:
            return 0
        if "meta" not in tables and tables & _tables_of(self._migrations):
            raise CompetitionStoreError(
                f"{self.path}: the meta table is damaged (no such table: meta); was the file "
                "changed outside the arena?"
            )
        if "meta" not in tables:
            raise CompetitionStoreError(
                f"{self.path}: not a competition database (its tables: {', '.join(sorted(tables))})"
            )
        with self._reading("the schema version"):
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                raise ValueError("no schema version stored")
            version = int(row[0])
            if version < 1:
                raise ValueError(f"schema {version}")
            return version

    def _stored_identity(self) -> dict[str, Any] | None:
        with self._reading("the stored config"):
            row = self._db.execute("SELECT value FROM meta WHERE key='identity'").fetchone()
            if row is None:
                return None
            identity = json.loads(row[0])
            if not isinstance(identity, dict):
                raise ValueError("it must be a JSON object")
            return identity

    def _migrate(self, number: int) -> None:
        """Apply migration ``number`` (from 1) and record it, in one transaction."""
        try:
            with self._transaction() as db:
                for statement in _statements(self._migrations[number - 1]):
                    db.execute(statement)
                db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(number),)
                )
        except DatabaseLocked:
            raise
        except (CompetitionStoreError, ValueError) as err:
            # Rolled back: the file stays at the schema before this one.
            raise CompetitionStoreError(
                f"{self.path}: cannot migrate to schema {number} ({err.__cause__ or err})"
            ) from None

    def _initialize(self, config: CompetitionConfig, identity: Mapping[str, Any]) -> None:
        """The values a new competition starts with. Idempotent (``INSERT OR IGNORE``): a host
        killed between the migrations and this completes it on its next start."""
        values = {
            "identity": json.dumps(identity, sort_keys=True),
            "name": config.name,
            "created": _now(),
            # Every deal derives from it; 63 bits nobody can guess (docs/tournaments.md, "Seeds
            # are secret"). Never sent to a bot.
            "secret_seed": str(secrets.randbits(63)),
            "ladder_state": "running",
            "units_per_minute": repr(config.ladder.units_per_minute),
        }
        with self._transaction() as db:
            db.executemany("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", values.items())

    # --- plumbing -----------------------------------------------------------------------------

    @contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """A damaged file (edited by hand, a table dropped, a row cut) met while reading ``what``
        is one line naming it, not a traceback from deep inside a report."""
        with reading(self.path, what, CompetitionStoreError):
            yield

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, all or nothing: :class:`DatabaseLocked` when another process holds
        the lock past the busy timeout, :class:`CompetitionStoreError` for any other SQLite failure
        (disk full, file damaged); one line either way. The store's refusals pass through."""
        with write_transaction(
            self._db,
            lambda e: DatabaseLocked(
                f"{self.path}: the database is locked by another process ({e})"
            ),
            lambda e: CompetitionStoreError(f"{self.path}: cannot write ({e})"),
        ) as db:
            yield db

    def _meta(self, key: str) -> str:
        with self._reading(f"meta {key!r}"):
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            if row is None:
                raise KeyError(f"no {key} stored")
            return str(row[0])

    def _set_meta(self, db: sqlite3.Connection, key: str, value: str) -> None:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- authors ------------------------------------------------------------------------------

    @_serialized
    def add_author(self, name: str) -> tuple[Author, str]:
        """A new author and their API token: shown this once, only its hash is stored."""
        _check_name("author name", name)
        token = _new_token(AUTHOR_TOKEN_PREFIX)
        created = _now()
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM authors WHERE name=?", (name,)).fetchone():
                raise Conflict(f"author {name!r} already exists")
            cur = db.execute(
                "INSERT INTO authors (name, token_hash, created) VALUES (?, ?, ?)",
                (name, hash_token(token), created),
            )
            assert cur.lastrowid is not None
            return Author(cur.lastrowid, name, created), token

    @_serialized
    def register_with_invite(
        self, name: str, code: str, expected_code: str | None
    ) -> tuple[Author, str]:
        """:meth:`add_author` for someone holding the config's invite code (``expected_code``;
        ``None``: registration is closed)."""
        if not expected_code:
            raise Forbidden("this competition takes no registrations (it has no invite code)")
        # The code is a plain secret (not a hash): compare in constant time.
        if not hmac.compare_digest(code.encode(), expected_code.encode()):
            raise Forbidden("wrong invite code")
        return self.add_author(name)

    @_serialized
    def author(self, author_id: int) -> Author:
        with self._reading("the authors table"):
            row = self._db.execute(
                "SELECT id, name, created FROM authors WHERE id=?", (author_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no author {author_id}")
            return Author(int(row["id"]), str(row["name"]), str(row["created"]))

    @_serialized
    def authors(self) -> list[Author]:
        with self._reading("the authors table"):
            rows = self._db.execute("SELECT id, name, created FROM authors ORDER BY id")
            return [Author(int(r["id"]), str(r["name"]), str(r["created"])) for r in rows]

    @_serialized
    def author_for_token(self, token: str) -> Author | None:
        """The author whose API token this is; ``None`` for any other string."""
        if not token.startswith(AUTHOR_TOKEN_PREFIX):
            return None
        with self._reading("the authors table"):
            row = self._db.execute(
                "SELECT id, name, created FROM authors WHERE token_hash=?", (hash_token(token),)
            ).fetchone()
            if row is None:
                return None
            return Author(int(row["id"]), str(row["name"]), str(row["created"]))

    @_serialized
    def rotate_token(self, author_id: int) -> str:
        """A new API token for the author (shown once); the old one stops working."""
        token = _new_token(AUTHOR_TOKEN_PREFIX)
        with self._transaction() as db:
            cur = db.execute(
                "UPDATE authors SET token_hash=? WHERE id=?", (hash_token(token), author_id)
            )
            if cur.rowcount != 1:
                raise NotFound(f"no author {author_id}")
        return token

    # --- bots and versions ----------------------------------------------------------------------

    @_serialized
    def bots(self, author_id: int | None = None) -> list[Bot]:
        sql = "SELECT id, author_id, name, created FROM bots"
        args: tuple[int, ...] = ()
        if author_id is not None:
            sql, args = sql + " WHERE author_id=?", (author_id,)
        with self._reading("the bots table"):
            rows = self._db.execute(sql + " ORDER BY id", args)
            return [
                Bot(int(r["id"]), int(r["author_id"]), str(r["name"]), str(r["created"]))
                for r in rows
            ]

    @_serialized
    def add_version(
        self,
        author_id: int,
        bot_name: str,
        kind: Literal["archive", "image"],
        sha256: str,
        manifest: Mapping[str, Any],
    ) -> Version:
        """The next version (1, 2, …) of ``bot_name``, created for the author on first use;
        ``pending`` until validated. For a live bot see :meth:`add_live_version`."""
        if kind not in ("archive", "image"):
            raise CompetitionStoreError(
                f"version kind must be archive or image (a live bot: add_live_version); got "
                f"{kind!r}"
            )
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
            raise CompetitionStoreError(f"sha256 must be 64 lowercase hex digits; got {sha256!r}")
        return self._add_version(author_id, bot_name, kind, sha256, manifest, None)

    @_serialized
    def add_live_version(
        self, author_id: int, bot_name: str, manifest: Mapping[str, Any] | None = None
    ) -> tuple[Version, str]:
        """A version played by a bot that connects itself, and the token it connects with (shown
        this once; only its hash is stored)."""
        token = _new_token(LIVE_TOKEN_PREFIX)
        version = self._add_version(
            author_id, bot_name, "live", None, manifest or {}, hash_token(token)
        )
        return version, token

    def _add_version(
        self,
        author_id: int,
        bot_name: str,
        kind: VersionKind,
        sha256: str | None,
        manifest: Mapping[str, Any],
        live_token_hash: str | None,
    ) -> Version:
        _check_name("bot name", bot_name)
        if bot_name in RESERVED:
            raise Conflict(f"bot name {bot_name!r} is a reference bot's; choose another")
        try:
            manifest_json = json.dumps(dict(manifest), sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise CompetitionStoreError(f"manifest must be a JSON object ({err})") from None
        now = _now()
        with self._transaction() as db:
            author = db.execute("SELECT 1 FROM authors WHERE id=?", (author_id,)).fetchone()
            if author is None:
                raise NotFound(f"no author {author_id}")
            bot = db.execute("SELECT id, author_id FROM bots WHERE name=?", (bot_name,)).fetchone()
            if bot is None:
                bot_id = db.execute(
                    "INSERT INTO bots (author_id, name, created) VALUES (?, ?, ?)",
                    (author_id, bot_name, now),
                ).lastrowid
            elif int(bot["author_id"]) != author_id:
                raise Forbidden(f"bot name {bot_name!r} belongs to another author")
            else:
                bot_id = int(bot["id"])
            # Inside the write transaction (BEGIN IMMEDIATE): no other writer picks the same.
            (number,) = db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE bot_id=?", (bot_id,)
            ).fetchone()
            cur = db.execute(
                "INSERT INTO versions (bot_id, number, kind, sha256, manifest, live_token_hash, "
                "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (bot_id, number, kind, sha256, manifest_json, live_token_hash, now, now),
            )
            version_id = cur.lastrowid
        assert version_id is not None
        return self.version(version_id)

    _VERSION_SQL = (
        "SELECT v.id, v.bot_id, b.name AS bot, b.author_id, v.number, v.kind, v.sha256, "
        "v.manifest, v.status, v.reason, v.log_path, v.created, v.updated "
        "FROM versions v JOIN bots b ON b.id = v.bot_id"
    )

    @_serialized
    def version(self, version_id: int) -> Version:
        with self._reading("the versions table"):
            row = self._db.execute(self._VERSION_SQL + " WHERE v.id=?", (version_id,)).fetchone()
            if row is None:
                raise NotFound(f"no version {version_id}")
            return _version(row)

    @_serialized
    def versions(
        self, status: VersionStatus | None = None, author_id: int | None = None
    ) -> list[Version]:
        """Every version (or those with ``status``, of ``author_id``), in submission order."""
        where, args = _where(("v.status", status), ("b.author_id", author_id))
        with self._reading("the versions table"):
            rows = self._db.execute(self._VERSION_SQL + where + " ORDER BY v.id", args)
            return [_version(r) for r in rows]

    @_serialized
    def version_for_live_token(self, token: str) -> Version | None:
        """The live version this connection token belongs to (whatever its status: the caller
        decides whether a retired one may still connect); ``None`` for any other string."""
        if not token.startswith(LIVE_TOKEN_PREFIX):
            return None
        with self._reading("the versions table"):
            row = self._db.execute(
                self._VERSION_SQL + " WHERE v.live_token_hash=?", (hash_token(token),)
            ).fetchone()
            return None if row is None else _version(row)

    @_serialized
    def set_status(
        self,
        version_id: int,
        status: VersionStatus,
        reason: str = "",
        log_path: str | None = None,
    ) -> Version:
        """Move a version along :data:`TRANSITIONS` (with why, and its validation log when
        given); anything else is :class:`Conflict`."""
        if status not in TRANSITIONS:
            raise CompetitionStoreError(
                f"status must be one of {', '.join(VERSION_STATUSES)}; got {status!r}"
            )
        with self._transaction() as db:
            row = db.execute(self._VERSION_SQL + " WHERE v.id=?", (version_id,)).fetchone()
            if row is None:
                raise NotFound(f"no version {version_id}")
            current = str(row["status"])
            if status not in TRANSITIONS.get(current, frozenset()):
                allowed = sorted(TRANSITIONS.get(current, frozenset()))
                raise Conflict(
                    f"version {row['bot']}@{row['number']} is {current}; it cannot become "
                    f"{status} (allowed: {', '.join(allowed) or 'none, for good'})"
                )
            db.execute(
                "UPDATE versions SET status=?, reason=?, log_path=COALESCE(?, log_path), "
                "updated=? WHERE id=?",
                (status, reason, log_path, _now(), version_id),
            )
        return self.version(version_id)

    # --- units and matches --------------------------------------------------------------------

    @_serialized
    def next_unit_id(self) -> int:
        """The id the next :meth:`create_unit` gets (ids are never reused), so a caller can
        derive its seed and match ids first. Only one scheduler creates units."""
        with self._reading("the units table"):
            (last,) = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM units").fetchone()
            return int(last) + 1

    @_serialized
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
        if phase not in PHASES:
            raise CompetitionStoreError(f"phase must be ladder or final; got {phase!r}")
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
        now = _now()
        with self._transaction() as db:
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
                "INSERT INTO units (id, phase, seed, table_versions, created) "
                "VALUES (?, ?, ?, ?, ?)",
                (unit_id, phase, seed, json.dumps(places), now),
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

    @_serialized
    def unit(self, unit_id: int) -> Unit:
        with self._reading("the units table"):
            row = self._db.execute("SELECT * FROM units WHERE id=?", (unit_id,)).fetchone()
            if row is None:
                raise NotFound(f"no unit {unit_id}")
            return _unit(row)

    @_serialized
    def units(self, state: UnitState | None = None, phase: Phase | None = None) -> list[Unit]:
        """Units (with ``state``, of ``phase``), in creation order."""
        where, args = _where(("state", state), ("phase", phase))
        with self._reading("the units table"):
            rows = self._db.execute(f"SELECT * FROM units{where} ORDER BY id", args).fetchall()
        out = []
        for row in rows:
            with self._reading(f"unit {row['id']}"):
                out.append(_unit(row))
        return out

    @_serialized
    def fail_unit(self, unit_id: int, reason: str) -> bool:
        """Give up a pending unit (a version of it retired, say): its unplayed matches are no
        longer pending and none of its results is rated. ``False`` when it was not pending."""
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM units WHERE id=?", (unit_id,)).fetchone() is None:
                raise NotFound(f"no unit {unit_id}")
            cur = db.execute(
                "UPDATE units SET state='failed', reason=?, finished=? "
                "WHERE id=? AND state='pending'",
                (reason, _now(), unit_id),
            )
            return cur.rowcount == 1

    _MATCH_SQL = (
        "SELECT m.match_id, m.unit_id, u.phase, u.seed, m.rotation, m.seats, m.state, m.result, "
        "m.faults, m.record_path, m.finished FROM matches m JOIN units u ON u.id = m.unit_id"
    )

    def _matches(self, where: str, args: Sequence[object]) -> list[StoredMatch]:
        with self._reading("the matches table"):
            rows = self._db.execute(
                f"{self._MATCH_SQL} {where} ORDER BY m.unit_id, m.rotation", args
            ).fetchall()
        out = []
        for row in rows:
            with self._reading(f"match {row['match_id']!r}"):
                out.append(_match(row))
        return out

    @_serialized
    def match(self, match_id: str) -> StoredMatch:
        """One match by its id; :class:`NotFound` if there is none."""
        found = self._matches("WHERE m.match_id=?", (match_id,))
        if not found:
            raise NotFound(f"no match {match_id!r}")
        return found[0]

    @_serialized
    def unit_matches(self, unit_id: int) -> list[StoredMatch]:
        """A unit's matches, by rotation."""
        return self._matches("WHERE m.unit_id=?", (unit_id,))

    @_serialized
    def pending_matches(self) -> list[StoredMatch]:
        """The matches still to play, of units still pending, in creation order: after a restart
        exactly those whose results were not committed."""
        return self._matches("WHERE m.state='pending' AND u.state='pending'", ())

    @_serialized
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
            problem = _result_problem(len(json.loads(row["seats"])), stored, stored_faults)
            if problem:
                raise CompetitionStoreError(f"match {match_id!r}: {problem}")
            try:
                result_json = json.dumps(stored, sort_keys=True, allow_nan=False)
                faults_json = json.dumps(stored_faults, sort_keys=True, allow_nan=False)
            except (TypeError, ValueError) as err:
                raise CompetitionStoreError(f"match {match_id!r}: not JSON ({err})") from None
            now = _now()
            db.execute(
                "UPDATE matches SET state='done', result=?, faults=?, record_path=?, finished=? "
                "WHERE match_id=? AND state='pending'",
                (result_json, faults_json, record_path, now, match_id),
            )
            unit_id = int(row["unit_id"])
            left = db.execute(
                "SELECT 1 FROM matches WHERE unit_id=? AND state='pending' LIMIT 1", (unit_id,)
            ).fetchone()
            if left is None:
                db.execute("UPDATE units SET state='done', finished=? WHERE id=?", (now, unit_id))
            return True

    @_serialized
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

    @_serialized
    def rating_entries(self, phase: Phase) -> list[list[Entry]]:
        """What :func:`arena.ratings.fit_ratings` takes: for every match of the ``phase``'s done
        units, one :class:`Entry` per place (its versions by :attr:`Version.ref`, its rank), as
        a tournament's standings feed it. Only whole units count: the duplicate deal's luck
        cancels over all its rotations, not over some."""
        return self.rated_matches(phase)[0]

    @_serialized
    def rated_matches(self, phase: Phase) -> tuple[list[list[Entry]], list[int]]:
        """:meth:`rating_entries` and, read with them, each match's unit id: its cluster for
        ``fit_ratings(entries, clusters=units)`` (one deal in all its rotations)."""
        refs = {v.id: v.ref for v in self.versions()}
        entries: list[list[Entry]] = []
        units: list[int] = []
        for match in self._matches(
            "WHERE m.state='done' AND u.state='done' AND u.phase=?", (phase,)
        ):
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
        return entries, units

    @_serialized
    def record_ratings(self, phase: Phase, table: RatingTable) -> bool:
        """Keep ``table`` in the phase's rating history, unless it counts no more matches than
        the last one kept; whether it was kept."""
        rows = [[r.bot, round(r.elo, 1), round(r.plus_minus, 1)] for r in table.ratings]
        with self._transaction() as db:
            last = db.execute(
                "SELECT matches FROM rating_history WHERE phase=? ORDER BY id DESC LIMIT 1",
                (phase,),
            ).fetchone()
            if not rows or (last is not None and int(last[0]) >= table.matches):
                return False
            db.execute(
                "INSERT INTO rating_history (phase, at, matches, ratings) VALUES (?, ?, ?, ?)",
                (phase, _now(), table.matches, json.dumps(rows, allow_nan=False)),
            )
            return True

    @_serialized
    def rating_history(self, phase: Phase, points: int = 200) -> list[RatingPoint]:
        """The phase's rating history, oldest first, thinned to at most ``points`` fits (evenly
        spaced, the latest always kept)."""
        with self._reading("the rating history"):
            ids = [
                int(r[0])
                for r in self._db.execute(
                    "SELECT id FROM rating_history WHERE phase=? ORDER BY id", (phase,)
                )
            ]
            if len(ids) > points:
                step = len(ids) / points
                ids = sorted({ids[int(i * step)] for i in range(points - 1)} | {ids[-1]})
            out = []
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for r in self._db.execute(
                    f"SELECT at, matches, ratings FROM rating_history WHERE id IN ({marks}) "
                    "ORDER BY id",
                    chunk,
                ):
                    ratings = json.loads(r["ratings"])
                    out.append(
                        RatingPoint(
                            str(r["at"]),
                            int(r["matches"]),
                            tuple((str(a), float(b), float(c)) for a, b, c in ratings),
                        )
                    )
            return out

    @_serialized
    def match_counts(self, phase: Phase | None = None) -> dict[int, int]:
        """Done matches per version (every version, 0 for those yet to play)."""
        where = "" if phase is None else " AND u.phase=?"
        args = () if phase is None else (phase,)
        with self._reading("the matches table"):
            counts = {int(r[0]): 0 for r in self._db.execute("SELECT id FROM versions")}
            rows = self._db.execute(
                "SELECT uv.version_id, COUNT(DISTINCT m.id) FROM matches m "
                "JOIN units u ON u.id = m.unit_id "
                "JOIN unit_versions uv ON uv.unit_id = m.unit_id "
                f"WHERE m.state='done'{where} GROUP BY uv.version_id",
                args,
            )
            for version_id, n in rows:
                counts[int(version_id)] = int(n)
        return counts

    @_serialized
    def activity(self, phase: Phase = "ladder") -> dict[int, Activity]:
        """Per version with any unit of ``phase``: units chosen for, the last one, those still
        pending, matches done (what matchmaking's candidates need)."""
        with self._reading("the units table"):
            rows = self._db.execute(
                "SELECT uv.version_id, COUNT(DISTINCT u.id), MAX(u.id), "
                "COUNT(DISTINCT CASE WHEN u.state='pending' THEN u.id END) "
                "FROM unit_versions uv JOIN units u ON u.id = uv.unit_id "
                "WHERE u.phase=? GROUP BY uv.version_id",
                (phase,),
            ).fetchall()
        done = self.match_counts(phase)
        return {
            int(v): Activity(int(n), int(last), int(running), done.get(int(v), 0))
            for v, n, last, running in rows
        }

    # --- control ------------------------------------------------------------------------------

    @_serialized
    def ladder_state(self) -> LadderState:
        state = self._meta("ladder_state")
        if state not in LADDER_STATES:
            raise CompetitionStoreError(
                f"{self.path}: meta 'ladder_state' is damaged (got {state!r}); was the file "
                "changed outside the arena?"
            )
        return cast(LadderState, state)

    @_serialized
    def set_ladder_state(self, state: LadderState) -> bool:
        """Pause, resume or close the ladder; ``False`` when it already is in ``state``. Closing
        is for good (:class:`Conflict` after it) and stamps :meth:`closed_at`."""
        if state not in LADDER_STATES:
            raise CompetitionStoreError(
                f"ladder state must be one of {', '.join(LADDER_STATES)}; got {state!r}"
            )
        with self._transaction() as db:
            current = self.ladder_state()
            if current == state:
                return False
            if state not in LADDER_TRANSITIONS[current]:
                raise Conflict(f"the ladder is {current}; it cannot become {state}")
            self._set_meta(db, "ladder_state", state)
            if state == "closed":
                self._set_meta(db, "closed_at", _now())
            return True

    @_serialized
    def closed_at(self) -> str | None:
        """When the ladder was closed (UTC, ISO 8601), ``None`` while it is open."""
        with self._reading("meta 'closed_at'"):
            row = self._db.execute("SELECT value FROM meta WHERE key='closed_at'").fetchone()
        return None if row is None else str(row[0])

    @_serialized
    def units_per_minute(self) -> float:
        """The ladder's pace: units started per minute at most, 0 for no limit."""
        with self._reading("meta 'units_per_minute'"):
            return check_units_per_minute(float(self._meta("units_per_minute")))

    @_serialized
    def set_units_per_minute(self, value: float) -> None:
        try:
            pace = check_units_per_minute(value)
        except ValueError as err:
            raise CompetitionStoreError(f"units_per_minute: {err}") from None
        with self._transaction() as db:
            self._set_meta(db, "units_per_minute", repr(pace))

    @_serialized
    def secret_seed(self) -> int:
        """The competition's secret seed: every unit's deal derives from it one-way
        (``arena.host.matchmaking.unit_seed``). Never shown to a bot or an author."""
        with self._reading("meta 'secret_seed'"):
            seed = int(self._meta("secret_seed"))
            if not 0 <= seed < 2**63:
                raise ValueError(f"not a 63-bit seed: {seed}")
            return seed

    @_serialized
    def meta(self, key: str) -> str | None:
        """A stored meta value (``name``, ``created``, ``schema``, …)."""
        with self._reading(f"meta {key!r}"):
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # --- pages for the HTTP API (issue 40): new queries, kept together for porting ---------------

    @_serialized
    def finished_matches_page(
        self,
        version_id: int | None = None,
        phase: Phase | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[StoredMatch, UnitState]]:
        """The done matches :meth:`finished_matches` lists, newest first: ``limit`` of them after
        the ``offset`` newest, each with its unit's state (its record is public once that is no
        longer pending). One query, however long the list."""
        filters = [
            ("m.unit_id IN (SELECT unit_id FROM unit_versions WHERE version_id=?)", version_id),
            ("u.phase=?", phase),
        ]
        given = [(clause, value) for clause, value in filters if value is not None]
        where = " AND ".join(["m.state='done'", *(clause for clause, _ in given)])
        sql = (
            f"SELECT u.state AS unit_state, {self._MATCH_SQL.removeprefix('SELECT ')} "
            f"WHERE {where} "
            "ORDER BY m.unit_id DESC, m.rotation DESC LIMIT ? OFFSET ?"
        )
        with self._reading("the matches table"):
            rows = self._db.execute(sql, [*(v for _, v in given), limit, offset]).fetchall()
        out = []
        for row in rows:
            with self._reading(f"match {row['match_id']!r}"):
                out.append((_match(row), _unit_state(row["unit_state"])))
        return out

    @_serialized
    def version_refs(self, version_ids: Sequence[int]) -> dict[int, str]:
        """``BOT@NUMBER`` of each of ``version_ids`` that exists, in one query."""
        ids = json.dumps(sorted(set(version_ids)))
        with self._reading("the versions table"):
            rows = self._db.execute(
                "SELECT v.id, b.name, v.number FROM versions v JOIN bots b ON b.id = v.bot_id "
                "WHERE v.id IN (SELECT value FROM json_each(?))",
                (ids,),
            ).fetchall()
        return {int(r[0]): f"{r[1]}@{r[2]}" for r in rows}


def _unit_state(value: object) -> UnitState:
    state = str(value)
    if state not in UNIT_STATES:
        raise ValueError(f"unit state {state!r}")
    return cast(UnitState, state)


# --- helpers -----------------------------------------------------------------------------------


def _where(*filters: tuple[str, object | None]) -> tuple[str, list[object]]:
    """`` WHERE col=? AND …`` for the filters whose value is given, and those values (column
    names come from this module only, never from a caller)."""
    given = [(column, value) for column, value in filters if value is not None]
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{c}=?" for c, _ in given), [v for _, v in given]


def _now() -> str:
    """UTC, ISO 8601, to the millisecond (so rows made in one second still order)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _new_token(prefix: str) -> str:
    """A fresh secret token: 192 random bits, URL-safe, after its kind's prefix."""
    return prefix + secrets.token_urlsafe(24)


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise CompetitionStoreError(
            f"{what} must be 1-32 letters, digits, '_', '.' or '-' starting with a letter or "
            f"digit; got {name!r}"
        )


def _statements(script: str) -> list[str]:
    """The SQL statements of a migration, split where SQLite says one is complete (a trigger's
    body holds ``;`` of its own)."""
    statements: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                statements.append(pending.strip())
            pending = ""
    if pending.strip(" \t\r\n;"):
        raise ValueError(f"an incomplete SQL statement: {pending.strip()[:60]!r}")
    return statements


@functools.lru_cache(maxsize=8)
def _tables_of(migrations: tuple[str, ...]) -> frozenset[str]:
    """The tables ``migrations`` create, found by applying them to an empty in-memory database:
    what a file of that schema version must hold."""
    db = sqlite3.connect(":memory:")
    try:
        for migration in migrations:
            for statement in _statements(migration):
                db.execute(statement)
        rows = db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        )
        return frozenset(str(r[0]) for r in rows)
    finally:
        db.close()


def _lock(directory: Path) -> int:
    """The directory's lock (released by the kernel when the process ends, kill -9 included):
    two hosts on one directory would play and count the same matches twice."""
    path = directory / LOCK_NAME
    try:
        fd = try_lock(path)
    except OSError as err:
        raise CompetitionStoreError(
            f"{path}: cannot create the lock file ({err.strerror})"
        ) from None
    if fd is None:
        raise CompetitionStoreError(f"{directory}: another `arena host` is running on it")
    return fd


def _earlier_output(directory: Path) -> list[str]:
    """What an earlier competition left in ``directory``: ``["2 files in records/", …]``."""
    found = []
    for sub in (SNAPSHOTS_DIR, RECORDS_DIR, LOGS_DIR):
        try:
            n = sum(1 for _ in (directory / sub).iterdir())
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as err:
            raise CompetitionStoreError(
                f"{directory / sub}: cannot be read ({err.strerror})"
            ) from None
        if n:
            found.append(f"{n} file{'s' if n != 1 else ''} in {sub}/")
    return found


def _version(row: sqlite3.Row) -> Version:
    manifest = json.loads(row["manifest"])
    if not isinstance(manifest, dict):
        raise ValueError(f"version {row['id']}: the manifest is not a JSON object")
    kind, status = str(row["kind"]), str(row["status"])
    if kind not in VERSION_KINDS or status not in VERSION_STATUSES:
        raise ValueError(f"version {row['id']}: kind {kind!r}, status {status!r}")
    return Version(
        id=int(row["id"]),
        bot_id=int(row["bot_id"]),
        bot=str(row["bot"]),
        author_id=int(row["author_id"]),
        number=int(row["number"]),
        kind=cast(VersionKind, kind),
        sha256=None if row["sha256"] is None else str(row["sha256"]),
        manifest=manifest,
        status=cast(VersionStatus, status),
        reason=str(row["reason"]),
        log_path=None if row["log_path"] is None else str(row["log_path"]),
        created=str(row["created"]),
        updated=str(row["updated"]),
    )


def _int_list(text: str, what: str) -> tuple[int, ...]:
    values = json.loads(text)
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"{what} must be a list of version ids")
    return tuple(values)


def _unit(row: sqlite3.Row) -> Unit:
    phase, state = str(row["phase"]), str(row["state"])
    if phase not in PHASES or state not in UNIT_STATES:
        raise ValueError(f"unit {row['id']}: phase {phase!r}, state {state!r}")
    return Unit(
        id=int(row["id"]),
        phase=cast(Phase, phase),
        seed=int(row["seed"]),
        table=_int_list(row["table_versions"], "a table"),
        state=cast(UnitState, state),
        reason=str(row["reason"]),
        created=str(row["created"]),
        finished=None if row["finished"] is None else str(row["finished"]),
    )


def _match(row: sqlite3.Row) -> StoredMatch:
    seats = _int_list(row["seats"], "seats")
    result = None if row["result"] is None else json.loads(row["result"])
    faults = [] if row["faults"] is None else json.loads(row["faults"])
    problem = "" if result is None else _result_problem(len(seats), result, faults)
    if problem:
        raise ValueError(problem)
    state = str(row["state"])
    if state not in ("pending", "done"):
        raise ValueError(f"state {state!r}")
    return StoredMatch(
        match_id=str(row["match_id"]),
        unit_id=int(row["unit_id"]),
        phase=cast(Phase, str(row["phase"])),
        seed=int(row["seed"]),
        rotation=int(row["rotation"]),
        seats=seats,
        state=cast(MatchState, state),
        result=result,
        faults=faults,
        record_path=None if row["record_path"] is None else str(row["record_path"]),
        finished=None if row["finished"] is None else str(row["finished"]),
    )


def _result_problem(n_seats: int, result: object, faults: object) -> str:
    """What is wrong with a result and its faults for a match of ``n_seats`` seats, ``""`` when
    nothing: the shape the ratings and reports rely on."""
    if not isinstance(result, Mapping):
        return "the result must be a JSON object (Result.to_dict())"
    ranks = result.get("ranks")
    if not (
        isinstance(ranks, list)
        and len(ranks) == n_seats
        and all(isinstance(r, int) and not isinstance(r, bool) and r >= 1 for r in ranks)
    ):
        return f"the result's ranks must be {n_seats} whole numbers from 1; got {ranks!r}"
    if not (
        isinstance(faults, Sequence)
        and not isinstance(faults, str)
        and all(
            isinstance(f, Mapping) and isinstance(f.get("seat"), int) and 0 <= f["seat"] < n_seats
            for f in faults
        )
    ):
        return "faults must be a list of {seat, kind, detail} of the match's seats"
    return ""
