"""A results file damaged outside the arena (a row edited by hand, a table dropped) is reported
in one line by `arena ratings` and by a resume, and `arena ratings` never writes to the file it
is given."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from arena.tournament.store import DB_NAME
from tests.arena.run_arena import ARENA, arena_error, played_tournament

#: Every test here plays a tournament or runs `arena` commands: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament's directory, ``out`` beside its ``t.toml``."""
    return played_tournament(tmp_path_factory.mktemp("damage"))


def edit(db: Path, sql: str) -> None:
    con = sqlite3.connect(db)
    try:
        with con:
            con.execute(sql)
    finally:
        con.close()  # the last connection's close checkpoints the WAL into the file


FIRST = "(SELECT match_id FROM matches ORDER BY position LIMIT 1)"
DAMAGES: dict[str, tuple[str, str]] = {
    # name: (SQL that damages the file, what the one line names)
    "result-not-json": (
        f"UPDATE matches SET result = 'not json' WHERE match_id = {FIRST}",
        "match 't0-d0-r0' is damaged",
    ),
    "ranks-too-short": (
        f"UPDATE matches SET result = json_set(result, '$.ranks', json('[1]')) "
        f"WHERE match_id = {FIRST}",
        "match 't0-d0-r0' is damaged (result ranks must be a list of 2)",
    ),
    "fault-of-no-seat": (
        f"UPDATE matches SET faults = '[{{\"seat\": 7}}]' WHERE match_id = {FIRST}",
        "match 't0-d0-r0' is damaged (faults must be a list of faults of the match's seats)",
    ),
    "bots-table-dropped": ("DROP TABLE bots", "the bots table is damaged (no such table: bots)"),
    "config-not-json": (
        "UPDATE meta SET value = '{' WHERE key = 'config'",
        "the stored config is damaged",
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("command", ["ratings", "resume"])
def test_a_damaged_results_file_is_one_line(
    finished: Path, tmp_path: Path, damage: str, command: str
) -> None:
    out = tmp_path / "out"
    shutil.copytree(finished / "out", out)
    sql, named = DAMAGES[damage]
    edit(out / DB_NAME, sql)
    before = (out / DB_NAME).read_bytes()
    if command == "ratings":
        line = arena_error("ratings", str(out))
        where = out / DB_NAME
    else:
        shutil.copy(finished / "t.toml", tmp_path / "t.toml")
        line = arena_error("tournament", "t.toml", "--out", "out", "--no-sandbox", cwd=tmp_path)
        where = Path("out") / DB_NAME
    assert line.startswith(f"arena: error: {where}: {named}"), line
    assert (out / DB_NAME).read_bytes() == before  # reported, not repaired or overwritten


@pytest.mark.parametrize("content", [b"", b"just some text\n"])
def test_ratings_on_a_file_that_is_no_results_file_leaves_it_alone(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    line = arena_error("ratings", str(path))
    assert line.startswith(f"arena: error: {path}: ")
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # no -wal, no -shm


def test_ratings_still_reads_a_finished_tournament_read_only(finished: Path) -> None:
    proc = subprocess.run(
        [ARENA, "ratings", "out"], cwd=finished, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "Leaderboard" in proc.stdout and "rules" in proc.stdout


def pending_copy(finished: Path, tmp_path: Path, damage: str) -> Path:
    """A copy of ``finished``'s directory whose last match is pending again and whose results
    file ``damage`` (SQL) harmed; its ``out/`` results file."""
    shutil.copytree(finished / "out", tmp_path / "out")
    shutil.copy(finished / "t.toml", tmp_path / "t.toml")
    db = tmp_path / "out" / DB_NAME
    last = "(SELECT match_id FROM matches ORDER BY position DESC LIMIT 1)"
    edit(db, f"UPDATE matches SET status = 'pending', result = NULL WHERE match_id = {last}")
    edit(db, damage)
    return db


def pending_count(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT COUNT(*) FROM matches WHERE status='pending'").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (DAMAGES["result-not-json"][0], "match 't0-d0-r0' is damaged"),
        (
            "UPDATE bots SET name = 'ghost' WHERE position = 0",
            "the bots table is damaged (bot 'ghost' is not in the config)",
        ),
    ],
    ids=["damaged-result", "renamed-bot"],
)
def test_a_resume_refuses_damage_before_playing_what_is_pending(
    finished: Path, tmp_path: Path, damage: str, named: str
) -> None:
    db = pending_copy(finished, tmp_path, damage)
    line = arena_error("tournament", "t.toml", "--out", "out", "--no-sandbox", cwd=tmp_path)
    assert line.startswith(f"arena: error: {Path('out') / DB_NAME}: {named}"), line
    assert pending_count(db) == 1  # refused at the start: the pending match was not played
