"""Notes on decisions, end to end (real ``arena match``, real bot processes): ``turn.note``
reaches the record, ``replay show``, the viewer's document and ``replay verify``; a strategy that
raises is marked as the SDK's fallback in the record and in ``arena match``'s output."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from arena.records.format import read_record
from arena.records.html import viewer_document
from tests.sdk.matching import ARENA, play_tennis

#: Notes every decision (with an escape sequence and markup in it); raises at its third.
NOTING = """
import itertools
from cardarena import Bot, run_bot

ASKED = itertools.count(1)

class Noting(Bot):
    name = "noting"

    def choose(self, game, observation, legal):
        n = next(ASKED)
        self.turn.note(f"decision {n} of {len(legal)}\\x1b[31m <b>bold</b>")
        if n == 3:
            raise ValueError("my strategy has a bug")
        return 0

run_bot(Noting())
"""


@pytest.mark.slow
def test_notes_and_sdk_fallbacks_reach_the_record_and_every_view(tmp_path: Path) -> None:
    done, record = play_tennis(tmp_path, NOTING)
    decisions = [e for e in read_record(record).entries if e.get("type") == "decision"]
    ours = [(n, e) for n, e in enumerate(decisions) if e["seat"] == 0]
    theirs = [e for e in decisions if e["seat"] == 1]
    assert ours and theirs
    assert all("note" not in e and "sdk_fallback" not in e for e in theirs)
    # Cleaned: the escape character never reaches a terminal.
    assert ours[0][1]["note"] == f"decision 1 of {ours[0][1]['legal']}\ufffd[31m <b>bold</b>"
    third = ours[2][0]
    assert [n for n, e in ours if "sdk_fallback" in e] == [third]
    assert ours[2][1]["sdk_fallback"] == "ValueError: my strategy has a bug"
    assert not ours[2][1]["fallback"]  # a legal answer: no fault, the referee played nothing

    # arena match marks the fallback: how many and where.
    assert "SDK fallbacks" in done.stdout
    assert f"seat 0: 1 (decisions {third}); first: ValueError: my strategy has a bug" in done.stdout

    verified = subprocess.run(
        [ARENA, "replay", "verify", str(record)], capture_output=True, text=True, check=False
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    shown = subprocess.run(
        [ARENA, "replay", "show", str(record), "--at", str(third)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "  [its SDK fell back after ValueError: my strategy has a bug]" in shown.stdout
    assert "  note: decision 3 of" in shown.stdout and "\x1b" not in shown.stdout

    doc = viewer_document(record)
    step = next(s for s in doc["steps"] if s["n"] == third)
    assert step["note"].startswith("decision 3 of") and step["sdk_fallback"].startswith(
        "ValueError"
    )
    assert {"step": third, "seat": 0, "kind": "sdk_fallback", "fallback": False} in doc["meta"][
        "marks"
    ]


@pytest.mark.slow
def test_arena_match_json_lists_the_sdk_fallbacks(tmp_path: Path) -> None:
    done, record = play_tennis(tmp_path, NOTING, "--json")
    seats = json.loads(done.stdout)["seats"]
    decisions = [e for e in read_record(record).entries if e.get("type") == "decision"]
    marked = [n for n, e in enumerate(decisions) if e.get("sdk_fallback")]
    assert len(marked) == 1
    assert seats[0]["sdk_fallbacks"] == marked and seats[1]["sdk_fallbacks"] == []


@pytest.mark.slow
def test_a_series_marks_the_matches_with_sdk_fallbacks(tmp_path: Path) -> None:
    # One process for both matches: its third decision of all is in the first match only.
    done, record = play_tennis(tmp_path, NOTING, "--games", "2")
    decisions = [e for e in read_record(record).entries if e.get("type") == "decision"]
    (at,) = [n for n, e in enumerate(decisions) if e.get("sdk_fallback")]
    lines = done.stdout.splitlines()
    assert lines[0].endswith(f"[SDK fallbacks: seat 0 at {at}]"), lines[0]
    assert "SDK fallbacks" not in lines[1]
