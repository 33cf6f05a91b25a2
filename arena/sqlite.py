"""What every SQLite store of the arena shares (a tournament's results, a competition's database,
the bot registry): the only module that speaks to ``sqlite3``.

- :class:`SQLiteStore`: one connection (autocommit, ``check_same_thread=False``) used by one
  thread at a time under the store's lock (:func:`serialized`); opening checks the whole file
  (``quick_check``, the tables its schema version must hold) before anything is written (on
  a view that changes nothing, so a refused file keeps its WAL), then
  switches to WAL and applies the missing :class:`Migrations`; write transactions are all or
  nothing, reads of a damaged file one line naming what was read.
- One schema-version scheme: a store's schema is an append-only list of migrations, and ``meta``
  ``schema`` is how many the file has applied; a file newer than the code is refused.
- One policy for a database another process holds locked: each attempt waits
  :data:`BUSY_TIMEOUT_S` inside SQLite, a caller that must not give up soon retries with backoff
  for up to :func:`lock_wait_seconds` (:func:`patiently`, :func:`patiently_async`), then stops
  in one line.
- The lock file a running writer holds beside its database, and the refusal to start afresh
  beside an earlier run's output whose database was lost.
- One timestamp form: :func:`now`.
- Copies of a database while its writer runs (:func:`backup_database`, SQLite's online backup)
  and the checks of such a copy (:func:`quick_check`, :func:`read_rows`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import math
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeVar

import trio

from arena.errors import ArenaError

P = ParamSpec("P")
T = TypeVar("T")
S = TypeVar("S", bound="SQLiteStore")

#: What a damaged file raises while read: bad pages, a dropped table, a value of the wrong type.
DAMAGE = (sqlite3.DatabaseError, ValueError, TypeError, KeyError, IndexError)
#: A row read back: by column name or index.
Row = sqlite3.Row
#: An open connection inside a transaction (what :meth:`SQLiteStore._transaction` yields).
Connection = sqlite3.Connection

#: One attempt to write waits this long (with SQLite's own backoff) for a lock another process
#: holds before the store's ``LOCKED`` error; :func:`patiently` then retries.
BUSY_TIMEOUT_S = 1.0
#: Environment variable: how many seconds a writer that must not give up soon (a tournament's
#: runner, the ladder, ``arena submit``) waits for another process's lock before one line.
LOCK_WAIT_ENV = "ARENA_DB_LOCK_TIMEOUT"
DEFAULT_LOCK_WAIT_S = 60.0
#: Seconds between two attempts while another process holds the lock: the first pause, doubled
#: after each attempt up to the last.
RETRY_FIRST_S = 0.05
RETRY_MAX_S = 1.0

_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6


def now() -> str:
    """The stores' timestamps: UTC, ISO 8601, to the millisecond (rows made in one second still
    order), e.g. ``2026-01-02T03:04:05.678Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def is_locked(err: sqlite3.Error) -> bool:
    """Whether ``err`` means another connection holds the lock (past the busy timeout)."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "locked" in str(err)


@contextmanager
def reading(
    path: Path,
    what: str,
    error: Callable[[str], Exception],
    locked: Callable[[str], Exception] | None = None,
) -> Iterator[None]:
    """Turn a damaged file met while reading ``what`` into ``error(one line)``, and a lock
    another process holds past the busy timeout into ``locked(one line)`` (``error`` without
    one): a locked file is not a damaged one."""
    try:
        yield
    except DAMAGE as err:
        if isinstance(err, sqlite3.Error) and is_locked(err):
            raise (locked or error)(held_line(path, err)) from None
        raise error(
            f"{path}: {what} is damaged ({err}); was the file changed outside the arena?"
        ) from None


def held_line(path: Path, err: sqlite3.Error) -> str:
    """The one line for a lock another process held past one attempt's busy timeout."""
    return f"{path}: the database is locked by another process ({err})"


# --- a locked database ---------------------------------------------------------------------------


