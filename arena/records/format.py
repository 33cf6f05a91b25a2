"""Match records: one gzip-compressed JSON Lines file per match, hash-chained, written atomically.

Line 1 is the header, then one line per event, decision and fault in the order they happened,
and last the result. Every line is a JSON object with a ``prev`` field: the SHA-256 (hex) of the
previous line's bytes (64 zeros for the header), so any edit, insertion or deletion breaks the
chain. The format is documented in docs/records.md.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.layout import TEMP_SUFFIX, write_atomically
from engine import Event, Game, MatchConfig, MatchState

#: Version of the record format; readers refuse other versions.
SCHEMA_VERSION = 1
#: The ``prev`` of the first line.
GENESIS = "0" * 64


class RecordError(ArenaError):
    """A record cannot be read or does not verify; the message names the line."""


def _line(obj: Mapping[str, Any], prev: str) -> bytes:
    # Canonical form: sorted keys, no spaces, so the hash does not depend on the writer.
    return json.dumps({**obj, "prev": prev}, sort_keys=True, separators=(",", ":")).encode()


def _digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def encode_record(
    header: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], result: Mapping[str, Any]
) -> bytes:
    """The uncompressed JSON Lines bytes of a record."""
    lines = []
    prev = GENESIS
    for obj in (
        {"type": "header", "schema": SCHEMA_VERSION, **header},
        *entries,
        {"type": "result", **result},
    ):
        line = _line(obj, prev)
        lines.append(line)
        prev = _digest(line)
    return b"\n".join(lines) + b"\n"


def remove_stale_temps(directory: Path) -> int:
    """Delete the temporary files that writers killed mid-write left in ``directory``; returns
    how many. Only for a directory no one is writing to now (a tournament's records, under its
    lock, before any match starts): a live writer's file would go too."""
    removed = 0
    try:
        for tmp in list(directory.glob(f".*.jsonl.gz.*{TEMP_SUFFIX}")):
            tmp.unlink(missing_ok=True)
            removed += 1
    except OSError:
        pass  # an unreadable directory fails the record writes, with a clearer message
    return removed


def write_record(
    path: Path,
    header: Mapping[str, Any],
    entries: Sequence[Mapping[str, Any]],
    result: Mapping[str, Any],
) -> None:
    """Write a record atomically: a crash never leaves a partial file under ``path``.

    Raises :class:`RecordError` when it cannot be written (a full disk, its directory gone or a
    file): each caller decides what a lost record costs (a tournament replays the match later,
    a lobby goes on without it).
    """
    data = gzip.compress(encode_record(header, entries, result), mtime=0)

    def fail(why: str) -> RecordError:
        return RecordError(f"{path}: cannot write the match record ({why})")

    write_atomically(path, data, fail)


@dataclass(frozen=True, slots=True)
class Record:
    """A record read back: the header, the entries in order, and the result."""

    #: Header fields (``game``, ``players``, ``options``, ``seed``, ``seats`` …).
    header: dict[str, Any]
    #: Event, decision and fault entries, in order; each has a ``type``.
    entries: list[dict[str, Any]]
    #: The result (``scores``, ``ranks``, ``reason``, ``faults`` …).
    result: dict[str, Any]

    def decisions(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(entry index, entry)`` of every decision, in order."""
        for i, e in enumerate(self.entries):
            if e.get("type") == "decision":
                yield i, e


def read_record(path: Path) -> Record:
    """Read and check a record's hash chain and schema; raises :class:`RecordError`."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise RecordError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        text = gzip.decompress(raw)
    except (gzip.BadGzipFile, OSError):
        raise RecordError(f"{path}: not a gzip file (records are gzip-compressed)") from None
    except (EOFError, zlib.error):
        raise RecordError(f"{path}: truncated or corrupt gzip data") from None
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise RecordError(f"{path}: empty record")
    prev = GENESIS
    objs: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise RecordError(f"{path}: line {number}: not valid JSON") from None
        if not isinstance(obj, dict):
            raise RecordError(f"{path}: line {number}: not a JSON object")
        if obj.get("prev") != prev:
            raise RecordError(
                f"{path}: line {number}: hash chain broken (the line or the one before was edited)"
            )
        # Re-encoding canonically must give the same bytes, else the line was altered in place.
        if _line({k: v for k, v in obj.items() if k != "prev"}, prev) != line:
            raise RecordError(f"{path}: line {number}: not in canonical form (edited)")
        prev = _digest(line)
        objs.append(obj)
    header = objs[0]
    if header.get("type") != "header":
        raise RecordError(f"{path}: line 1: not a header")
    if header.get("schema") != SCHEMA_VERSION:
        raise RecordError(
            f"{path}: record schema {header.get('schema')!r} is not supported "
            f"(this arena reads schema {SCHEMA_VERSION})"
        )
    if len(objs) < 2 or objs[-1].get("type") != "result":
        raise RecordError(f"{path}: truncated: no result line at the end")
    strip = ("prev", "type")
    return Record(
        header={k: v for k, v in header.items() if k not in strip},
        entries=[{k: v for k, v in o.items() if k != "prev"} for o in objs[1:-1]],
        result={k: v for k, v in objs[-1].items() if k not in strip},
    )


def match_header(
    match_id: str,
    game: Game,
    config: MatchConfig,
    seed: int,
    bots: Sequence[tuple[str, str]],
    time_control: Mapping[str, Any] | None,
    fault_policy: str,
) -> dict[str, Any]:
    """A record's header: the match, and per seat its name and the bot's ``(name, version)``."""
    names = game.seat_names(config)
    return {
        "match_id": match_id,
        "game": game.id,
        "game_version": game.version,
        "players": config.players,
        "options": dict(config.options),
        "seed": seed,
        "seats": [
            {"seat": s, "seat_name": names[s], "bot_name": name, "bot_version": version}
            for s, (name, version) in enumerate(bots)
        ],
        "time_control": None if time_control is None else dict(time_control),
        "fault_policy": fault_policy,
    }


def event_entry(event: Event) -> dict[str, Any]:
    """A record entry for an engine event."""
    return {"type": "event", **event.to_dict()}


def decision_entry(seat: int, legal: int, action: str, ms: float, fallback: bool) -> dict[str, Any]:
    """A record entry for a decision: ``legal`` actions were open, ``ms`` it took."""
    return {
        "type": "decision",
        "seat": seat,
        "legal": legal,
        "action": action,
        "ms": round(ms, 3),
        "fallback": fallback,
    }


def fault_entry(seat: int, kind: str, detail: str) -> dict[str, Any]:
    """A record entry for a fault charged to ``seat``."""
    return {"type": "fault", "seat": seat, "kind": kind, "detail": detail}


class Recorder:
    """Collects a match's entries in the order things happen, for :func:`write_record`."""

    def __init__(self, state: MatchState) -> None:
        self._state = state
        self._seen = 0
        #: The entries so far.
        self.entries: list[dict[str, Any]] = []
        self.sync()

    def sync(self) -> None:
        """Append the engine events produced since the last call."""
        events = self._state.events
        while self._seen < len(events):
            self.entries.append(event_entry(events[self._seen]))
            self._seen += 1

    def decision(
        self, seat: int, legal: int, action: str, ms: float, fallback: bool = False
    ) -> None:
        """Record a decision; call it before applying the action, then :meth:`sync`."""
        self.sync()
        self.entries.append(decision_entry(seat, legal, action, ms, fallback))

    def fault(self, seat: int, kind: str, detail: str) -> None:
        """Record a fault charged to ``seat``."""
        self.sync()
        self.entries.append(fault_entry(seat, kind, detail))
