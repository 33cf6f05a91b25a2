"""Evaluating a model (docs/llm.md): examples/llm/whist.toml, its endpoint pointed at the
scripted server playing legal actions, is a real duplicate tournament of ``arena bot llm``
against the reference bots that ends with ratings and intervals; its token estimate is printed
before the first match."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.arena.llm.fake_openai import FakeOpenAI
from tests.arena.llm.test_llm_match import KEY, assert_key_nowhere

pytestmark = [pytest.mark.slow, pytest.mark.agents]

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "llm" / "whist.toml"
ARENA = str(Path(sys.executable).parent / "arena")
#: The example's endpoint, which the test points at its own server.
ENDPOINT = "https://api.openai.com/v1"


def test_a_duplicate_tournament_of_the_harness(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    assert text.count(ENDPOINT) == 1
    with FakeOpenAI(seed=2) as fake:
        (tmp_path / "t.toml").write_text(text.replace(ENDPOINT, fake.url))
        short = ["--matches", "2", "--option", "points_to_win=1"]
        proc = subprocess.run(
            [ARENA, "tournament", "t.toml", "--no-sandbox", "--out", "out", *short],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OPENAI_API_KEY": KEY, "ARENA_HOME": str(tmp_path / "home")},
            check=False,
        )
        asked = len(fake.requests)
    assert proc.returncode == 0, proc.stderr[-3000:]
    err = proc.stderr.splitlines()
    estimate = next(i for i, line in enumerate(err) if line.startswith("cost estimate"))
    first_match = next(i for i, line in enumerate(err) if "[1/4]" in line)
    assert estimate < first_match, proc.stderr
    # Gauntlet: the model meets random and rules, two seats (one partnership) each match.
    assert "  model: in all (4 matches, 8 seats) ~" in proc.stderr
    assert "  model: per seat and match " in proc.stderr and "per match ~" in proc.stderr
    assert "random:" not in proc.stderr.split("llm-whist: 4 matches")[0]
    out = proc.stdout
    assert "Leaderboard (Elo, 95 % interval)" in out and "±" in out
    board = out.split("Leaderboard")[1]
    assert all(name in board for name in ("model", "random", "rules"))
    assert "Strategy failures" not in out  # every answer legal: no fallback
    assert asked > 0
    # The harness's telemetry (its notes' t.KEY=N words), per seat and match: the model alone.
    telemetry = out.split("Telemetry (the bots' notes, per seat and match; docs/sdk.md):\n")[1]
    rows = [line for line in telemetry.splitlines() if line.startswith("  ")]
    assert len(rows) == 1 and rows[0].startswith("  model: 8 seat(s) in matches; decisions ")
    ratings = subprocess.run(
        [ARENA, "ratings", "out", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    (model,) = json.loads(ratings.stdout)["telemetry"].items()
    name, figures = model
    assert name == "model" and figures["seats"] == 8
    assert figures["total"]["tok_in"] == 100 * asked and figures["total"]["fallbacks"] == 0
    per = figures["per_seat_match"]
    assert per["decisions"] == figures["total"]["decisions"] / 8 and per["retries"] == 0
    assert_key_nowhere(tmp_path, proc)
