"""A reader that leaves at once (``arena ratings DIR | true``, ``… | head -1``) ends the output
quietly: no BrokenPipeError traceback, the command's own exit status."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.arena.run_arena import ARENA, played_tournament

#: Every test here runs `arena` commands as processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament's directory (its config is ``t.toml`` there)."""
    return played_tournament(tmp_path_factory.mktemp("pipe"))


def into_gone_reader(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``arena ARGS`` with stdout a pipe whose reader has already exited: every write fails
    with EPIPE, as behind ``| true`` once ``true`` is gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [ARENA, *args],
            cwd=cwd,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ["ratings", "out"],
        ["ratings", "out", "--json"],
        ["tournament", "t.toml", "--out", "out", "--quiet", "--no-sandbox"],
        ["tournament", "t.toml", "--out", "out", "--quiet", "--no-sandbox", "--json"],
        ["replay", "show", "out/records/t0-d0-r0.jsonl.gz"],
        ["selfplay", "tennis", "--games", "3"],
        ["bots", "--home", "home"],
    ],
    ids=lambda args: "-".join(a for a in args if not a.startswith(("-", "out", "t.toml"))),
)
def test_output_into_a_reader_that_left_ends_quietly(finished: Path, args: list[str]) -> None:
    if args[0] == "replay":
        assert (finished / args[2]).is_file()
    proc = into_gone_reader(args, finished)
    assert proc.stderr == ""
    assert proc.returncode == 0


def test_the_same_commands_still_print_to_a_reader_that_stays(finished: Path) -> None:
    proc = subprocess.run(
        [ARENA, "ratings", "out"], cwd=finished, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "Leaderboard" in proc.stdout
