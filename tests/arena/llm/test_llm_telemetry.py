"""The harness's telemetry in the match summary (docs/llm.md, "What is recorded"; docs/sdk.md,
"Telemetry"): ``arena match`` with ``arena bot llm`` against the scripted server prints each of
its seats' tokens, time, retries and fallbacks summed over the match, as do ``--json`` and
``arena replay show``; a bot whose notes carry no figures adds nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from arena.records.format import read_record
from arena.records.telemetry import seat_telemetry
from tests.arena.llm.fake_openai import FakeOpenAI
from tests.arena.llm.test_llm_match import ARENA, KEY, KEY_ENV, llm_command, seat_decisions

pytestmark = [pytest.mark.slow, pytest.mark.agents]

HEAD = "telemetry (the bots' notes summed over the match; docs/sdk.md):"


def arena(tmp_path: Path, *argv: str) -> str:
    env = {**os.environ, KEY_ENV: KEY, "ARENA_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [ARENA, *argv], capture_output=True, text=True, timeout=180, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


#: Short matches: tennis singles, whist to one point.
SHORT = {
    "tennis": ["--option", "sets_to_win=1"],
    "whist": ["--option", "points_to_win=1", "--option", "games_per_rubber=1"],
}


def match_argv(tmp_path: Path, bots: list[str], *flags: str) -> list[str]:
    """``arena match`` of a short match: tennis singles for two bots, whist for four."""
    game = "tennis" if len(bots) == 2 else "whist"
    argv = ["match", game, "--no-sandbox", "--seed", "5", *SHORT[game]]
    argv += ["--out", str(tmp_path / "out"), *flags]
    for bot in bots:
        argv += ["--bot", bot]
    return argv


def match(tmp_path: Path, bots: list[str], *flags: str) -> list[str]:
    return arena(tmp_path, *match_argv(tmp_path, bots, *flags)).splitlines()


def decisions_in(record: str) -> int:
    return len(list(read_record(Path(record)).decisions()))


def test_arena_match_and_replay_show_sum_the_harness_s_figures(tmp_path: Path) -> None:
    script = ["illegal", "legal", *["unparsable"] * 3]  # a retry, then a fallback; then legal
    with FakeOpenAI(script) as fake:
        llm = llm_command(fake.url, "--list-legal", "--retries", "2")
        out = match(tmp_path, [llm, "arena bot random"])
        asked = len(fake.requests)
    (record,) = [line.removeprefix("record: ") for line in out if line.startswith("record: ")]
    at = out.index(HEAD)
    line = out[at + 1]
    assert not out[at + 2].startswith("  "), out  # the random bot's seat: nothing
    assert line.startswith("  P1 (seat 0): "), line
    shown = dict(part.rsplit(" ", 1) for part in line.split(": ", 1)[1].split(", "))
    assert list(shown) == ["decisions", "tok_in", "tok_out", "ms", "retries", "fallbacks", "faults"]
    figures = {k: int(v.replace(",", "")) for k, v in shown.items()}
    assert figures["decisions"] == len(seat_decisions(record, 0))
    assert figures["tok_in"] == 100 * asked and figures["tok_out"] == 2 * asked
    assert figures["retries"] == asked - figures["decisions"] == 3
    assert figures["fallbacks"] == 1 and figures["faults"] == 4
    # The record says the same through `arena replay show`, at its end.
    end = arena(tmp_path, "replay", "show", record, "--at", str(decisions_in(record)))
    assert HEAD in end.splitlines() and line in end.splitlines()


def test_json_has_each_harness_seat_s_telemetry(tmp_path: Path) -> None:
    with FakeOpenAI(seed=4) as fake:
        llm = llm_command(fake.url, "--list-legal")
        out = arena(
            tmp_path,
            *match_argv(tmp_path, [llm, "arena bot random", llm, "arena bot random"], "--json"),
        )
        asked = len(fake.requests)
    result = json.loads(out)
    summed = seat_telemetry(read_record(Path(result["record"])).entries)
    seats = result["seats"]
    assert "telemetry" not in seats[1] and "telemetry" not in seats[3]
    for n in (0, 2):
        telemetry = seats[n]["telemetry"]
        assert telemetry == summed[n].to_dict()
        assert telemetry["decisions"] == len(seat_decisions(result["record"], n))
        assert telemetry["fallbacks"] == 0 and telemetry["retries"] == 0
    assert seats[0]["telemetry"]["tok_in"] + seats[2]["telemetry"]["tok_in"] == 100 * asked


def test_a_bot_without_telemetry_adds_nothing(tmp_path: Path) -> None:
    out = match(tmp_path, ["arena bot random", "arena bot rules"])
    assert not any(line.startswith("telemetry") for line in out)
    (record,) = [line.removeprefix("record: ") for line in out if line.startswith("record: ")]
    result = json.loads(arena(tmp_path, *match_argv(tmp_path, ["arena bot random"] * 2, "--json")))
    assert all("telemetry" not in seat for seat in result["seats"])
    end = arena(tmp_path, "replay", "show", record, "--at", str(decisions_in(record)))
    assert "telemetry" not in end
