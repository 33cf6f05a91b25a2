"""``arena sprt`` end to end: real bot processes over the real server, stopping when the test
decides: the rule-based bot against random is accepted as better (H1), two copies of the rule-
based bot are not (H0: their duplicate units mirror each other exactly); a rerun resumes from
the store and plays nothing more; mistakes are one line."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.arena.tournament.test_tournament_e2e import run_cli

pytestmark = pytest.mark.slow

WHIST = ("--game", "whist", "--option", "points_to_win=1", "--option", "games_per_rubber=1")


def sprt(tmp_path: Path, out: str, *args: str) -> dict[str, object]:
    done = run_cli(
        "sprt",
        *WHIST,
        "--seed",
        "3",
        "--out",
        str(tmp_path / out),
        "--no-sandbox",
        "--json",
        "--quiet",
        *args,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def done_matches(out: Path) -> int:
    with sqlite3.connect(out / "results.sqlite") as con:
        return int(con.execute("SELECT count(*) FROM matches WHERE status='done'").fetchone()[0])


def test_rules_beats_random_and_a_rerun_plays_nothing(tmp_path: Path) -> None:
    first = sprt(tmp_path, "h1", "--candidate", "rules", "--baseline", "random", "--elo1", "50")
    assert first["verdict"] == "H1"
    assert isinstance(first["llr"], float) and first["llr"] >= first["bounds"][1]  # type: ignore[index]
    units = first["units"]
    assert isinstance(units, int) and units >= 1
    played = done_matches(tmp_path / "h1")
    assert played >= 2 * units  # whole units, and what was running when it decided
    again = sprt(tmp_path, "h1", "--candidate", "rules", "--baseline", "random", "--elo1", "50")
    assert again == first
    assert done_matches(tmp_path / "h1") == played


def test_two_copies_of_rules_are_not_better_than_each_other(tmp_path: Path) -> None:
    answer = sprt(
        tmp_path,
        "h0",
        "--candidate",
        "rules",
        "--baseline",
        "copy=arena bot rules",
        "--elo1",
        "50",
        "--max-units",
        "200",
    )
    assert answer["verdict"] == "H0"
    assert answer["elo"] == 0.0 and answer["units"] < 200  # type: ignore[operator]


def test_a_bad_sprt_is_one_line(tmp_path: Path) -> None:
    bad = run_cli(
        "sprt",
        *WHIST,
        "--candidate",
        "rules",
        "--baseline",
        "random",
        "--elo0",
        "10",
        "--elo1",
        "5",
        "--out",
        str(tmp_path / "x"),
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("arena: error: sprt: "), bad.stderr
    assert not (tmp_path / "x").exists()
    half = run_cli("sprt", *WHIST, "--candidate", "rules", cwd=tmp_path)
    assert half.returncode == 2 and "give both --candidate and --baseline" in half.stderr
