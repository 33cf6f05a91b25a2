"""Match records: one gzip-compressed JSON Lines file per match, hash-chained, written atomically.

Line 1 is the header, then one line per event, decision and fault in the order they happened,
and last the result. Every line is a JSON object with a ``prev`` field: the SHA-256 (hex) of the
previous line's bytes (64 zeros for the header), so any edit, insertion or deletion breaks the
chain. The format is documented in docs/records.md.

Readers take nothing on trust: :func:`read_record` refuses anything but a regular file, holds
what it decompresses and parses to the caps below, and fails in every case with one
:class:`RecordError` (docs/records.md, *What readers accept*).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

from arena.errors import ArenaError
from arena.layout import TEMP_SUFFIX, write_atomically
from engine import MatchState

# The writing side (what a line is, its hash chain, the entries) is the engine distribution's, so
# that in-process play (engine.local) writes records this module reads and verifies.
from engine.records import (
    GENESIS,
    SCHEMA_VERSION,
    decision_entry,
    encode_record,
    event_entry,
    fault_entry,
    line_digest,
    match_header,
    record_bytes,
    record_line,
)

#: Re-exported for the arena's writers (the referee, the pool, the cluster).
__all__ = [
    "GENESIS",
    "SCHEMA_VERSION",
    "decision_entry",
    "encode_record",
    "event_entry",
    "fault_entry",
    "match_header",
    "record_bytes",
]


#: The versions readers accept; they refuse others.
READ_SCHEMAS = (1, 2)
#: The most a record may hold, compressed or not: reading stops, with an error, past this. Real
#: records are far smaller: the longest matches the options allow (whist to 50 points with 9
#: games a rubber, spoil five with 10 players and 20 rounds) write 2 to 5 MB, and about 20 MB
#: is the most any whist rubber can reach (99 deals a game); the cap is there so that a gzip
#: bomb cannot fill memory (a record read back takes about 8 times its size).
MAX_RECORD_BYTES = 64 * 1024 * 1024
#: The longest line a record may have. Real lines are under 1.1 KB (a 10-player spoil five
#: header); a line is parsed whole, so this bounds what one line can cost.
MAX_LINE_BYTES = 1024 * 1024
#: The deepest nesting of arrays and objects in a line (real records nest 3 deep): deeper values
#: would be a recursion hazard for every tool that walks them.
MAX_DEPTH = 16

_GZIP_MAGIC = b"\x1f\x8b"
#: zlib's window bits for a gzip wrapper (header and CRC-32 trailer checked by zlib).
_GZIP_WBITS = 16 + zlib.MAX_WBITS
#: Compressed bytes read at a time, and the most one decompression step may produce: at most
#: :data:`MAX_LINE_BYTES`, so a line longer than the cap cannot hide inside one step.
_READ_BYTES = 64 * 1024
_STEP_BYTES = min(256 * 1024, MAX_LINE_BYTES)


class RecordError(ArenaError):
    """A record cannot be read or does not verify; the message names the line."""


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
    write_record_bytes(path, record_bytes(header, entries, result))


def write_record_bytes(path: Path, data: bytes) -> None:
    """Write a record's bytes (:func:`record_bytes`, or a cluster worker's) atomically."""

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


#: A decision's keys that are its bot's own (on a competition, its author's only): its note and
#: its SDK's fallback reason (docs/protocol.md, "Notes").
NOTE_KEYS: Final = ("note", "sdk_fallback")


_NOTE_MARKS = re.compile(b"|".join(re.escape(f'"{k}":'.encode()) for k in NOTE_KEYS))


def may_have_notes(path: Path) -> bool:
    """Whether the record file at ``path`` may hold a note: a key of :data:`NOTE_KEYS` in what
    its bytes decompress to, however far that goes (a truncated file too). Never wrong when it
    says ``False``; cheaper than reading the record, and true of no record written before notes
    (a note's text may make it say ``True`` needlessly: its quotes are escaped, not its words)."""
    return may_contain(path, _NOTE_MARKS, 16)


def may_contain(path: Path, pattern: re.Pattern[bytes], span: int) -> bool:
    """Whether ``pattern`` (no match longer than ``span`` bytes) is found in what the record
    file at ``path`` decompresses to, as far as it goes: every gzip member, a truncated or
    damaged file up to where it stops being gzip. Cheaper than reading the record."""
    d = zlib.decompressobj(_GZIP_WBITS)
    seen = b""
    try:
        with path.open("rb") as f:
            pending = f.read(_READ_BYTES)
            while pending:
                seen = seen[-span:] + d.decompress(pending)
                if pattern.search(seen) is not None:
                    return True
                if d.eof and d.unused_data:  # another gzip member follows
                    pending, d = d.unused_data, zlib.decompressobj(_GZIP_WBITS)
                else:
                    pending = f.read(_READ_BYTES)
    except zlib.error:
        pass  # not gzip past here: nothing more a reader could decompress
    return False


def without_notes(record: Record, keep: Container[int] = ()) -> Record | None:
    """``record`` without the notes of the seats not in ``keep`` (:data:`NOTE_KEYS`), or
    ``None`` when it has none to take out. What is left verifies as the original did."""

    def private(e: dict[str, Any]) -> bool:
        return e.get("type") == "decision" and e.get("seat") not in keep

    if not any(private(e) and k in e for e in record.entries for k in NOTE_KEYS):
        return None
    entries = [
        {k: v for k, v in e.items() if k not in NOTE_KEYS} if private(e) else e
        for e in record.entries
    ]
    return Record(record.header, entries, record.result)


def _shown(value: Any, limit: int = 40) -> str:
    """A value from a record as short JSON text, for an error message."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


def _refuse_unless_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise RecordError(f"{path}: is a directory, not a record file")
    kind = (
        "a named pipe"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a file"
    )
    raise RecordError(f"{path}: not a regular file ({kind}); records are read from files only")


def _open_record(path: Path) -> BinaryIO:
    """``path`` opened for reading; :class:`RecordError` unless it is a regular file.

    Checked before opening (opening a FIFO blocks until someone writes to it, opening a device
    may do something) and again on the open file, which is opened non-blocking so that not even
    a FIFO put in its place meanwhile can block.
    """

    def cannot(err: OSError) -> RecordError:
        return RecordError(f"{path}: cannot read: {err.strerror or err}")

    try:
        _refuse_unless_regular(path, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise cannot(err) from None
    try:
        _refuse_unless_regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
        return open(fd, "rb", closefd=True)  # the caller closes it
    except OSError as err:
        os.close(fd)
        raise cannot(err) from None
    except BaseException:
        os.close(fd)
        raise


def _damaged(path: Path, why: str) -> RecordError:
    return RecordError(f"{path}: damaged gzip data ({why}); the file was cut short or corrupted")


#: zlib's words for a failed trailer check, in the terms of the gzip format.
_ZLIB_WHY = {
    "incorrect data check": "CRC-32 check failed",
    "incorrect length check": "length check failed",
}


def _inflate(path: Path, f: BinaryIO) -> bytearray:
    """The decompressed bytes of the gzip file ``f``, held to the caps.

    Only the first two bytes decide "not a gzip file"; a file that starts like gzip is then
    decompressed a bounded step at a time, so no more than :data:`MAX_RECORD_BYTES` is ever
    held, and no line grows past :data:`MAX_LINE_BYTES`. zlib checks each member's CRC-32 and
    length; several members (``cat a.gz b.gz``) are one stream, as for gzip itself.
    """
    if f.read(len(_GZIP_MAGIC)) != _GZIP_MAGIC:
        raise RecordError(f"{path}: not a gzip file (records are gzip-compressed)")
    size = os.fstat(f.fileno()).st_size
    if size > MAX_RECORD_BYTES:
        raise RecordError(
            f"{path}: a file of {size} bytes, larger than the {_mib(MAX_RECORD_BYTES)} cap on a "
            "record"
        )
    f.seek(0)
    out = bytearray()
    lines = 0  # complete lines so far
    open_line = 0  # bytes of the line not yet ended
    d = zlib.decompressobj(_GZIP_WBITS)
    data = b""
    at_end = False
    while True:
        if not data and not at_end:
            data = f.read(_READ_BYTES)
            at_end = not data
        if d.eof:  # between members
            if not data and at_end:
                return out
            if len(data) < len(_GZIP_MAGIC) and not at_end:
                more = f.read(_READ_BYTES)
                at_end = not more
                data += more
                continue
            if not data.startswith(_GZIP_MAGIC):
                raise _damaged(path, "bytes after the end of the gzip stream")
            d = zlib.decompressobj(_GZIP_WBITS)
        fed = data
        try:
            piece = d.decompress(data, _STEP_BYTES)
        except zlib.error as err:
            why = str(err).rpartition(": ")[2]
            raise _damaged(path, _ZLIB_WHY.get(why, why)) from None
        data = d.unused_data if d.eof else d.unconsumed_tail
        if not piece:
            if d.eof:
                continue
            if at_end and not data:
                raise _damaged(path, "truncated: the gzip stream ends early")
            if data and len(data) == len(fed):
                raise _damaged(path, "the decompressor makes no progress")
            continue
        if len(out) + len(piece) > MAX_RECORD_BYTES:
            raise RecordError(
                f"{path}: more than {_mib(MAX_RECORD_BYTES)} uncompressed, the cap on a record; "
                "not read further"
            )
        first = piece.find(b"\n")
        if first >= 0:
            # Lines that start and end inside the piece are shorter than the piece.
            if open_line + first > MAX_LINE_BYTES:
                raise _long_line(path, lines + 1)
            lines += piece.count(b"\n")
            open_line = len(piece) - piece.rfind(b"\n") - 1
        else:
            open_line += len(piece)
        if open_line > MAX_LINE_BYTES:
            raise _long_line(path, lines + 1)
        out += piece


def _long_line(path: Path, number: int) -> RecordError:
    return RecordError(
        f"{path}: line {number}: longer than the {_mib(MAX_LINE_BYTES)} cap on a record line"
    )


def _split(text: bytearray) -> Iterator[bytearray]:
    """The lines of ``text`` (without their ``\\n``; no empty line after a final ``\\n``)."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find(b"\n", start)
        if stop < 0:
            yield text[start:]
            return
        yield text[start:stop]
        start = stop + 1


def _too_deep(line: bytearray, obj: Any) -> bool:
    """Whether ``obj`` (parsed from ``line``) nests deeper than :data:`MAX_DEPTH`."""
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return False  # cannot nest deeper than it has brackets
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in value.values() if isinstance(value, dict) else value:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def _parse(path: Path, number: int, line: bytearray) -> dict[str, Any]:
    """One line as a JSON object; :class:`RecordError` for anything else, however hostile."""
    try:
        obj = json.loads(line)
    except RecursionError:
        raise RecordError(f"{path}: line {number}: not a JSON object (nested too deep)") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RecordError(f"{path}: line {number}: not valid JSON") from None
    except ValueError:  # the only other one: Python's limit on the digits of an integer
        raise RecordError(
            f"{path}: line {number}: not a JSON object (number too long: more than "
            f"{sys.get_int_max_str_digits()} digits)"
        ) from None
    if not isinstance(obj, dict):
        raise RecordError(f"{path}: line {number}: not a JSON object")
    if _too_deep(line, obj):
        raise RecordError(
            f"{path}: line {number}: not a JSON object (nested too deep: more than "
            f"{MAX_DEPTH} levels)"
        )
    return obj


def read_record(path: Path) -> Record:
    """Read and check a record's hash chain and schema; raises :class:`RecordError`.

    Whatever the file holds, the only failure is a one-line :class:`RecordError`: anything but
    a regular file is refused unopened, memory stays within the caps (:data:`MAX_RECORD_BYTES`,
    :data:`MAX_LINE_BYTES`, :data:`MAX_DEPTH`), and damaged gzip data is told apart from a
    file that is not gzip at all.
    """
    with _open_record(path) as f:
        try:
            text = _inflate(path, f)
        except OSError as err:
            raise RecordError(f"{path}: cannot read: {err.strerror or err}") from None
    prev = GENESIS
    objs: list[dict[str, Any]] = []
    for number, line in enumerate(_split(text), start=1):
        obj = _parse(path, number, line)
        if obj.get("prev") != prev:
            raise RecordError(
                f"{path}: line {number}: hash chain broken (the line or the one before was edited)"
            )
        # Re-encoding canonically must give the same bytes, else the line was altered in place.
        if record_line({k: v for k, v in obj.items() if k != "prev"}, prev) != line:
            raise RecordError(f"{path}: line {number}: not in canonical form (edited)")
        prev = line_digest(line)
        objs.append(obj)
    del text
    if not objs:
        raise RecordError(f"{path}: empty record")
    header = objs[0]
    if header.get("type") != "header":
        raise RecordError(f"{path}: line 1: not a header")
    schema = header.get("schema")
    # An integer: 1.0 and true equal 1 in Python, but are not what the writer writes.
    if not (isinstance(schema, int) and not isinstance(schema, bool) and schema in READ_SCHEMAS):
        readable = " and ".join(str(n) for n in READ_SCHEMAS)
        raise RecordError(
            f"{path}: line 1: record schema {_shown(schema)} is not supported "
            f"(this arena reads schemas {readable})"
        )
    if len(objs) < 2 or objs[-1].get("type") != "result":
        raise RecordError(f"{path}: truncated: no result line at the end")
    strip = ("prev", "type")
    return Record(
        header={k: v for k, v in header.items() if k not in strip},
        entries=[{k: v for k, v in o.items() if k != "prev"} for o in objs[1:-1]],
        result={k: v for k, v in objs[-1].items() if k not in strip},
    )


#: What a connection line says happened to a seat's bot while the match ran.
CONNECTION_EVENTS = frozenset({"lost", "resumed", "taken_over"})


def connection_entry(seat: int, event: str, session: str) -> dict[str, Any]:
    """A record entry for a change of ``seat``'s connection: ``event`` is one of
    :data:`CONNECTION_EVENTS`, ``session`` the connection's id (the one that was lost, or the
    one that resumed or took over the seat)."""
    return {"type": "connection", "seat": seat, "event": event, "session": session}


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
