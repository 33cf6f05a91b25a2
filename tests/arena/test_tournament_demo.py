"""`arena demo` (what `make demo` runs): a leaderboard with intervals for every game."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from arena.tournament.config import load_config, node_bot_status
from engine import game_ids

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[2]


def test_demo_ends_in_a_leaderboard_with_intervals_for_every_game(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    (out / "stale").mkdir(parents=True)  # recreated: what was there before is gone
    proc = subprocess.run(
        [ARENA, "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Every bot ran (the Node bot needs the .proto inside the sandbox), and nothing the server
    # swallowed: no traceback, no asyncio report of a lost exception.
    for sign in ("bot crashed", "Traceback", "never retrieved"):
        assert sign not in proc.stderr, proc.stderr[-3000:]
    assert not (out / "stale").exists()
    bots = ["random", "rules"] + (["node"] if node_bot_status()[0] else [])
    boards = proc.stdout.split("Leaderboard (Elo, 95 % interval):")[1:]
    assert len(boards) == len(game_ids())
    for board in boards:
        lines = board.strip().splitlines()
        assert lines[0].split() == ["rank", "bot", "Elo", "±", "matches", "score"]
        rows = [line.split() for line in lines[1 : 1 + len(bots)]]
        assert sorted(r[1] for r in rows) == sorted(bots)
        assert all(float(r[3]) > 0 for r in rows)  # an interval for every bot
    for game in game_ids():
        with sqlite3.connect(out / game / "results.sqlite") as con:
            statuses = {r[0] for r in con.execute("SELECT status FROM matches")}
        assert statuses == {"done"}, game
    assert proc.stdout.rstrip().splitlines()[-1].startswith(f"demo: {len(game_ids())} games in ")
    if node_bot_status()[0] is None:
        assert "node bot skipped: " in proc.stderr


def test_every_example_config_loads() -> None:
    examples = sorted((ROOT / "examples").glob("*.toml"))
    assert examples
    for path in examples:
        config = load_config(path)
        assert len(config.bots) >= 2, path
