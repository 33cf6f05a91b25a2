"""``arena match`` end to end: real ``arena bot`` processes over real gRPC, and bot commands that
crash or never start (faults, never a hang or a traceback)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from cardarena.messages import TimeControl

from arena.bots.logs import last_line
from arena.cli.match import format_outcome
from arena.match import play_commands
from arena.records.format import read_record
from tests.arena.run_arena import arena_error

BIN = Path(sys.executable).parent
ARENA = str(BIN / "arena")
SHORT = {"points_to_win": 1, "games_per_rubber": 1}


def _env() -> dict[str, str]:
    # Bot commands say plain `arena`: the launcher puts the venv's bin first on PATH itself.
    env = dict(os.environ)
    env["PATH"] = "/usr/bin:/bin"
    return env


@pytest.mark.slow
def test_arena_match_command_with_reference_bots(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            ARENA,
            "match",
            "whist",
            "--option",
            "points_to_win=3",
            "--bot",
            "arena bot random",
            "--bot",
            "arena bot random",
            "--bot",
            "arena bot rules",
            "--bot",
            "arena bot rules",
            "--seed",
            "1",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "whist match whist-" in out and "(seed 1)" in out and "[normal]" in out
    lines = out.splitlines()
    table = lines[1:6]
    assert table[0].split() == ["seat", "name", "bot", "score", "rank", "faults", "command"]
    assert [row.split()[1] for row in table[1:]] == ["N", "E", "S", "W"]
    assert [row.split()[2] for row in table[1:]] == ["random", "random", "rules", "rules"]
    assert "faults:" not in out
    record_line = next(line for line in lines if line.startswith("record: "))
    record = read_record(Path(record_line.removeprefix("record: ")))
    assert record.header["game"] == "whist" and record.header["seed"] == 1
    assert [s["bot_name"] for s in record.header["seats"]] == ["random"] * 2 + ["rules"] * 2
    assert record.result["faults"] == [] and record.result["reason"] == "normal"
    assert sum(1 for _ in record.decisions()) > 52
    verify = subprocess.run(
        [ARENA, "replay", "verify", record_line.removeprefix("record: ")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.mark.slow
def test_a_bot_command_that_fails_at_once_is_a_crash_fault(tmp_path: Path) -> None:
    """One seat's command exits at once and another's does not exist: both are crash faults,
    charged without waiting for the connect timeout, and the match ends in a forfeit."""

    async def main() -> None:
        with trio.fail_after(50):  # well under the 60 s connect timeout
            played = await play_commands(
                "whist",
                ["arena bot random", "echo broken >&2; exit 3", "arena bot random", "no-such-bot"],
                options=SHORT,
                seed=4,
                out_dir=tmp_path,
                time_control=TimeControl(2000, 0),
                connect_timeout_s=60.0,
            )
        outcome = played.outcome
        kinds = {f.seat: f.kind for f in outcome.faults}
        assert set(kinds.values()) == {"crash"}
        assert outcome.result.reason == "forfeit"
        assert outcome.result.forfeited_by in (1, 3)
        details = " ".join(f.detail for f in outcome.faults)
        assert "exited with status 3" in details or "exited with status 127" in details
        # A bot's own output is kept out of the public fault detail, but shown to the user.
        assert "broken" not in details
        text = format_outcome(played, ["a", "b", "c", "d"])
        assert "output (" in text
        assert read_record(played.record).result["reason"] == "forfeit"

    trio.run(main)


@pytest.mark.slow
def test_strict_match_forfeits_on_a_crash(tmp_path: Path) -> None:
    async def main() -> None:
        played = await play_commands(
            "whist",
            ["arena bot random", "arena bot random", "exit 0", "arena bot random"],
            options=SHORT,
            out_dir=tmp_path,
            fault_policy="strict",
            via_unix=True,
        )
        outcome = played.outcome
        assert [(f.seat, f.kind) for f in outcome.faults] == [(2, "crash")]
        assert "exited with status 0" in outcome.faults[0].detail
        assert outcome.result.forfeited_by == 2
        assert "seat 2 output (" in format_outcome(played, ["a", "b", "c", "d"])
        # Whether a dying bot's stream breaks before its exit is seen is a matter of timing,
        # so it may be charged `disconnect` instead: that points at its output too.
        as_disconnect = dataclasses.replace(outcome.faults[0], kind="disconnect")
        seen = dataclasses.replace(
            played, outcome=dataclasses.replace(outcome, faults=(as_disconnect,))
        )
        assert f"seat 2 output ({played.logs[2]}): " in format_outcome(seen, ["a", "b", "c", "d"])

    trio.run(main)


@pytest.mark.slow
def test_wrong_number_of_bots_is_one_line_and_status_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [ARENA, "match", "whist", "--bot", "arena bot random", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "arena: error: whist with 4 players needs 4 --bot commands; got 1"
    assert not list(tmp_path.iterdir())
    # Where the game has a table for that many bots, the line says how to ask for it.
    line = arena_error("match", "forty_five", "--bot", "a", "--bot", "b", "--out", str(tmp_path))
    assert line == (
        "arena: error: forty_five with 4 players needs 4 --bot commands; got 2 "
        "(for 2 players: --players 2)"
    )


@pytest.mark.slow
def test_an_output_directory_that_cannot_be_made_is_refused_before_the_match(
    tmp_path: Path,
) -> None:
    # It used to fail only after the match, losing its result in a traceback.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    bots = ["--bot", "arena bot random"] * 2
    line = arena_error(
        "match", "tennis", "--players", "2", "--no-sandbox", *bots, "--out", str(blocker / "out")
    )  # nothing on stdout: no match was played
    assert line == (
        f"arena: error: {blocker / 'out'}: cannot create the output directory (Not a directory)"
    )


NODE_CRASH = """/bots/bot.js:1
function f(){ throw new Error("boom on decision 3"); }
              ^

Error: boom on decision 3
    at f (/bots/bot.js:1:21)
    at node:internal/main/run_main_module:28:49

Node.js v20.20.2
"""

PYTHON_CRASH = """Traceback (most recent call last):
  File "/bots/bot.py", line 3, in <module>
    raise ValueError("boom")
ValueError: boom
"""


def test_the_crash_line_shown_is_the_error_not_what_follows_it(tmp_path: Path) -> None:
    for text, error in (
        (NODE_CRASH, "Error: boom on decision 3"),
        (PYTHON_CRASH, "ValueError: boom"),
    ):
        log = tmp_path / "seat.log"
        log.write_text(text)
        assert last_line(log) == error
