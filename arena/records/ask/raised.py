"""A bot's output under ``arena replay ask``, for people: the tracebacks in its log lines
unfolded."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

#: Characters shown of each line of a bot's output (a flood of long lines stays readable).
LINE_CHARS = 300
#: Lines shown of one traceback: its first, then the last ones (where it failed: the author's
#: own frames, below the SDK's).
TRACEBACK_LINES = 40


def _fields(line: str) -> dict[str, Any] | None:
    """A JSON log line's fields (``None`` for any other line)."""
    if not line.startswith("{"):
        return None
    try:
        fields = json.loads(line)
    except ValueError:
        return None
    return fields if isinstance(fields, dict) else None


def traceback_lines(text: str) -> list[str]:
    """A traceback's lines, at most :data:`TRACEBACK_LINES` (its first and its last ones)."""
    lines = [line[:LINE_CHARS] for line in text.splitlines()]
    if len(lines) <= TRACEBACK_LINES:
        return lines
    kept = TRACEBACK_LINES - 1
    return [lines[0], f"… {len(lines) - kept} lines left out", *lines[-(kept - 1) :]]


def unfolded(lines: Iterable[str]) -> list[str]:
    """A bot's output lines for people, each cut to :data:`LINE_CHARS`, except that a JSON log
    line's traceback (the SDK's ``exception`` field: one long line, whose end, the author's own
    frames, a cut would lose) is taken out of it and shown below it line by line
    (:func:`traceback_lines`; one shown already gets a note)."""
    out: list[str] = []
    seen: set[str] = set()
    for line in lines:
        fields = _fields(line)
        traceback = fields.pop("exception", None) if fields is not None else None
        if fields is None or not isinstance(traceback, str):
            out.append(line[:LINE_CHARS])
            continue
        out.append(json.dumps(fields)[:LINE_CHARS])
        if traceback in seen:
            out.append("  (the same traceback as above)")
        else:
            seen.add(traceback)
            out.extend("  " + t for t in traceback_lines(traceback))
    return out
