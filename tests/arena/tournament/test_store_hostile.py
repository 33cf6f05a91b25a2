"""A results file that is damaged, missing or locked by another process, met by `arena
tournament`: one line (`arena: error: ...`), exit status 2, and nothing lost or overwritten — the
records of an earlier run are never replaced, and a result the runner could not store for a
while is stored once the lock goes, or left pending so that a rerun plays it.

test_store_damage.py covers damaged rows and tables read by the reports; here are damages met
when the file is opened (a garbage page, a dropped `meta` or `matches` table, a stored config of
the wrong types), a results file emptied or deleted beside its records, and a write lock held by
another process while the tournament runs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.layout import LOGS_DIR, RECORDS_DIR
from arena.tournament.store import DB_NAME, LOCK_WAIT_ENV
from tests.arena.run_arena import TINY_TENNIS, arena_error, played_tournament
from tests.waiting import wait_until

#: Every test here runs `arena tournament` (and plays tournaments): the slow tier.
pytestmark = pytest.mark.slow

#: The command as a user runs it, from the test's directory (relative paths in its messages).
TOURNAMENT = ("tournament", "t.toml", "--out", "out", "--quiet", "--no-sandbox")

#: Without a seed a new tournament would draw a new secret one: new matches, new records.
UNSEEDED = TINY_TENNIS.replace("seed = 11\n", "")
assert UNSEEDED != TINY_TENNIS


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament (no seed in its config) with ``out`` beside its ``t.toml``."""
    return played_tournament(tmp_path_factory.mktemp("hostile"), UNSEEDED)


def copy_of(finished: Path, tmp_path: Path) -> Path:
    shutil.copytree(finished / "out", tmp_path / "out")
    shutil.copy(finished / "t.toml", tmp_path / "t.toml")
    return tmp_path / "out"


def snapshot(out: Path) -> dict[str, bytes]:
    """Every file of an output directory that holds something: not the lock file (only ever
    locked), nor SQLite's shared-memory index or an empty WAL, which a reader of a WAL file
    may leave behind (`arena ratings` always did)."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file()
        and p.name not in (DB_NAME + ".lock", DB_NAME + "-shm")
        and not (p.name == DB_NAME + "-wal" and p.stat().st_size == 0)
    }


def edit(db: Path, sql: str) -> None:
    with contextlib.closing(sqlite3.connect(db)) as con, con:
        con.execute(sql)
    # The last connection's close checkpoints the WAL into the file and removes it.
    assert not db.with_name(DB_NAME + "-wal").exists()


def garbage_last_page(db: Path) -> None:
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(size - 4096)
        f.write(b"\xde\xad\xbe\xef" * 1024)


def set_players(value: object) -> str:
    """SQL storing ``value`` (JSON) as the stored config's ``players``."""
    text = json.dumps(value).replace("'", "''")
    return (
        f"UPDATE meta SET value = json_set(value, '$.players', json('{text}')) WHERE key='config'"
    )


