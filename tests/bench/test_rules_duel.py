"""benchmarks/rules_duel.py: a rules bot's earlier version, loaded from git beside today's."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.rules_duel import ROOT, strategy_at
from reference_bots.rules import strategy_for
from tests.engine.test_spoil_five import arranged

#: The last commit before the spoil five bot led low instead of drawing trumps.
BEFORE_LOW_LEADS = "c0939a5"


def test_an_earlier_strategy_plays_as_it_did_and_leaves_todays_alone(tmp_path: Path) -> None:
    loaded = dict(sys.modules)
    old = strategy_at(BEFORE_LOW_LEADS, "spoil_five", tmp_path)
    new = strategy_for("spoil_five")
    # Seat 0 leads with KS and 3S, the best trumps unseen: it used to draw trumps, now leads low.
    state = arranged(
        ["KS 3S QD 9H 4C", "2D 3D 4D 5D 6D", "7D 8D 9D TD JD", "2H 3H 4H 5H 6H", "7H 8H TH JH 2C"],
        "7S",
    )
    legal = state.legal_actions()
    obs = state.observation(0).to_dict()
    assert legal[old(obs, legal, random.Random(0))].text == "play:KS"
    assert legal[new(obs, legal, random.Random(0))].text == "play:4C"
    # Today's modules are the very objects imported before, and none of the old ones linger.
    assert all(sys.modules[name] is module for name, module in loaded.items())
    assert not any(str(tmp_path) in str(getattr(m, "__file__", "")) for m in sys.modules.values())


def test_an_unknown_revision_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="cannot read 'no-such-rev'"):
        strategy_at("no-such-rev", "spoil_five", tmp_path)


def test_the_command_reports_a_margin() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.rules_duel", "forty_five", "20", "--against", "random"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.startswith("forty_five, rules against random: +")
    assert "over 20 seeds × 2 seatings" in run.stdout
