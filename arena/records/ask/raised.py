"""What a bot's output says went wrong under ``arena replay ask``: the SDK's fallback lines
(``bot.choose failed``, a bad index), each found at its decision, and the tracebacks in its log
lines unfolded for people.

The SDK answers the first legal action after its strategy fails, so the answer alone looks like a
choice (and often matches the record): only its log knows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardarena.client import SDK_FALLBACKS

#: Characters shown of each line of a bot's output (a flood of long lines stays readable).
LINE_CHARS = 300
#: Lines shown of one traceback: its first, then the last ones (where it failed: the author's
#: own frames, below the SDK's).
TRACEBACK_LINES = 40
#: Different tracebacks printed in one report, each once.
TRACEBACKS_SHOWN = 5


@dataclass(frozen=True, slots=True)
class Raised:
    """A decision where the bot's strategy failed and the SDK played the first legal action."""

    #: The script's decision (its index), or ``None`` when the log line does not say.
    k: int | None
    #: ``raised ValueError: boom`` or ``returned a bad index (7)``.
    what: str
    #: The traceback as Python wrote it (``""``: none in the line).
    traceback: str = ""


def raised_in(log: Path, decisions: Mapping[int, int]) -> tuple[Raised, ...]:
    """Each fallback the SDK logged in the bot's output ``log``, oldest first; ``decisions`` maps
    a request id to the script's decision index."""
    try:
        data = log.read_bytes()
    except OSError:
        return ()
    return tuple(
        _raised(raw.decode(errors="replace").strip(), decisions)
        for raw in data.splitlines()
        if any(marker in raw for marker in SDK_FALLBACKS)
    )


def _fields(line: str) -> dict[str, Any] | None:
    """A JSON log line's fields (``None`` for any other line)."""
    if not line.startswith("{"):
        return None
    try:
        fields = json.loads(line)
    except ValueError:
        return None
    return fields if isinstance(fields, dict) else None


def _raised(line: str, decisions: Mapping[int, int]) -> Raised:
    fields = _fields(line)
    if fields is None:  # the author's own logging set-up: the line as it is
        return Raised(None, line[:LINE_CHARS])
    rid, number = fields.get("request_id"), fields.get("decision")
    k = decisions.get(rid) if isinstance(rid, int) else None
    if k is None and isinstance(number, int) and number > 0:
        k = number - 1  # a fresh bot per script: its own count is the script's
    if "bad index" in str(fields.get("event", "")):
        what = f"returned a bad index ({fields.get('index')!r})"
    else:
        what = f"raised {fields.get('error') or 'an exception'}"
    traceback = fields.get("exception")
    return Raised(k, what[:LINE_CHARS], traceback if isinstance(traceback, str) else "")


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


def raised_report(raised: Sequence[Raised], numbers: Sequence[int], tracebacks: bool) -> list[str]:
    """``raised`` for people (``numbers[k]``: decision ``k``'s number in the match): the decisions
    of each failure, then (``tracebacks``) each different traceback once, at most
    :data:`TRACEBACKS_SHOWN` of them."""

    def number(r: Raised) -> str:
        return str(numbers[r.k]) if r.k is not None and 0 <= r.k < len(numbers) else "?"

    at: dict[str, list[str]] = {}
    for r in raised:
        at.setdefault(r.what, []).append(number(r))
    lines = [
        f"  {what}: decision{'s' if len(where) > 1 else ''} {' '.join(where)}"
        for what, where in at.items()
    ]
    if not tracebacks:
        return lines
    where_tb: dict[str, list[str]] = {}
    for r in raised:
        if r.traceback:
            where_tb.setdefault(r.traceback, []).append(number(r))
    for i, (text, where) in enumerate(where_tb.items()):
        if i == TRACEBACKS_SHOWN:
            lines.append(f"  ({len(where_tb) - i} more different tracebacks not shown)")
            break
        also = f" (the same at {len(where) - 1} more)" if len(where) > 1 else ""
        lines.append(f"  traceback at decision {where[0]}{also}:")
        lines.extend("    " + t for t in traceback_lines(text))
    return lines