#: name: (damage done to results.sqlite, words the one line must hold)
DAMAGES = {
    "garbage-last-page": (garbage_last_page, "is damaged"),
    "meta-dropped": (lambda db: edit(db, "DROP TABLE meta"), "the meta table is damaged"),
    "matches-dropped": (lambda db: edit(db, "DROP TABLE matches"), "the matches table is damaged"),
    "players-a-word": (lambda db: edit(db, set_players("two")), "the stored config is damaged"),
    "players-null": (lambda db: edit(db, set_players(None)), "the stored config is damaged"),
    "players-a-list": (lambda db: edit(db, set_players([2])), "the stored config is damaged"),
    "players-a-fraction": (lambda db: edit(db, set_players(2.5)), "the stored config is damaged"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_results_file_stops_a_resume_in_one_line(
    finished: Path, tmp_path: Path, damage: str
) -> None:
    out = copy_of(finished, tmp_path)
    spoil, words = DAMAGES[damage]
    spoil(out / DB_NAME)
    before = snapshot(out)
    line = arena_error(*TOURNAMENT, cwd=tmp_path)
    assert line.startswith(f"arena: error: {Path('out') / DB_NAME}: "), line
    assert words in line, line
    assert snapshot(out) == before  # neither the file nor any record repaired or replaced


@pytest.mark.parametrize("damage", [d for d in DAMAGES if d.startswith("players")])
def test_ratings_on_a_stored_config_of_the_wrong_types_is_one_line(
    finished: Path, tmp_path: Path, damage: str
) -> None:
    out = copy_of(finished, tmp_path)
    spoil, words = DAMAGES[damage]
    spoil(out / DB_NAME)
    before = snapshot(out)
    line = arena_error("ratings", str(out))
    assert line.startswith(f"arena: error: {out / DB_NAME}: {words} (players must be"), line
    assert snapshot(out) == before


@pytest.mark.parametrize("how", ["deleted", "emptied"])
def test_records_without_their_results_file_are_never_overwritten(
    finished: Path, tmp_path: Path, how: str
) -> None:
    out = copy_of(finished, tmp_path)
    db = out / DB_NAME
    if how == "deleted":
        db.unlink()
    else:
        db.write_bytes(b"")
    before = snapshot(out)
    assert any(name.startswith(RECORDS_DIR + "/") for name in before)
    line = arena_error(*TOURNAMENT, cwd=tmp_path)
    assert line.startswith("arena: error: out: "), line
    assert f"{RECORDS_DIR}/" in line and DB_NAME in line, line
    assert "restore" in line and "--out" in line, line
    assert snapshot(out) == before  # no new tournament, no new seed, no record replaced
    assert db.exists() == (how == "emptied")
    assert not db.with_name(DB_NAME + "-wal").exists()


# --- another process holding the write lock -------------------------------------------------

#: Six short matches one at a time: the lock is taken while the first is played.
SIX = TINY_TENNIS.replace("matches_per_pairing = 2", "matches_per_pairing = 6").replace(
    "duplicate = false\n", "duplicate = false\nconcurrency = 1\n"
)
assert "concurrency = 1" in SIX and "matches_per_pairing = 6" in SIX


def read_db(db: Path, sql: str) -> list[tuple[object, ...]]:
    """Rows read beside the running tournament (WAL lets a reader in, even past a writer)."""
    if not db.exists():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return con.execute(sql).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []


def started(db: Path) -> bool:
    return bool(read_db(db, "SELECT 1 FROM matches WHERE attempts > 0"))


def done(db: Path) -> dict[str, tuple[str, str | None, int]]:
    rows = read_db(
        db, "SELECT match_id, result, record_path, attempts FROM matches WHERE status = 'done'"
    )
    return {
        str(r[0]): (str(r[1]), None if r[2] is None else str(r[2]), int(str(r[3]))) for r in rows
    }


@contextlib.contextmanager
def write_lock(db: Path) -> Iterator[sqlite3.Connection]:
    """Hold ``BEGIN EXCLUSIVE`` on ``db`` from a connection of this process."""
    con = sqlite3.connect(db, isolation_level=None, timeout=10)
    try:
        con.execute("BEGIN EXCLUSIVE")
        yield con
    finally:
        with contextlib.suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        con.close()


def start(cwd: Path, *flags: str, wait_s: float, log: Path) -> subprocess.Popen[bytes]:
    (cwd / "t.toml").write_text(SIX)
    with open(log, "wb") as err:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arena.cli",
                "tournament",
                "t.toml",
                "--out",
                "out",
                "--no-sandbox",
                *flags,
            ],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, LOCK_WAIT_ENV: str(wait_s)},
        )


def records(out: Path) -> set[str]:
    return {p.name for p in (out / RECORDS_DIR).glob("*.jsonl.gz")}


def test_a_lock_held_for_a_while_is_waited_out_and_every_result_kept(tmp_path: Path) -> None:
    db = tmp_path / "out" / DB_NAME
    log = tmp_path / "stderr.txt"
    proc = start(tmp_path, wait_s=120, log=log)
    try:
        wait_until(lambda: started(db) or proc.poll() is not None, 60, what="a match to start")
        assert proc.poll() is None, log.read_text()
        with write_lock(db):
            stored_before = len(done(db))
            # The runner says it is waiting, and goes on playing meanwhile: its trio loop is not
            # blocked by the database, and the results it cannot store yet are kept.
            wait_until(
                lambda: (
                    "locked by another process" in log.read_text()
                    and len(records(tmp_path / "out")) >= stored_before + 2
                ),
                60,
                what="the runner to note the lock and play on",
            )
            assert proc.poll() is None, log.read_text()
            assert len(done(db)) == stored_before  # nothing was written past the lock
        assert proc.wait(timeout=120) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = log.read_text()
    assert "Traceback" not in err, err
    stored = done(db)
    assert len(stored) == 6
    assert all(attempts == 1 for _, _, attempts in stored.values())  # none played twice
    assert records(tmp_path / "out") == {Path(str(p)).name for _, p, _ in stored.values()}


def test_a_lock_held_too_long_stops_in_one_line_and_a_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    db = out / DB_NAME
    log = tmp_path / "stderr.txt"
    proc = start(tmp_path, "--quiet", wait_s=1.5, log=log)
    try:
        wait_until(lambda: started(db) or proc.poll() is not None, 60, what="a match to start")
        assert proc.poll() is None, log.read_text()
        with write_lock(db):
            status = proc.wait(timeout=60)  # the lock outlasts the runner's patience
            first = done(db)
            kept = {r: (out / RECORDS_DIR / r).read_bytes() for r in records(out)}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = log.read_text()
    assert status == 2, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"arena: error: {Path('out') / DB_NAME}: "), err
    assert "locked by another process" in lines[0] and "run the same command" in lines[0], err
    assert len(first) < 6

    rerun = subprocess.run(
        [sys.executable, "-m", "arena.cli", *TOURNAMENT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stderr
    final = done(db)
    assert len(final) == 6
    for match_id, (result, record_path, _) in first.items():
        # A stored match is not played again: the same result, the very same record.
        assert final[match_id][0] == result
        assert record_path is not None
        name = Path(record_path).name
        assert (out / RECORDS_DIR / name).read_bytes() == kept[name]
    assert records(out) == {Path(str(p)).name for _, p, _ in final.values()}
    assert (out / LOGS_DIR).is_dir()