def lock_wait_seconds(error: Callable[[str], Exception] = ArenaError) -> float:
    """How long a patient writer waits for another process's lock: :data:`LOCK_WAIT_ENV` or the
    default; a malformed value is ``error(one line)``."""
    raw = os.environ.get(LOCK_WAIT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_LOCK_WAIT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise error(f"{LOCK_WAIT_ENV}={raw!r}: expected a number of seconds (0 or more)")
    return seconds


def locked_line(path: Path, waited: float) -> str:
    """The start of the one line a patient writer stops with."""
    return (
        f"{path}: the database is locked by another process (waited {waited:g} s; "
        f"{LOCK_WAIT_ENV} sets how long)"
    )


def _pauses(wait_s: float, clock: Callable[[], float]) -> Iterator[float]:
    """The pauses between attempts, with backoff, until ``wait_s`` has passed since this call
    (before the first attempt)."""
    start = clock()
    return _backoff(wait_s, clock, start)


def _backoff(wait_s: float, clock: Callable[[], float], start: float) -> Iterator[float]:
    pause = RETRY_FIRST_S
    while (waited := clock() - start) < wait_s:
        yield min(pause, wait_s - waited)
        pause = min(2 * pause, RETRY_MAX_S)


def patiently(
    write: Callable[[], T],
    wait_s: float,
    locked: type[Exception],
    give_up: Callable[[], Exception],
) -> T:
    """``write()``, retried while it raises ``locked`` (another process holds the lock) for up
    to ``wait_s`` seconds; then ``give_up()`` is raised (one line)."""
    pauses = _pauses(wait_s, time.monotonic)
    while True:
        try:
            return write()
        except locked:
            pause = next(pauses, None)
            if pause is None:
                raise give_up() from None
        time.sleep(pause)


async def patiently_async(
    write: Callable[[], T],
    wait_s: float,
    locked: type[Exception],
    give_up: Callable[[], Exception],
    waiting: Callable[[bool], None] = lambda _: None,
) -> T:
    """:func:`patiently` from a trio task: ``write()`` in a worker thread, the pauses on trio's
    clock (the loop goes on meanwhile, and a cancellation ends the wait).
    ``waiting(True)`` when it starts waiting, ``waiting(False)`` when the lock is gone."""
    pauses = _pauses(wait_s, trio.current_time)
    waited = False
    while True:
        try:
            result = await trio.to_thread.run_sync(write)
        except locked:
            pause = next(pauses, None)
            if pause is None:
                raise give_up() from None
            if not waited:
                waited = True
                waiting(True)
            await trio.sleep(pause)
            continue
        if waited:
            waiting(False)
        return result


# --- the lock file and earlier output ------------------------------------------------------------


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


def take_lock(path: Path, busy: str, error: Callable[[str], Exception]) -> int:
    """The lock file ``path`` (:func:`try_lock`), or ``error(busy)`` when another process holds
    it: two writers of one database would play and count the same matches twice."""
    try:
        fd = try_lock(path)
    except OSError as err:
        raise error(f"{path}: cannot create the lock file ({err.strerror})") from None
    if fd is None:
        raise error(busy)
    return fd


def earlier_output(
    directory: Path, subdirs: Sequence[str], error: Callable[[str], Exception]
) -> list[str]:
    """What an earlier run left in ``directory``'s ``subdirs``: ``["2 files in records/", …]``,
    empty when nothing."""
    found = []
    for sub in subdirs:
        try:
            n = sum(1 for _ in (directory / sub).iterdir())
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as err:
            raise error(f"{directory / sub}: cannot be read ({err.strerror})") from None
        if n:
            found.append(f"{n} file{'s' if n != 1 else ''} in {sub}/")
    return found


def file_size(path: Path, error: Callable[[str], Exception]) -> int | None:
    """``path``'s size, ``None`` when there is no such file."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None
    except OSError as err:
        raise error(f"{path}: cannot be read ({err.strerror})") from None


def peek(path: Path, sql: str) -> tuple[Any, ...] | None:
    """The first row of ``sql`` in the database ``path``, read without writing anything beside
    it; ``None`` when there is none to read (no file, no table, not a database)."""
    # ``immutable`` reads the file alone and creates no journal files; with a WAL journal left
    # by a killed writer the row may only be in the journal, which ``mode=ro`` reads.
    mode = "mode=ro" if path.with_name(f"{path.name}-wal").exists() else "immutable=1"
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
        try:
            row = con.execute(sql).fetchone()
        finally:
            con.close()
    except (sqlite3.Error, OSError):
        return None
    return None if row is None else tuple(row)


# --- copies of a database while its writer runs ---------------------------------------------------


class _Busy(Exception):
    """One backup attempt met another process's lock."""


def backup_database(source: Path, target: Path, error: Callable[[str], Exception]) -> None:
    """Copy the database ``source`` to the new file ``target`` (mode 0600) through SQLite's
    online backup, while another process may be writing it: all pages in one step, so one read
    transaction (a WAL reader never blocks the writer) and the copy is the database at one
    moment. The copy is a single file in rollback-journal mode (the host switches it back to WAL
    when it opens it). A lock held past one attempt is retried as :func:`patiently` does for up
    to :func:`lock_wait_seconds`; any other failure is ``error(one line)``."""
    wait_s = lock_wait_seconds(error)

    def attempt() -> None:
        target.unlink(missing_ok=True)
        try:
            # Owner only from its first byte: it holds token hashes and the secret seed.
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError as err:
            raise error(f"{target}: cannot be created ({err.strerror})") from None
        try:
            src = sqlite3.connect(
                f"{source.absolute().as_uri()}?mode=ro",
                uri=True,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
            )
            try:
                # The read transaction first, under the busy timeout: the backup's own steps
                # would wait for a lock for ever (Python retries them while SQLite is busy).
                src.execute("BEGIN")
                src.execute("SELECT count(*) FROM sqlite_master").fetchone()
                dst = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S)
                try:
                    src.backup(dst)
                    dst.execute("PRAGMA journal_mode=DELETE")
                finally:
                    dst.close()
            finally:
                src.close()
        except sqlite3.Error as err:
            if is_locked(err):
                raise _Busy() from None
            raise error(f"{source}: cannot be backed up ({err})") from None

    patiently(attempt, wait_s, _Busy, lambda: error(locked_line(source, wait_s)))


