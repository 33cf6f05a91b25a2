"""``arena replay verify`` on an edited record names the first field that differs, both sides."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from arena.cli.main import main
from arena.records.format import Recorder, RecordError, match_header, read_record, write_record
from arena.records.replay import verify
from engine import get_game


def _record(path: Path) -> Path:
    """A whist match of random moves, recorded as the arena does."""
    g = get_game("whist")
    config = g.configure(None, {"points_to_win": "1", "games_per_rubber": "1"})
    state = g.new_match(config, 9)
    recorder = Recorder(state)
    rng = random.Random(9)
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        action = rng.choice(legal)
        recorder.decision(seat, len(legal), action.text, 1.0)
        state.apply(action)
    recorder.sync()
    result = state.result()
    assert result is not None
    header = match_header("edited", g, config, 9, [("r", "1")] * 4, None, "lenient")
    write_record(path, header, recorder.entries, {**result.to_dict(), "faults": []})
    return path


def _rewrite(path: Path, edit_entries: Any = None, edit_result: Any = None) -> None:
    """Edit the record and write it with a fresh hash chain, so that the chain holds and only
    the replay can tell."""
    rec = read_record(path)
    header = dict(rec.header)
    entries = json.loads(json.dumps(rec.entries))
    result = json.loads(json.dumps(rec.result))
    if edit_entries is not None:
        edit_entries(entries)
    if edit_result is not None:
        edit_result(result)
    write_record(path, header, entries, result)


def test_an_edited_score_is_named_with_both_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _record(tmp_path / "m.jsonl.gz")
    engine_score = read_record(path).result["scores"][1]

    def edit(result: dict[str, Any]) -> None:
        result["scores"][1] = 7.0

    _rewrite(path, edit_result=edit)
    with pytest.raises(RecordError, match="result differs") as err:
        verify(path)
    message = str(err.value)
    assert f"result differs at result.scores[1]: recorded 7.0, engine {engine_score}" in message
    assert "\n" not in message
    # The command prints the same, on its FAIL line.
    assert main(["replay", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL ") and "at result.scores[1]: recorded 7.0, engine " in out


def test_an_edited_event_names_its_field_and_a_missing_one_says_absent(tmp_path: Path) -> None:
    path = _record(tmp_path / "m.jsonl.gz")
    entries = read_record(path).entries
    events = [i for i, e in enumerate(entries) if e["type"] == "event"]
    # The 10th engine event that is a card played: change only its card.
    n, i = next((n, i) for n, i in enumerate(events) if entries[i]["kind"] == "play" and n >= 10)
    card = entries[i]["card"]
    other = "2C" if card != "2C" else "3C"

    def change(es: list[dict[str, Any]]) -> None:
        es[i]["card"] = other

    _rewrite(path, edit_entries=change)
    with pytest.raises(RecordError, match="event differs") as err:
        verify(path)
    assert (
        f"line {i + 2}: event differs at events[{n}].card: recorded {json.dumps(other)}, "
        f"engine {json.dumps(card)}"
    ) in str(err.value)

    def drop(es: list[dict[str, Any]]) -> None:
        es[i]["card"] = card
        del es[i]["seat"]

    _rewrite(path, edit_entries=drop)
    with pytest.raises(RecordError, match="event differs") as err:
        verify(path)
    assert f"event differs at events[{n}].seat: recorded (absent), engine " in str(err.value)


def test_a_long_value_is_shown_short(tmp_path: Path) -> None:
    # The field's path, and each side cut short: the message stays one short line.
    path = _record(tmp_path / "m.jsonl.gz")

    def edit(result: dict[str, Any]) -> None:
        result["summary"] = "x" * 300

    _rewrite(path, edit_result=edit)
    with pytest.raises(RecordError, match=r"result differs at result\.summary") as err:
        verify(path)
    message = str(err.value)
    assert len(message) < 300 and '"xxx' in message and "…" in message
