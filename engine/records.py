"""Match records, the writing side: what a line is, the hash chain, the header and the entries.

One definition for the arena (arena/records/format.py reads, verifies and writes records with
these) and for in-process play (engine.local), so a record written in process is one that
``arena replay verify`` passes. The format is documented in docs/records.md. Pure: building the
bytes does no I/O.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.core import Event, Game, MatchConfig

#: Ending of a match record's file name (``MATCH_ID.jsonl.gz``).
RECORD_SUFFIX = ".jsonl.gz"

#: Version of the record format the arena writes (2 added the ``connection`` line).
SCHEMA_VERSION = 2

#: The ``prev`` of the first line.
GENESIS = "0" * 64


def record_line(obj: Mapping[str, Any], prev: str) -> bytes:
    """A record line's bytes: ``obj`` with ``prev`` (the previous line's digest)."""
    # Canonical form: sorted keys, no spaces, so the hash does not depend on the writer.
    return json.dumps({**obj, "prev": prev}, sort_keys=True, separators=(",", ":")).encode()


def line_digest(line: bytes | bytearray) -> str:
    """The hex SHA-256 of a line's bytes: the next line's ``prev``."""
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
        line = record_line(obj, prev)
        lines.append(line)
        prev = line_digest(line)
    return b"\n".join(lines) + b"\n"


def record_bytes(
    header: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], result: Mapping[str, Any]
) -> bytes:
    """A record file's bytes (gzipped JSON lines; no time in the gzip header, so the same match
    gives the same bytes)."""
    return gzip.compress(encode_record(header, entries, result), mtime=0)


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


def decision_entry(
    seat: int,
    legal: int,
    action: str,
    ms: float,
    fallback: bool,
    note: str = "",
    sdk_fallback: str = "",
) -> dict[str, Any]:
    """A record entry for a decision: ``legal`` actions were open, ``ms`` it took. ``note`` (the
    bot's) and ``sdk_fallback`` (why its SDK played a fallback) are keys only when not empty:
    a record without them reads as before. Both come cleaned (``cardarena.messages.clean_note``):
    ``arena replay verify`` refuses any other."""
    entry: dict[str, Any] = {
        "type": "decision",
        "seat": seat,
        "legal": legal,
        "action": action,
        "ms": round(ms, 3),
        "fallback": fallback,
    }
    if note:
        entry["note"] = note
    if sdk_fallback:
        entry["sdk_fallback"] = sdk_fallback
    return entry


def fault_entry(seat: int, kind: str, detail: str) -> dict[str, Any]:
    """A record entry for a fault charged to ``seat``."""
    return {"type": "fault", "seat": seat, "kind": kind, "detail": detail}
