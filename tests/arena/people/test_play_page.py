"""docs/play.md stays true: its take-over example runs as written (``arena match`` with its bots
boxed as by default, ``arena replay play`` on its record, ``arena replay verify`` on the
branch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import run_shell

PAGE = Path(__file__).resolve().parents[3] / "docs" / "play.md"


def section_block(heading: str) -> str:
    """The first ``sh`` block under ``## heading``."""
    text = PAGE.read_text().split(f"## {heading}\n", 1)[1]
    found = re.search(r"```sh\n(.*?)```", text, re.S)
    assert found is not None, f"no sh block under {heading!r} in {PAGE}"
    return found.group(1)


@pytest.mark.slow
def test_the_take_over_example_runs_as_written(tmp_path: Path) -> None:
    done = run_shell(section_block("Taking over from a replay"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^branched from whist-\w+ at decision 10: seat 1 \(E\)", done.stdout, re.M)
    assert re.search(r"^ok +branches/whist-\w+-at10-\w+\.jsonl\.gz", done.stdout, re.M), done.stdout


@pytest.mark.slow
def test_the_watching_example_runs_as_written(tmp_path: Path) -> None:
    done = run_shell(section_block("Watching"), tmp_path)
    assert done.returncode == 0, done.stderr
    listed = done.stdout.splitlines()
    match = r"^whist-\S+  whist  finished  rules, rules, rules, rules  "
    assert [line for line in listed if re.match(match, line)], listed
    assert listed[-1].startswith("end: "), listed
    assert not any(" deal " in f" {line} " for line in listed)  # hands are private
