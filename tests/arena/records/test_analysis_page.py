"""docs/analysis.md stays true: its example commands run as written, its JSON example has the
fields ``--json`` prints, and its thresholds table is the one the analyser classes by."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from arena.cli.main import main
from arena.records.analyze import THRESHOLDS
from tests.arena.replay_truth import make_record
from tests.helpers import run_shell

PAGE = Path(__file__).resolve().parents[3] / "docs" / "analysis.md"


def block(language: str) -> str:
    """The page's first fenced block of ``language``."""
    found = re.search(rf"```{language}\n(.*?)```", PAGE.read_text(), re.S)
    assert found is not None, f"no {language} block in {PAGE}"
    return found.group(1)


def run_bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``script`` run as a docs page's commands are (:func:`tests.helpers.run_shell`); it must
    succeed."""
    done = run_shell(script, cwd)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
def test_the_example_commands_run_as_written(tmp_path: Path) -> None:
    """`arena match` (four bot processes, boxed as by default) then the analysis of E."""
    done = run_bash(block("sh"), tmp_path)
    assert "classes by loss in tricks: inaccuracy >= 0.3, mistake >= 0.6, blunder >= 0.9" in (
        done.stdout
    )
    assert re.search(r"^E \(random 1\): \d+ decisions analysed", done.stdout, re.M), done.stdout
    assert "expected loss" in done.stdout


def keys(value: Any) -> Any:
    """The shape of a JSON value: objects' keys, lists' first items."""
    if isinstance(value, dict):
        return {k: keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [keys(value[0])] if value else []
    return type(value).__name__ if not isinstance(value, int | float) else "number"


def test_the_json_example_has_the_printed_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = json.loads(block("json"))
    path = make_record(tmp_path, "whist", 4)
    assert main(["replay", "analyze", str(path), "--worlds", "2", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["seats"][0]["costliest"], "a random seat that loses nothing"
    printed["seats"] = printed["seats"][:1]
    assert keys(documented) == keys(printed)


def test_the_thresholds_table_is_the_analysers() -> None:
    rows = re.findall(r"^\| ([a-z ,-]+) \| (\w+) \| ≥ ([\d.]+) \| ≥ ([\d.]+) \| ≥ ([\d.]+) \|$",
                      PAGE.read_text(), re.M)  # fmt: skip
    table: dict[str, tuple[float, float, float]] = {}
    for games, _, *limits in rows:
        for game in games.split(", "):
            table[game.replace(" ", "_").replace("-", "_")] = (
                float(limits[0]),
                float(limits[1]),
                float(limits[2]),
            )
    assert table == THRESHOLDS
