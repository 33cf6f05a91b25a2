"""``cardarena.client``: what a bot's log says when its strategy fails (a real ``arena match``,
real bot processes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.records.format import read_record
from tests.sdk.matching import play_tennis

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
    _, record = play_tennis(tmp_path, FAILING, first=False)
    out = record.parent
    match_id = read_record(record).header["match_id"]
    (log,) = [p for p in out.rglob("*.log") if "my strategy has a bug" in p.read_text()]
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
