"""Time controls the protocol cannot carry are refused before anything runs, and a match the
arena itself fails is never stored as a result."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest
from cardarena.messages import MAX_TIME_MS, TimeControl

from arena.tournament.config import check_config
from arena.tournament.progress import feedback_for
from arena.tournament.runner import MatchFailed, run_tournament
from arena.tournament.store import DB_NAME
from tests.arena.run_arena import arena_error

#: Every test here runs `arena` commands as processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

TENNIS = {
    "game": "tennis",
    "options": {"sets_to_win": 1},
    "bots": [{"name": "random"}, {"name": "rules"}],
}


@pytest.mark.parametrize("key", ["move_ms", "bank_ms"])
def test_a_tournament_time_control_beyond_a_day_is_refused(tmp_path: Path, key: str) -> None:
    (tmp_path / "t.toml").write_text(
        f'game = "tennis"\n[time_control]\n{key} = 5000000000\n'
        '[[bots]]\nname = "random"\n[[bots]]\nname = "rules"\n'
    )
    line = arena_error("tournament", "t.toml", "--out", "o", cwd=tmp_path)
    assert line.endswith(f"time_control.{key}: must be at most {MAX_TIME_MS}; got 5000000000")
    assert not (tmp_path / "o").exists()


def test_the_command_line_time_control_is_held_to_the_same_limit(tmp_path: Path) -> None:
    line = arena_error(
        "tournament", "--game", "tennis", "--bot", "random", "--bot", "rules",
        "--move-ms", "99999999999", "--out", "o", cwd=tmp_path,
    )  # fmt: skip
    assert line.endswith(f"time_control.move_ms: must be at most {MAX_TIME_MS}; got 99999999999")


def test_a_match_the_arena_fails_stays_pending_and_is_reported(tmp_path: Path) -> None:
    config = check_config({**TENNIS, "output": str(tmp_path / "o")}, "test", "t")
    # Past the wire's 32-bit field: the referee cannot even start the match (a stand-in for any
    # arena-side failure; the config check above refuses such a time control from users).
    rules = dataclasses.replace(config.rules, time_control=TimeControl(2**33, 0))
    config = dataclasses.replace(config, rules=rules, concurrency=1)
    with pytest.raises(MatchFailed, match="could not be played"):
        run_tournament(config, feedback_for(quiet=True))
    with sqlite3.connect(tmp_path / "o" / DB_NAME) as con:
        rows = con.execute("SELECT status, result FROM matches").fetchall()
    assert rows and all(status == "pending" and result is None for status, result in rows)
