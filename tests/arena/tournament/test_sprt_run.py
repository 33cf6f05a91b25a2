"""The SPRT runner's bookkeeping without processes: match scores from places and ranks, units
tallied in deal order whatever order their matches finish in, and the verdict frozen at the
first crossing, so that a resumed run decides exactly as the run it resumes would have."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.tournament.progress import Feedback
from arena.tournament.sprt_runner import SprtRun, match_score
from engine import get_game
from engine.sprt import SprtParams

WHIST = get_game("whist")
WHIST_CONFIG = WHIST.configure(4, {})
SEATS_R0 = ("cand", "base", "cand", "base")  # N+S the candidate
SEATS_R1 = ("base", "cand", "base", "cand")


def test_match_scores_are_the_share_of_place_pairs_won() -> None:
    assert match_score(WHIST, WHIST_CONFIG, SEATS_R0, (1, 2, 1, 2), "cand") == 1.0
    assert match_score(WHIST, WHIST_CONFIG, SEATS_R1, (1, 2, 1, 2), "cand") == 0.0
    assert match_score(WHIST, WHIST_CONFIG, SEATS_R0, (1, 1, 1, 1), "cand") == 0.5
    tw = get_game("tennis_whist")
    three = tw.configure(3, {})
    # Three places, the candidate in two: first and third against the baseline's second.
    assert match_score(tw, three, ("cand", "base", "cand"), (1, 2, 3), "cand") == 0.5
    assert match_score(tw, three, ("cand", "base", "cand"), (1, 3, 2), "cand") == 1.0
    with pytest.raises(ArenaError):
        match_score(WHIST, WHIST_CONFIG, ("cand",) * 4, (1, 2, 1, 2), "cand")


def _run() -> SprtRun:
    return SprtRun(SprtParams(0.0, 50.0), WHIST, WHIST_CONFIG, "cand", 2, Feedback())


def test_units_count_in_deal_order_and_the_verdict_is_frozen_at_the_first_crossing() -> None:
    rng = random.Random(4)
    # The candidate wins most deals in both rotations, loses some: a verdict within 40 deals.
    matches = []
    for deal in range(40):
        good = rng.random() < 0.8
        matches.append((deal, (1, 2, 1, 2) if good else (2, 1, 2, 1), SEATS_R0))
        matches.append((deal, (2, 1, 2, 1) if good else (1, 2, 1, 2), SEATS_R1))
    in_order = _run()
    for m in matches:
        in_order.add(*m)
    shuffled = _run()
    mixed = matches[:]
    rng.shuffle(mixed)
    for m in mixed:
        shuffled.add(*m)
    assert in_order.decided and in_order.status().verdict == "H1"
    assert shuffled.status() == in_order.status()
    # Tallied up to the crossing only; a unit with one rotation in is not a unit.
    assert in_order.status().units < 40
    half = _run()
    half.add(0, (1, 2, 1, 2), SEATS_R0)
    assert half.tally.units == 0 and half.partial == {0: [1.0]}


@pytest.mark.parametrize(
    ("config", "args", "message"),
    [
        ('game = "whist"\n[sprt]\nfoo = 1\n', [], "sprt.foo: unknown key"),
        ('game = "whist"\nsprt = 3\n', [], "sprt: must be a table"),
        ("", ["--max-units", "0"], "max units must be between 1 and 100,000; got 0"),
        ("", ["--alpha", "nan"], "sprt: SPRT alpha must be finite"),
        ("", ["--elo0", "5", "--elo1", "5"], "sprt: "),
    ],
)
def test_a_bad_sprt_config_is_one_line_and_makes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config: str,
    args: list[str],
    message: str,
) -> None:
    from arena.cli.main import main

    argv = ["sprt", "--out", str(tmp_path / "out")]
    if config:
        (tmp_path / "s.toml").write_text(config)
        argv.append(str(tmp_path / "s.toml"))
    else:
        argv += ["--game", "whist", "--candidate", "rules", "--baseline", "random"]
    assert main([*argv, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()
