"""``arena/records/ask/raised.py``: the SDK's fallback lines found in a bot's output, and its
tracebacks unfolded, within their caps (a bot that floods its log stays readable)."""

from __future__ import annotations

import json
from pathlib import Path

from arena.records.ask.raised import (
    LINE_CHARS,
    TRACEBACK_LINES,
    TRACEBACKS_SHOWN,
    Raised,
    raised_in,
    raised_report,
    unfolded,
)


def _sdk_line(error: str, traceback: str, request_id: int, decision: int) -> str:
    return json.dumps(
        {
            "event": "bot.choose failed; playing the first legal action",
            "level": "error",
            "error": error,
            "request_id": request_id,
            "decision": decision,
            "exception": traceback,
        }
    )


def test_fallbacks_are_found_at_their_decisions(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    bad = {"event": "bot.choose returned a bad index; playing the first legal action"}
    lines = [
        "a debug print",
        _sdk_line("ValueError: x", "Traceback\nValueError: x", request_id=77, decision=1),
        json.dumps({**bad, "index": 9, "request_id": 78, "decision": 2}),
        _sdk_line("ValueError: y", "", request_id=999, decision=4),  # id unknown: its count
        "ERROR:cardarena.client:bot.choose failed; playing the first legal action",
    ]
    log.write_text("\n".join(lines) + "\n")
    found = raised_in(log, {77: 0, 78: 1})
    assert found == (
        Raised(0, "raised ValueError: x", "Traceback\nValueError: x"),
        Raised(1, "returned a bad index (9)"),
        Raised(3, "raised ValueError: y"),
        Raised(None, lines[-1]),
    )
    assert raised_in(tmp_path / "missing.log", {}) == ()


def test_a_long_traceback_keeps_its_first_and_last_lines() -> None:
    frames = [f'  File "mine.py", line {n}, in f' for n in range(500)]
    traceback = "\n".join(["Traceback (most recent call last):", *frames, "RecursionError: x"])
    line = _sdk_line("RecursionError: x", traceback, 1, 1)
    assert len(line) > LINE_CHARS
    shown = unfolded([line, line, "y" * 1000])
    head = json.loads(shown[0])
    assert "exception" not in head and head["error"] == "RecursionError: x"
    tb = shown[1 : 1 + TRACEBACK_LINES]
    assert tb[0] == "  Traceback (most recent call last):"
    assert tb[1] == f"  … {502 - (TRACEBACK_LINES - 1)} lines left out"
    assert tb[-1] == "  RecursionError: x" and tb[-2] == '    File "mine.py", line 499, in f'
    # The same traceback again: a note, not the lines; other lines cut at LINE_CHARS.
    assert shown[1 + TRACEBACK_LINES :] == [
        shown[0],
        "  (the same traceback as above)",
        "y" * LINE_CHARS,
    ]


def test_the_report_names_every_decision_and_shows_each_different_traceback_once() -> None:
    raised = [
        Raised(k, "raised ValueError: x", f"Traceback\nValueError: {k % 7}") for k in range(30)
    ]
    raised.append(Raised(None, "a line of the bot's own logging"))
    lines = raised_report(raised, [10 + k for k in range(30)], tracebacks=True)
    numbers = " ".join(str(10 + k) for k in range(30))
    assert lines[0] == f"  raised ValueError: x: decisions {numbers}"
    assert lines[1] == "  a line of the bot's own logging: decision ?"
    headers = [line for line in lines if line.startswith("  traceback at decision ")]
    assert len(headers) == TRACEBACKS_SHOWN
    assert headers[0] == "  traceback at decision 10 (the same at 4 more):"
    assert lines[-1] == f"  ({7 - TRACEBACKS_SHOWN} more different tracebacks not shown)"
    assert raised_report(raised[:1], [10], tracebacks=False) == [
        "  raised ValueError: x: decision 10"
    ]
