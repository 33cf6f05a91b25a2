"""``arena.sqlite``'s copy of a database while another connection writes it, and the checks of
such a copy, on real SQLite files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.sqlite import LOCK_WAIT_ENV, backup_database, quick_check, read_rows


def _database(path: Path, journal: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA journal_mode={journal}")
    db.execute("CREATE TABLE t (x INTEGER)")
    db.execute("INSERT INTO t VALUES (1)")
    return db


def test_a_copy_is_the_database_at_one_moment_while_a_writer_holds_a_transaction(
    tmp_path: Path,
) -> None:
    writer = _database(tmp_path / "live.sqlite", "wal")
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO t VALUES (2)")  # not committed: not in the copy
        backup_database(tmp_path / "live.sqlite", tmp_path / "copy.sqlite", ArenaError)
        writer.execute("COMMIT")
    finally:
        writer.close()
    copy = tmp_path / "copy.sqlite"
    assert read_rows(copy, "SELECT x FROM t", ArenaError) == [(1,)]
    assert quick_check(copy) is None
    assert copy.stat().st_mode & 0o777 == 0o600
    assert not copy.with_name("copy.sqlite-wal").exists()  # one file


def test_a_lock_held_past_the_wait_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCK_WAIT_ENV, "0.2")
    holder = _database(tmp_path / "db.sqlite", "delete")
    try:
        holder.execute("BEGIN EXCLUSIVE")  # no reader gets in
        with pytest.raises(ArenaError, match=r"locked by another process \(waited 0\.2 s"):
            backup_database(tmp_path / "db.sqlite", tmp_path / "copy.sqlite", ArenaError)
    finally:
        holder.close()


def test_quick_check_names_what_is_wrong(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database, " * 512)
    assert "not a database" in (quick_check(junk) or "")
    with pytest.raises(ArenaError, match="cannot be read"):
        read_rows(junk, "SELECT 1 FROM t", ArenaError)
