"""What the arena's SQLite stores (a tournament's results, a competition's database) share: a write
transaction that is all or nothing and ends in one line whatever SQLite says, and reads that turn
a damaged file into one line naming what was being read."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6

#: What a damaged file raises while read: bad pages, a dropped table, a value of the wrong type.
DAMAGE = (sqlite3.DatabaseError, ValueError, TypeError, KeyError, IndexError)


def is_locked(err: sqlite3.Error) -> bool:
    """Whether ``err`` means another connection holds the lock (past the busy timeout)."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "locked" in str(err)


@contextmanager
def write_transaction(
    db: sqlite3.Connection,
    locked: Callable[[sqlite3.Error], Exception],
    failed: Callable[[sqlite3.Error], Exception],
) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception. A lock held past the busy
    timeout raises ``locked(err)``, any other SQLite failure ``failed(err)`` (its cause the SQLite
    error); the caller's own exceptions pass through."""
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
        raise (locked(err) if is_locked(err) else failed(err)) from err


@contextmanager
def reading(path: Path, what: str, error: Callable[[str], Exception]) -> Iterator[None]:
    """Turn a damaged file met while reading ``what`` into ``error(one line)``."""
    try:
        yield
    except DAMAGE as err:
        raise error(
            f"{path}: {what} is damaged ({err}); was the file changed outside the arena?"
        ) from None
