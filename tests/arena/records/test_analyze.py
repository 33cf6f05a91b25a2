"""``arena replay analyze``: every decision of the chosen seats valued, the played action's loss
and class, per-seat summaries; JSON on records of every game; the same seed, the same output;
bad input refused in one line."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.cli.main import main
from arena.records.analyze import CLASSES, THRESHOLDS
from tests.arena.records.viewer_records import timed_record
from tests.arena.replay_truth import GAMES, make_record
from tests.engine.planted import blunder_record

ARENA = [sys.executable, "-m", "arena.cli"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", "analyze", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def analysed(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    assert err == ""  # no progress bar off a terminal
    found: dict[str, Any] = json.loads(out)
    return found


def test_a_planted_blunder_is_found_and_classed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """N discards the ace of diamonds, a sure winner: a blunder of about a trick, its costliest
    decision; the rules bot's own decisions cost little."""
    path = tmp_path / "planted.jsonl.gz"
    step, ace = blunder_record(path)
    found = analysed(capsys, str(path), "--seat", "N", "--worlds", "32")
    blunder = next(d for d in found["decisions"] if d["step"] == step)
    assert blunder["chosen"] == ace and blunder["seat"] == 0
    assert blunder["class"] == "blunder" and 0.9 <= blunder["loss"] <= 1.3, blunder
    assert blunder["loss_se"] < 0.3
    (north,) = found["seats"]
    assert north["seat_name"] == "N" and north["bot"] == "rules 1"
    assert north["costliest"][0] == {
        "step": step,
        "chosen": ace,
        "best": blunder["best"],
        "loss": blunder["loss"],
        "class": "blunder",
    }
    assert north["classes"]["blunder"] == 1 and north["deals"] == 1
    assert north["loss_per_deal"] == pytest.approx(north["total_loss"])
    assert north["total_loss"] < blunder["loss"] + 0.8  # the rest of N's play is sound

    code, text, _ = run(capsys, str(path), "--seat", "0", "--worlds", "32", "--at", str(step))
    assert code == 0
    row = next(line for line in text.splitlines() if line.lstrip().startswith(f"{step} N"))
    assert ace in row and "blunder" in row and f"{blunder['loss']:.2f}" in row
    assert (
        f"step {step}: played {ace}, best {blunder['best']}: -{blunder['loss']:.2f} tricks" in text
    )
    assert "classes by loss in tricks: inaccuracy >= 0.3, mistake >= 0.6, blunder >= 0.9" in text


def _check_decision(d: dict[str, Any], game: str) -> None:
    texts = [a["action"] for a in d["actions"]]
    assert len(texts) >= 2 and d["chosen"] in texts and d["best"] in texts
    means = {a["action"]: a["mean"] for a in d["actions"]}
    assert means[d["best"]] == max(means.values())
    assert d["loss"] == pytest.approx(means[d["best"]] - means[d["chosen"]], abs=2e-4)
    assert d["class"] in CLASSES and d["method"] in ("exact", "rollout")
    assert all(a["n"] == 3 and a["se"] >= 0 for a in d["actions"])
    if d["class"] == "blunder":
        assert d["loss"] >= THRESHOLDS[game][2]


@pytest.mark.parametrize(("game", "players"), [*((g, None) for g in GAMES), ("tennis", 4)])
def test_json_on_a_record_of_every_game(
    game: str, players: int | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make_record(tmp_path, game, 5, players)
    found = analysed(capsys, str(path), "--worlds", "3", "--limit", "4", "--seed", "9")
    assert set(found) == {
        "record", "match_id", "game", "unit", "span", "worlds", "seed", "rollouts_per_world",
        "policy", "thresholds", "steps", "decisions", "seats",
    }  # fmt: skip
    assert (found["game"], found["worlds"], found["seed"], found["policy"]) == (
        game,
        3,
        9,
        "search",
    )
    assert found["unit"] in ("tricks", "points", "chips", "games")
    assert len(found["decisions"]) == 4
    for d in found["decisions"]:
        _check_decision(d, game)
    assert [s["seat"] for s in found["seats"]] == list(range(len(found["seats"])))
    for s in found["seats"]:
        assert set(s["classes"]) == set(CLASSES)
        assert s["decisions"] == sum(s["classes"].values())
        assert s["total_loss"] == pytest.approx(
            sum(d["loss"] for d in found["decisions"] if d["seat"] == s["seat"]), abs=1e-3
        )


def test_the_same_seed_gives_the_same_output(tmp_path: Path) -> None:
    """Two processes (each with its own string hashing), the same seed: the same bytes."""
    path = make_record(tmp_path, "spoil_five", 2)
    args = [*ARENA, "replay", "analyze", str(path), "--worlds", "4", "--deal", "1", "--json"]

    def once(extra: list[str], hashseed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        done = subprocess.run([*args, *extra], capture_output=True, text=True, env=env, check=True)
        assert done.stderr == ""
        return done.stdout

    first = once(["--seed", "3"], "1")
    assert first == once(["--seed", "3"], "2")
    assert first != once(["--seed", "4"], "1")
    assert {d["step"] for d in json.loads(first)["decisions"]}


def test_a_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    path = make_record(tmp_path, "whist", 3)
    args = [*ARENA, "replay", "analyze", str(path), "--worlds", "2", "--limit", "6"]
    main_fd, child_fd = pty.openpty()
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=child_fd, check=True)
    os.close(child_fd)
    drawn = b""
    try:
        while chunk := os.read(main_fd, 65536):
            drawn += chunk
    except OSError:  # EIO: the terminal's other end is closed and everything was read
        pass
    os.close(main_fd)
    assert b"analysing" in drawn and b"6/6" in drawn
    assert b"analysing" not in done.stdout and b"expected loss" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seat", "9"], "unknown seat '9' (seats: 0=N, 1=E, 2=S, 3=W)"),
        (["--seat", "X"], "unknown seat 'X'"),
        (["--at", "500"], "--at 500 is out of range: the record has 52 decisions"),
        (["--deal", "3"], "--deal 3 is out of range"),
        (["--at", "1", "--seat", "N"], "decision 1 is W's (seat 3), not one of --seat's"),
    ],
)
def test_a_bad_choice_is_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make_record(tmp_path, "whist", 3)
    code, out, err = run(capsys, str(path), *args)
    assert code == 2 and out == ""
    assert err.startswith("arena: error: ") and message in err and err.count("\n") == 1


def test_not_a_record_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_text("not a record\n")
    for path in (junk, tmp_path / "missing.jsonl.gz"):
        code, out, err = run(capsys, str(path))
        assert code == 2 and out == ""
        assert err.startswith("arena: error: ") and err.count("\n") == 1


@pytest.mark.parametrize("worlds", ["0", "-3", "many", "10001"])
def test_worlds_out_of_range_is_refused(worlds: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["replay", "analyze", "r.jsonl.gz", "--worlds", worlds])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(
        f"argument --worlds: expected a whole number from 1 to 10000; got {worlds!r}"
    )


def test_a_fallback_is_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Decision 3 timed out and the referee played its fallback: analysed, and said so."""
    record = timed_record(tmp_path, "whist", 4)
    assert 3 in record.fallback_steps
    found = analysed(capsys, str(record.path), "--worlds", "2", "--deal", "1", "--limit", "6")
    flags = {d["step"]: d["fallback"] for d in found["decisions"]}
    assert flags[3] is True and not any(v for k, v in flags.items() if k not in (3, 5))
    code, text, _ = run(capsys, str(record.path), "--worlds", "2", "--at", "3")
    assert code == 0 and "(played by the referee: a fallback)" in text
