"""A bot whose strategy raises is not faulted (the SDK answers with the first legal action),
but the tournament report counts it per bot, as ``arena match`` does, from the bots' logs: with
long-lived processes and with a process per match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.arena.tournament.test_tournament_e2e import run_cli

pytestmark = pytest.mark.slow

SHAKY = """\
from cardarena import RandomBot, run_bot

class Shaky(RandomBot):
    calls = 0

    def choose(self, game, observation, legal):
        self.calls += 1
        if self.calls % 3 == 0:
            raise RuntimeError("oops")
        return super().choose(game, observation, legal)

run_bot(Shaky())
"""


@pytest.mark.parametrize("restart", ["on_failure", "per_match"])
def test_strategy_failures_are_counted_per_bot(tmp_path: Path, restart: str) -> None:
    (tmp_path / "shaky.py").write_text(SHAKY)
    done = run_cli(
        "tournament",
        "--game",
        "tennis",
        "--option",
        "sets_to_win=1",
        "--matches",
        "2",
        "--bot",
        f"shaky=python3 {tmp_path / 'shaky.py'}",
        "--bot",
        "random",
        "--restart",
        restart,
        "--no-sandbox",
        "--quiet",
        "--json",
        "--out",
        str(tmp_path / "t"),
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["faults"] == {}  # the referee saw legal answers throughout
    failures = report["strategy_failures"]
    assert set(failures) == {"shaky"} and failures["shaky"] > 0, failures
    again = run_cli("ratings", str(tmp_path / "t"), cwd=tmp_path)
    line = "Strategy failures (the SDK played the first legal action instead)"
    assert f"{line}: shaky {failures['shaky']};" in again.stdout
