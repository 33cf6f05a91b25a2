"""After its match a bot gets its MatchEnd, then its stream ends (status OK), and it may finish
on its own before it is stopped (docs/protocol.md): it can save what it learnt and exit 0."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from arena.layout import LOGS_DIR, seat_log_name
from arena.records.format import read_record
from tests.arena.run_arena import ARENA

#: Every test here plays a match with real bot processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

BOT = """
import signal, sys
from cardarena.client import run_bot
from cardarena.bot import Bot

def stopped(*_):
    print("stopped by a signal", file=sys.stderr, flush=True)
    sys.exit(143)

signal.signal(signal.SIGTERM, stopped)

class First(Bot):
    name = "first"
    def choose(self, game, observation, legal):
        return 0

run = run_bot(First())
print(f"run_bot returned: {run.stopped} after {run.matches} match(es)", file=sys.stderr, flush=True)
"""


def test_a_bot_ends_on_its_own_after_its_match_end(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT)
    proc = subprocess.run(
        [ARENA, "match", "whist", "--option", "points_to_win=1", "--option", "games_per_rubber=1",
         *["--bot", "python bot.py"] * 3, "--bot", "arena bot rules",
         "--no-sandbox", "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = next((tmp_path / "out").glob("*.jsonl.gz"))
    match_id = read_record(record).header["match_id"]
    for seat in range(3):
        log = (tmp_path / "out" / LOGS_DIR / seat_log_name(match_id, seat)).read_text()
        assert "run_bot returned: ended after 1 match(es)" in log, log
        assert "stopped by a signal" not in log


FAILING = """
from cardarena.client import run_bot
from cardarena.bot import Bot

class Failing(Bot):
    name = "failing"
    def choose(self, game, observation, legal):
        raise ValueError("a strategy bug")

run_bot(Failing())
"""


def test_the_summary_names_a_strategy_the_sdk_covered_for(tmp_path: Path) -> None:
    # The SDK answers for a failing strategy (a bug costs one move): the referee sees legal
    # answers and charges no fault, so without this line the author would not know.
    (tmp_path / "failing.py").write_text(FAILING)
    proc = subprocess.run(
        [ARENA, "match", "whist", "--option", "points_to_win=1", "--option", "games_per_rubber=1",
         "--bot", "python failing.py", *["--bot", "arena bot random"] * 3,
         "--no-sandbox", "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "faults:" not in proc.stdout  # legal answers, every one
    assert "seat 0: its strategy failed 13 time(s) and the SDK played the first legal action" in (
        proc.stdout
    )
    assert "seat 1:" not in proc.stdout
