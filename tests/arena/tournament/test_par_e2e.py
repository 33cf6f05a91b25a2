"""Par over the real path: `arena tournament` (the real server, real bot processes) and
`arena ratings --par`, including docs/ratings.md's example run as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.par import PAR_NAME

#: Every test here plays whole tournaments: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
DOC = Path(__file__).resolve().parents[3] / "docs" / "ratings.md"
WHIST = ["--game", "whist", "--option", "points_to_win=1", "--option", "games_per_rubber=1"]


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(BIN / "arena"), *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_copy_of_the_reference_has_par_zero_over_the_real_arena(tmp_path: Path) -> None:
    # The reference itself and a copy of it run as another bot: every match, replayed in
    # process, is the match the arena played, so par is exactly 0 and so is its interval.
    bots = ["--bot", "rules", "--bot", "copy=arena bot rules"]
    run = arena(
        "tournament", *WHIST, *bots, "--matches", "8", "--seed", "3", "--out", "t", "--quiet",
        "--par", "--json", cwd=tmp_path,
    )  # fmt: skip
    par = json.loads(run.stdout)["par"]
    assert par["reference"] == "rules" and par["left_out"] == 0
    assert len(par["matches"]) == 8
    assert all(m["par"] == {"rules": 0.0, "copy": 0.0} for m in par["matches"])
    for bot in par["bots"]:
        assert (bot["mean"], bot["plus_minus"], bot["matches"], bot["deals"]) == (0.0, 0.0, 8, 4)
        assert bot["mean"] - bot["plus_minus"] <= 0.0 <= bot["mean"] + bot["plus_minus"]
    # `arena ratings --par` reads the same from the cache, and from scratch the same again.
    again = json.loads(arena("ratings", "t", "--par", "--json", cwd=tmp_path).stdout)
    assert again["par"] == par
    (tmp_path / "t" / PAR_NAME).unlink()
    fresh = json.loads(arena("ratings", "t", "--reference", "rules", "--json", cwd=tmp_path).stdout)
    assert fresh["par"] == par
    # Without --par nothing of par: the report is as it was.
    assert "par" not in json.loads(arena("ratings", "t", "--json", cwd=tmp_path).stdout)


def test_the_documented_example_runs_as_written(tmp_path: Path) -> None:
    text = DOC.read_text()
    section = text[text.index("## Par: luck-adjusted scores") :]
    commands = re.search(r"```sh\n(.*?)```", section, re.S)
    shown = re.search(r"```text\n(.*?)```", section, re.S)
    assert commands is not None and shown is not None
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    outputs = []
    for line in commands.group(1).strip().splitlines():
        proc = subprocess.run(
            line, shell=True, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
        )
        assert proc.returncode == 0, (line, proc.stderr)
        outputs.append(proc.stdout)
    # The table the page shows is what the second command prints.
    assert shown.group(1) in outputs[1]
    as_json = json.loads(outputs[2])
    assert as_json["par"]["reference"] == "random"
    assert {b["bot"] for b in as_json["par"]["bots"]} == {"rules", "copy", "random"}
    # Where the reference and its copy met, par against rules is exactly 0.
    first = json.loads(arena("ratings", "out/par", "--par", "--json", cwd=tmp_path).stdout)
    met = [m for m in first["par"]["matches"] if set(m["par"]) == {"rules", "copy"}]
    assert met and all(m["par"] == {"rules": 0.0, "copy": 0.0} for m in met)
