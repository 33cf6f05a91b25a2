"""`arena demo` (what `make demo` runs): a leaderboard with intervals for every game."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.tournament.config import load_config, node_bot_status
from arena.tournament.demo import MARKER, prepare_output
from engine import game_ids

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_demo_ends_in_a_leaderboard_with_intervals_for_every_game(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    # A previous demo's output (marked) is recreated: what was there before is gone.
    (out / "stale").mkdir(parents=True)
    (out / MARKER).write_text("")
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
    # The search bot rebuilt every state it searched: no rule-based stand-in in its logs.
    logs = list(out.glob("*/logs/*"))
    assert logs
    for log in logs:
        assert "search unavailable" not in log.read_text(errors="replace"), log
    bots = ["random", "rules", "search"] + (["node"] if node_bot_status()[0] else [])
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


def test_every_example_config_loads(node_bot: list[str]) -> None:
    # node_bot: the examples seat the Node reference bot, which needs its npm packages.
    examples = sorted((ROOT / "examples").glob("**/*.toml"))
    assert examples
    for path in examples:
        config = load_config(path)
        assert len(config.bots) >= 2, path


def test_the_demo_never_empties_a_directory_that_is_not_a_demos_output(tmp_path: Path) -> None:
    # `arena demo --out .` in a project, or `--out ~`: refused before anything is touched.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.txt").write_text("years of work")
    (mine / "whist").mkdir()  # a game's name alone does not make it a demo's output
    with pytest.raises(ArenaError, match="not a demo's output"):
        prepare_output(mine)
    assert (mine / "thesis.txt").read_text() == "years of work"
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep")
    with pytest.raises(ArenaError, match="not a directory"):
        prepare_output(a_file)
    assert a_file.read_text() == "keep"
    with pytest.raises(ArenaError, match="cannot create the output directory"):
        prepare_output(a_file / "demo")


def test_the_demo_replaces_its_own_earlier_output(tmp_path: Path) -> None:
    marked = tmp_path / "marked"
    prepare_output(marked)
    assert [p.name for p in marked.iterdir()] == [MARKER]
    (marked / "whist").mkdir()
    (marked / "whist" / "results.sqlite").write_text("old")
    prepare_output(marked)
    assert [p.name for p in marked.iterdir()] == [MARKER]
    # Per-game directories without the marker are replaced only when they hold exactly what a
    # demo from before the marker wrote (tests/arena/tournament/test_demo_output_safety.py): a file
    # that is no demo's results is refused, untouched.
    old = tmp_path / "old"
    for game in game_ids():
        (old / game).mkdir(parents=True)
        (old / game / "results.sqlite").write_text("old")
    with pytest.raises(ArenaError, match="not a demo's output"):
        prepare_output(old)
    assert all((old / game / "results.sqlite").read_text() == "old" for game in game_ids())
