"""Small tournaments end to end: `arena tournament` over the real server with real bot processes,
results in a real SQLite file, for every game."""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.records.format import read_record
from arena.tournament.store import DB_NAME

#: Every test here plays whole tournaments: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

ARENA = str(Path(sys.executable).parent / "arena")

#: (game, players, options as TOML lines): one tiny config per game and table shape.
TINY = [
    ("whist", 4, "points_to_win = 1\ngames_per_rubber = 1"),
    ("forty_five", 2, "points_to_win = 5"),
    ("forty_five", 4, "points_to_win = 5"),
    ("tennis", 2, "sets_to_win = 1"),
    ("tennis", 4, "sets_to_win = 1"),  # doubles, control = team: one process per team
    ("tennis_whist", 3, "sets_to_win = 1"),
    ("spoil_five", 3, "rounds = 1"),
]


def config_text(game: str, players: int, options: str, bots: str, extra: str = "") -> str:
    return (
        f'game = "{game}"\nplayers = {players}\nseed = 11\nconcurrency = 3\n'
        f'output = "out"\n{extra}\n[options]\n{options}\n{bots}'
    )


REFERENCE_BOTS = '[[bots]]\nname = "random"\n[[bots]]\nname = "rules"\n'


def run_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, check=False
    )


def stored(db: Path) -> list[tuple[str, str, str, int, str | None]]:
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT match_id, seats, status, attempts, result FROM matches ORDER BY position"
        ).fetchall()
    return [(str(r[0]), str(r[1]), str(r[2]), int(r[3]), r[4]) for r in rows]


@pytest.mark.parametrize(("game", "players", "options"), TINY)
def test_tiny_tournament_of_every_game(
    tmp_path: Path, game: str, players: int, options: str
) -> None:
    (tmp_path / "t.toml").write_text(config_text(game, players, options, REFERENCE_BOTS))
    proc = run_cli("tournament", "t.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    rows = stored(out / DB_NAME)
    # Two bots: a pair on both sides (2 matches), or a 3-seat table in its 2 cyclic rotations.
    assert len(rows) == 2, rows
    for match_id, seats, status, attempts, result in rows:
        assert status == "done" and attempts == 1
        assert set(json.loads(seats)) == {"random", "rules"}
        assert result is not None
        res = json.loads(result)
        assert len(res["ranks"]) == len(json.loads(seats))
        record = read_record(out / "records" / f"{match_id}.jsonl.gz")
        assert record.header["game"] == game
        assert [s["bot_name"] for s in record.header["seats"]] == json.loads(seats)
        assert record.result["ranks"] == res["ranks"]
    # The final report: cross-table and a leaderboard with intervals.
    assert "Cross-table" in proc.stdout and "Leaderboard" in proc.stdout
    assert "±" in proc.stdout
    for bot in ("random", "rules"):
        assert any(line.split()[1:2] == [bot] for line in proc.stdout.splitlines()), proc.stdout
    # Plain progress lines (stderr is not a terminal): one per match.
    assert proc.stderr.count("[1/2]") == 1 and proc.stderr.count("[2/2]") == 1


def test_finished_tournament_rerun_prints_the_final_table_and_plays_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "t.toml").write_text(config_text(*TINY[0], REFERENCE_BOTS))
    first = run_cli("tournament", "t.toml", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = stored(tmp_path / "out" / DB_NAME)
    again = run_cli("tournament", "t.toml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert again.stderr == ""  # no progress: nothing was played
    assert stored(tmp_path / "out" / DB_NAME) == before
    ratings = run_cli("ratings", "out", cwd=tmp_path)
    assert ratings.returncode == 0
    assert ratings.stdout == first.stdout
    as_json = json.loads(run_cli("ratings", "out", "--json", cwd=tmp_path).stdout)
    assert [r["bot"] for r in as_json["ratings"]["ratings"]] == ["rules", "random"]
    assert all(r["plus_minus"] > 0 for r in as_json["ratings"]["ratings"])
    assert as_json["matches_done"] == as_json["matches_total"] == 2


def test_a_different_config_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(config_text(*TINY[0], REFERENCE_BOTS))
    assert run_cli("tournament", "t.toml", cwd=tmp_path).returncode == 0
    before = stored(tmp_path / "out" / DB_NAME)
    proc = run_cli("tournament", "t.toml", "--seed", "12", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "arena: error: out/results.sqlite holds a tournament with a different config "
        "(differs in: seed); use another output directory, or delete it to start over"
    ]
    assert stored(tmp_path / "out" / DB_NAME) == before
    # Concurrency is not part of the tournament's identity: changing it is allowed.
    assert run_cli("tournament", "t.toml", "-j", "1", cwd=tmp_path).returncode == 0


def test_a_crashing_bot_forfeits_and_the_tournament_goes_on(tmp_path: Path) -> None:
    bots = (
        '[[bots]]\nname = "rules"\n'
        '[[bots]]\nname = "crasher"\ncommand = "python -c \'import sys; sys.exit(3)\'"\n'
    )
    text = config_text("forty_five", 2, "points_to_win = 5", bots, 'fault_policy = "strict"')
    (tmp_path / "t.toml").write_text(text)
    proc = run_cli("tournament", "t.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = stored(tmp_path / "out" / DB_NAME)
    assert len(rows) == 2
    for _, seats, status, _, result in rows:
        assert status == "done" and result is not None
        res = json.loads(result)
        assert res["reason"] == "forfeit"
        assert json.loads(seats)[res["forfeited_by"]] == "crasher"
    assert "Faults: crasher" in proc.stdout and "forfeits: crasher 2" in proc.stdout


def test_flags_alone_make_a_quick_tournament(tmp_path: Path) -> None:
    proc = run_cli(
        "tournament",
        "--game", "tennis_whist",
        "--players", "2",
        "--option", "sets_to_win=1",
        "--bot", "random",
        "--bot", "rules=arena bot rules",
        "--no-duplicate",
        "--matches", "2",
        "--out", "quick",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = stored(tmp_path / "quick" / DB_NAME)
    assert [json.loads(r[1]) for r in rows] == [["random", "rules"], ["rules", "random"]]
    with sqlite3.connect(tmp_path / "quick" / DB_NAME) as con:
        seeds = [r[0] for r in con.execute("SELECT seed FROM matches")]
        config = json.loads(con.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
    assert len(set(seeds)) == 2  # no duplicate: each match its own deal
    assert config["duplicate"] is False and config["options"]["sets_to_win"] == 1
    # Logs of every bot process are kept next to the records.
    logs = sorted(p.name for p in (tmp_path / "quick" / "logs").iterdir())
    assert len(logs) == 4
    assert gzip.decompress((tmp_path / "quick" / "records" / "t0-d0-r0.jsonl.gz").read_bytes())


def test_a_record_that_cannot_be_written_stops_the_tournament_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "records").write_text("not a directory")  # as a full disk would
    proc = run_cli(
        "tournament",
        "--game", "tennis", "--players", "2", "--option", "sets_to_win=1",
        "--bot", "random", "--bot", "rules",
        "--no-duplicate", "--matches", "2", "--concurrency", "1", "--no-sandbox",
        "--out", "quick",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "arena: error: 2 match(es) could not be played (first: t0-d0-r0: "
        "quick/records/t0-d0-r0.jsonl.gz: cannot write the match record (File exists)); "
        "run the same command again to retry them"
    )
    # Nothing is stored without its record: the resumed run will play that match again.
    assert [r[2] for r in stored(tmp_path / "quick" / DB_NAME)] == ["pending", "pending"]
