"""``arena/records/ask/raised.py``: a bot's tracebacks unfolded, within their caps (a bot that
floods its log stays readable)."""

from __future__ import annotations

import json

from arena.records.ask.raised import LINE_CHARS, TRACEBACK_LINES, unfolded


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
