"""The stores' base (arena/sqlite.py), seen through the smallest store on it, the bot registry:
one policy for a database another process holds locked (wait, retry, then one line), one
timestamp form, and the schema-version scheme's refusals."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.registry import Registry, RegistryError, RegistryLocked
from arena.sqlite import (
    BUSY_TIMEOUT_S,
    LOCK_WAIT_ENV,
    lock_wait_seconds,
    now,
    reading,
    statements,
)
from arena.tournament.store import MIGRATIONS as RESULTS_MIGRATIONS
from arena.tournament.store import Store, StoreError
from tests.arena.host.test_host_store import garbage_last_page, killed_writer


@contextlib.contextmanager
def write_lock(db: Path) -> Iterator[sqlite3.Connection]:
    """Another process's write lock on ``db`` (``BEGIN IMMEDIATE`` in an ``sqlite3`` shell)."""
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        yield con
    finally:
        con.execute("ROLLBACK")
        con.close()


def test_a_write_waits_out_a_lock_and_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCK_WAIT_ENV, "30")
    db = tmp_path / "bots.sqlite"
    with Registry(db) as reg:
        done = threading.Event()
        failed: list[BaseException] = []

        def submit() -> None:
            try:
                reg.submit("late", "1", image="late:1")
            except BaseException as err:  # reported below
                failed.append(err)
            done.set()

        with write_lock(db) as lock:
            writer = threading.Thread(target=submit)
            writer.start()
            # A real wait, past SQLite's own busy timeout: the write must still be waiting (its
            # first attempt failed, it retries), not failed.
            assert not done.wait(BUSY_TIMEOUT_S + 0.5)
            assert not failed
            assert lock.execute("SELECT COUNT(*) FROM bots").fetchone()[0] == 0
        writer.join(30)
        assert done.is_set() and not failed, failed
        assert [b.ref for b in reg.bots()] == ["late@1"]


def test_a_lock_held_past_the_wait_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCK_WAIT_ENV, "0.5")
    db = tmp_path / "bots.sqlite"
    with Registry(db) as reg, write_lock(db), pytest.raises(RegistryError) as info:
        reg.submit("late", "1", image="late:1")
    line = str(info.value)
    assert "\n" not in line
    assert line == (
        f"{db}: the database is locked by another process (waited 0.5 s; {LOCK_WAIT_ENV} sets "
        "how long)"
    )
    with Registry(db) as reg:
        assert reg.bots() == []  # nothing half-written


@pytest.mark.parametrize("raw", ["soon", "-1", "nan", "inf"])
def test_a_malformed_lock_wait_is_one_line(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(LOCK_WAIT_ENV, raw)
    with pytest.raises(RegistryError, match=f"{LOCK_WAIT_ENV}=.*expected a number of seconds"):
        lock_wait_seconds(RegistryError)


@contextlib.contextmanager
def exclusive_lock(db: Path) -> Iterator[None]:
    """Another process's exclusive lock on ``db``: readers wait for it too (the file's journal
    switched back from WAL, as an ``sqlite3`` shell may leave it, then ``BEGIN EXCLUSIVE``)."""
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute("BEGIN EXCLUSIVE")
        yield
    finally:
        con.execute("ROLLBACK")
        con.close()


def test_a_lock_met_while_opening_or_reading_is_reported_as_a_lock(tmp_path: Path) -> None:
    db = tmp_path / "bots.sqlite"
    with Registry(db) as reg:
        reg.submit("mine", "1", image="mine:1")
    locked = f"{db}: the database is locked by another process (database is locked)"
    with exclusive_lock(db), pytest.raises(RegistryLocked) as info:
        Registry(db)
    assert str(info.value) == locked
    # A read met by the lock (a store opened before it was taken reads on through this).
    with (
        exclusive_lock(db),
        contextlib.closing(sqlite3.connect(db, timeout=0.1)) as con,
        pytest.raises(RegistryLocked) as info,
        reading(db, "the bots table", RegistryError, RegistryLocked),
    ):
        con.execute("SELECT * FROM bots").fetchall()
    assert str(info.value) == locked
    with Registry(db) as reg:  # nothing was harmed
        assert [b.ref for b in reg.bots()] == ["mine@1"]


def test_one_timestamp_form() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", now())


def test_a_newer_or_foreign_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "bots.sqlite"
    Registry(db).close()
    with contextlib.closing(sqlite3.connect(db)) as con, con:
        con.execute("UPDATE meta SET value='7' WHERE key='schema'")
    before = db.read_bytes()
    with pytest.raises(RegistryError, match=r"registry schema 7 is newer than this arena's \(1\)"):
        Registry(db)
    assert db.read_bytes() == before
    other = tmp_path / "photos.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as con, con:
        con.execute("CREATE TABLE photos (x)")
    with pytest.raises(RegistryError, match=r"not a bot registry \(its tables: photos\)"):
        Registry(other)


def _registry(db: Path) -> type[Exception]:
    with Registry(db) as reg:
        reg.submit("alpha", "1", image="alpha:1")
    return RegistryError


def _results(db: Path) -> type[Exception]:
    """A tournament's results file with its tables (as ``arena tournament`` leaves one)."""
    con = sqlite3.connect(db)
    with con:
        for migration in RESULTS_MIGRATIONS:
            for statement in statements(migration):
                con.execute(statement)
        schema = str(len(RESULTS_MIGRATIONS))
        con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (schema,))
    con.close()
    Store(db).close()  # opened by the arena: in WAL mode from now on
    return StoreError


@pytest.mark.parametrize("make", [_registry, _results], ids=["registry", "results"])
def test_a_damaged_file_with_a_wal_is_refused_as_found(
    tmp_path: Path, make: Callable[[Path], type[Exception]]
) -> None:
    db = tmp_path / "store.sqlite"
    refusal = make(db)
    opening = Registry if make is _registry else Store
    killed_writer(db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('note', 'in the WAL')")
    opening(db).close()  # whole: it opens, with what its WAL holds
    killed_writer(db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('note', 'again')")
    garbage_last_page(db)
    files = [db, db.with_name(f"{db.name}-wal"), db.with_name(f"{db.name}-shm")]
    before = [f.read_bytes() for f in files]
    with pytest.raises(refusal, match=r"is damaged"):
        opening(db)
    assert [f.read_bytes() for f in files] == before  # no checkpoint, no WAL replayed or deleted
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".check")] == []
