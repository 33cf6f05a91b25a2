"""``cardarena.client``: what a bot's log says when its strategy fails (a real ``arena match``,
real bot processes)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from arena.records.format import read_record

ARENA = str(Path(sys.executable).parent / "arena")

#: Raises at every decision but its second, where it returns a bad index.
FAILING = """
from cardarena import Bot, run_bot

class Failing(Bot):
    name = "failing"
    asked = 0

    def choose(self, game, observation, legal):
        self.asked += 1
        if self.asked == 2:
            return len(legal)
        raise ValueError("my strategy has a bug")

run_bot(Failing())
"""


@pytest.mark.slow
def test_a_strategy_failure_names_the_match_the_request_and_the_decision(tmp_path: Path) -> None:
    # Without them, a line among thousands in a long-lived bot's log says nothing of where.
    bot = tmp_path / "failing.py"
    bot.write_text(FAILING)
    out = tmp_path / "out"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))}"
    match = ["match", "tennis", "--option", "sets_to_win=1", "--seed", "3", "--no-sandbox"]
    done = subprocess.run(
        [ARENA, *match, "--out", str(out), "--bot", "arena bot random", "--bot", command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (record,) = out.glob("*.jsonl.gz")
    match_id = read_record(record).header["match_id"]
    (log,) = [p for p in out.rglob("*.log") if "failing" in p.read_text()]
    lines = [json.loads(ln) for ln in log.read_text().splitlines() if ln.startswith("{")]
    failed = [ln for ln in lines if ln["event"].startswith("bot.choose")]
    assert len(failed) >= 3
    assert failed[0]["event"] == "bot.choose failed; playing the first legal action"
    assert failed[1]["event"] == "bot.choose returned a bad index; playing the first legal action"
    assert [ln["decision"] for ln in failed] == list(range(1, len(failed) + 1))
    assert {ln["match_id"] for ln in failed} == {match_id}
    ids = [ln["request_id"] for ln in failed]
    assert all(isinstance(i, int) and i > 0 for i in ids) and len(set(ids)) == len(ids)
    assert "ValueError: my strategy has a bug" in failed[0]["exception"]