def quick_check(path: Path) -> str | None:
    """What SQLite's ``quick_check`` finds wrong with the database file ``path`` (read as it is,
    nothing written beside it), in one line; ``None`` when it is sound."""
    try:
        con = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)
        try:
            found = [str(row[0]) for row in con.execute("PRAGMA quick_check").fetchall()]
        finally:
            con.close()
    except sqlite3.Error as err:
        return str(err)
    problems = [p for p in found if p != "ok"]
    return "; ".join(problems[:3]) if problems or not found else None


def read_rows(path: Path, sql: str, error: Callable[[str], Exception]) -> list[tuple[Any, ...]]:
    """Every row of ``sql`` in the database file ``path``, read as it is (a copy nobody writes);
    a file that cannot be read is ``error(one line)``."""
    try:
        con = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)
        try:
            return [tuple(row) for row in con.execute(sql).fetchall()]
        finally:
            con.close()
    except sqlite3.Error as err:
        raise error(f"{path}: cannot be read ({err})") from None


# --- migrations ----------------------------------------------------------------------------------


def statements(script: str) -> list[str]:
    """The SQL statements of a migration, split where SQLite says one is complete (a trigger's
    body holds ``;`` of its own)."""
    found: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                found.append(pending.strip())
            pending = ""
    if pending.strip(" \t\r\n;"):
        raise ValueError(f"an incomplete SQL statement: {pending.strip()[:60]!r}")
    return found


@functools.lru_cache(maxsize=16)
def tables_of(migrations: tuple[str, ...]) -> frozenset[str]:
    """The tables ``migrations`` create, found by applying them to an empty in-memory database:
    what a file of that schema version must hold."""
    db = sqlite3.connect(":memory:")
    try:
        for migration in migrations:
            for statement in statements(migration):
                db.execute(statement)
        return frozenset(_table_names(db))
    finally:
        db.close()


def _table_names(db: sqlite3.Connection) -> set[str]:
    rows = db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
    )
    return {str(r[0]) for r in rows}


# --- the store -----------------------------------------------------------------------------------


def serialized(method: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[S, P], T]:
    """Run ``method`` holding the store's lock: one thread at a time uses the connection."""

    def locked(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with self._mutex:
            return method(self, *args, **kwargs)

    functools.update_wrapper(locked, method)
    return locked


@dataclass(frozen=True, slots=True)
class Opened:
    """What opening found: the file's schema version (0: a new file)."""

    version: int


class SQLiteStore:
    """One SQLite file: its connection, lock, checks, migrations and transactions.

    A store sets the class attributes below and calls :meth:`_open`; its own methods hold the
    tables and queries, reads under :meth:`_reading` (several that must agree in one
    :meth:`_snapshot`) and writes in :meth:`_transaction`, each public one :func:`serialized`.
    """

    #: The store's one-line error, and its subclass for a lock held past the busy timeout.
    ERROR: ClassVar[type[ArenaError]] = ArenaError
    LOCKED: ClassVar[type[ArenaError]] = ArenaError
    #: What the file is, in messages: ``not a usable {FILE}``; ``{SCHEMA} schema 3``.
    FILE: ClassVar[str] = "database"
    SCHEMA: ClassVar[str] = "database"
    #: The connection, from :meth:`_open` on.
    _db: sqlite3.Connection

    def __init__(self, path: Path) -> None:
        #: The database file.
        self.path = path
        # Reentrant: a serialized method may call another.
        self._mutex = threading.RLock()
        self._lock_fd: int | None = None

    # --- opening --------------------------------------------------------------------------------

    def _open(
        self,
        migrations: Sequence[str],
        *,
        read_only: bool = False,
        create_schema: bool = True,
        unversioned: int | None = None,
        before_writing: Callable[[Opened], None] = lambda opened: None,
    ) -> Opened:
        """Connect, check the whole file before anything is written, then (unless ``read_only``)
        switch to WAL and apply the migrations it lacks; to a new file only with
        ``create_schema`` (else the store creates it with its first data, :meth:`_apply`).
        ``unversioned``: the version of a file whose ``meta`` holds no ``schema`` (else that is
        damage). ``before_writing(opened)``: the store's own checks, while the file is as found.

        Every store's file is first checked on a view that changes nothing
        (:meth:`_check_as_found`): a refused file keeps its WAL unreplayed, as found, for
        whoever repairs it."""
        if not read_only and self.path.exists():
            self._check_as_found(tuple(migrations), unversioned, before_writing)
        if read_only:
            self._db = self._connect(f"{self.path.absolute().as_uri()}?mode=ro")
        else:
            self._db = self._connect(str(self.path), uri=False)
        try:
            opened = self._check(tuple(migrations), unversioned)
            before_writing(opened)
            if not read_only:
                self._use_wal()
                if opened.version or create_schema:
                    for number in range(opened.version + 1, len(migrations) + 1):
                        self._migrate(migrations, number)
        except BaseException:
            self._db.close()
            raise
        return opened

    def _connect(self, where: str, uri: bool = True) -> sqlite3.Connection:
        """A connection to ``where`` (a ``file:`` URI, or without ``uri`` a path), rows by
        column name."""
        try:
            db = sqlite3.connect(
                where,
                uri=uri,
                isolation_level=None,  # transactions are explicit: BEGIN IMMEDIATE … COMMIT
                timeout=BUSY_TIMEOUT_S,
                check_same_thread=False,  # any thread, one at a time (serialized)
            )
        except sqlite3.Error as err:
            raise self.ERROR(f"{self.path}: not a usable {self.FILE} ({err})") from None
        db.row_factory = sqlite3.Row
        return db

    def _check_as_found(
        self,
        migrations: tuple[str, ...],
        unversioned: int | None,
        before_writing: Callable[[Opened], None],
    ) -> None:
        """:meth:`_check` and ``before_writing`` on :meth:`_as_found`'s view. A store that holds
        no lock file (the registry: several processes write it) may be copied while another
        process checkpoints, a file and WAL of two moments: damage is confirmed on a second copy
        before the file is refused."""
        tries = 1 if self._lock_fd is not None else 2
        for attempt in range(1, tries + 1):
            try:
                with self._as_found() as view:
                    self._db = view
                    before_writing(self._check(migrations, unversioned))
                return
            except self.LOCKED:
                raise
            except self.ERROR:
                if attempt == tries:
                    raise

    @contextmanager
    def _as_found(self) -> Iterator[sqlite3.Connection]:
        """A connection to the file as found that writes nothing beside it: the file alone
        (``immutable``) without a WAL; with one, a private copy of both (a reader of the WAL,
        even read-only, writes its ``-shm``; a writer's last close checkpoints and deletes it)."""
        wal = self.path.with_name(f"{self.path.name}-wal")
        if not wal.exists():
            db = self._connect(f"{self.path.absolute().as_uri()}?immutable=1")
            try:
                yield db
            finally:
                db.close()
            return
        try:
            aside = tempfile.TemporaryDirectory(prefix=".check-", dir=self.path.parent)
        except OSError as err:
            raise self.ERROR(f"{self.path.parent}: cannot be written ({err.strerror})") from None
        with aside as tmp:
            copy = Path(tmp) / self.path.name
            try:
                shutil.copyfile(self.path, copy)
                shutil.copyfile(wal, copy.with_name(wal.name))
            except OSError as err:
                raise self.ERROR(f"{self.path}: cannot be read ({err.strerror})") from None
            db = self._connect(str(copy), uri=False)
            try:
                yield db
            finally:
                db.close()

    def _check(self, migrations: tuple[str, ...], unversioned: int | None) -> Opened:
        """The file is whole (``quick_check`` reads every page), its schema version is one this
        code knows, and it holds every table of that version."""
        db = self._db
        try:
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as err:
            if is_locked(err):
                raise self.LOCKED(held_line(self.path, err)) from None
            if "malformed" in str(err):  # a damaged page of the schema itself
                raise self.ERROR(
                    f"{self.path}: the database is damaged ({err}); was the file changed "
                    "outside the arena?"
                ) from None
            raise self.ERROR(f"{self.path}: not a usable {self.FILE} ({err})") from None
        with self._reading("the database"):
            problems = [str(r[0]) for r in db.execute("PRAGMA quick_check(1)")]
            if problems != ["ok"]:
                # One line: SQLite's report may span several ("*** in database main ***\n…").
                words = " ".join(problems[0].replace("*** in database main ***", "").split())
                raise ValueError(words or "SQLite's quick_check failed")
            tables = frozenset(_table_names(db))
        version = self._schema_version(migrations, tables, unversioned)
        if version > len(migrations):
            raise self.ERROR(
                f"{self.path}: {self.SCHEMA} schema {version} is newer than this arena's "
                f"({len(migrations)}); run a newer arena"
            )
        missing = sorted(tables_of(migrations[:version]) - tables)
        if missing:
            raise self.ERROR(
                f"{self.path}: the {missing[0]} table is damaged (no such table: {missing[0]}); "
                "was the file changed outside the arena?"
            )
        return Opened(version)

    def _schema_version(
        self, migrations: tuple[str, ...], tables: frozenset[str], unversioned: int | None
    ) -> int:
        """The number of migrations the file has applied (0: a new, empty file)."""
        if not tables:
            return 0
        if "meta" not in tables:
            if tables & tables_of(migrations):
                raise self.ERROR(
                    f"{self.path}: the meta table is damaged (no such table: meta); was the "
                    "file changed outside the arena?"
                )
            raise self.ERROR(
                f"{self.path}: not a {self.FILE} (its tables: {', '.join(sorted(tables))})"
            )
        with self._reading("the schema version"):
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                if unversioned is not None:
                    return unversioned
                raise ValueError("no schema version stored")
            version = int(row[0])
            if version < 1:
                raise ValueError(f"schema {version}")
            return version

    def _use_wal(self) -> None:
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable against a killed process (not against power loss) and fast.
            self._db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as err:
            if is_locked(err):
                raise self.LOCKED(held_line(self.path, err)) from None
            raise self.ERROR(f"{self.path}: cannot use the database ({err})") from None

    def _migrate(self, migrations: Sequence[str], number: int) -> None:
        """Apply migration ``number`` (from 1) and record it, in one transaction. Foreign keys
        are off meanwhile (a migration may rebuild a table others refer to: SQLite's documented
        way to change a constraint) and checked, all of them, before the commit."""
        self._db.execute("PRAGMA foreign_keys=OFF")  # (ignored inside a transaction; none is open)
        try:
            with self._transaction() as db:
                self._apply(db, migrations, number - 1, number)
                broken = db.execute("PRAGMA foreign_key_check").fetchone()
                if broken is not None:
                    raise ValueError(f"a row of {broken[0]} refers to a missing {broken[2]} row")
        except self.LOCKED:
            raise
        except (self.ERROR, ValueError) as err:
            # Rolled back: the file stays at the schema before this one.
            raise self.ERROR(
                f"{self.path}: cannot migrate to schema {number} ({err.__cause__ or err})"
            ) from None
        finally:
            self._db.execute("PRAGMA foreign_keys=ON")

    @staticmethod
    def _apply(db: sqlite3.Connection, migrations: Sequence[str], start: int, end: int) -> None:
        """Inside a caller's transaction: migrations ``start+1 … end`` and the version ``end``."""
        for migration in migrations[start:end]:
            for statement in statements(migration):
                db.execute(statement)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(end),))

    # --- using it -------------------------------------------------------------------------------

    @contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """A damaged file (edited by hand, a table dropped, a row cut) met while reading ``what``
        is one line naming it, not a traceback from deep inside a report."""
        with reading(self.path, what, self.ERROR, self.LOCKED):
            yield

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, all or nothing (rolled back on any exception):
        ``LOCKED`` when another process holds the lock past the busy timeout, ``ERROR`` for any
        other SQLite failure (disk full, file damaged); one line either way. The store's own
        refusals pass through."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise
        except sqlite3.Error as err:
            if is_locked(err):
                raise self.LOCKED(held_line(self.path, err)) from err
            raise self.ERROR(f"{self.path}: cannot write ({err})") from err

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Several reads that see one state of the file: a read transaction (under WAL never
        blocked by a writer, nor blocking one). Inside another transaction, that one."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("COMMIT")

    def _rows(
        self,
        table: str,
        sql: str,
        args: Sequence[object],
        name: Callable[[sqlite3.Row], str],
        parse: Callable[[sqlite3.Row], T],
    ) -> list[T]:
        """The rows of ``sql`` parsed one by one: a damaged one is one line naming it
        (``name(row)``, ``match 'x'``), as is a damaged ``table``."""
        with self._reading(table):
            rows = self._db.execute(sql, args).fetchall()
        out = []
        for row in rows:
            with self._reading(name(row)):
                out.append(parse(row))
        return out

    def _refuse_other_config(
        self, stored: Mapping[str, Any], identity: Mapping[str, Any], holds: str, advice: str
    ) -> None:
        """A file made for another config is refused, naming the keys that differ: results are
        never mixed."""
        differs = sorted(
            k for k in stored.keys() | identity.keys() if stored.get(k) != identity.get(k)
        )
        if differs:
            raise self.ERROR(
                f"{holds} with a different config (differs in: {', '.join(differs)}); {advice}"
            )

    def _tables(self) -> set[str]:
        return _table_names(self._db)

    @serialized
    def meta(self, key: str) -> str | None:
        """A stored ``meta`` value (``schema``, ``created``, …)."""
        return self._meta_value(key)

    def _meta_value(self, key: str) -> str | None:
        with self._reading(f"meta {key!r}"):
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @serialized
    def close(self) -> None:
        """Close the connection and release the lock file, if held (safe to call twice)."""
        self._db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
