"""Hostile record files: every reader (``arena replay verify|show|html|ask``) refuses them in one
line, in bounded time and memory, and never with a traceback (issue 21, item 7).

Each hostile file is handed to the real CLI in a subprocess, with a timeout (a FIFO must not
block a reader) and an address-space limit (a gzip bomb or a sparse file read whole fails the
test). ``verify`` reports a bad file as one ``FAIL …`` line on stdout and exit status 1 (its
per-file report, see docs/records.md); ``show``, ``html`` and ``ask`` end with one
``arena: error: …`` line on stderr and exit status 2. ``ask`` is given a bot that must never be
started: the record is refused before any bot runs.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.cli.main import main
from arena.records.format import (
    GENESIS,
    RecordError,
    encode_record,
    read_record,
)
from arena.records.replay import verify
from arena.records.view import load_replay
from engine.records import line_digest as _digest
from engine.records import record_line as _line
from tests.arena.replay_truth import make_record

COMMANDS = ["verify", "show", "html", "ask"]
#: The address space each reader may use: far more than a record needs, far less than reading
#: a bomb's 2 GiB (or a sparse file's 1 GiB) whole.
MEMORY_LIMIT = 1 << 30
#: Seconds a reader may take on any hostile file (they take well under one).
TIMEOUT = 15.0
#: The bot `ask` is given: it must never start (the record is refused first).
NEVER_STARTED = "echo BOT-WAS-STARTED"
MIB = 1 << 20


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_reader(command: str, record: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``arena replay COMMAND RECORD …`` in a subprocess with bounded memory and time."""
    args = [sys.executable, "-m", "arena.cli", "replay", command, str(record)]
    if command == "html":
        args += ["-o", str(tmp_path / "page.html")]
    elif command == "ask":
        args += ["--at", "0", "--bot", NEVER_STARTED, "--timeout", "5"]
    try:
        return subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            preexec_fn=_limit_memory,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`arena replay {command}` did not finish within {TIMEOUT:g} s on {record}")


def assert_refused(
    proc: subprocess.CompletedProcess[str], command: str, *needles: str, tmp_path: Path
) -> str:
    """One line naming the problem, the right exit status, no traceback; returns the line."""
    both = proc.stdout + proc.stderr
    assert "Traceback" not in both, both[-2000:]
    assert "BOT-WAS-STARTED" not in both
    if command == "verify":
        assert proc.returncode == 1, both[-2000:]
        assert proc.stderr == ""
        assert proc.stdout.count("\n") == 1 and proc.stdout.startswith("FAIL "), proc.stdout
        line = proc.stdout
    else:
        assert proc.returncode == 2, both[-2000:]
        assert proc.stdout == ""
        assert proc.stderr.count("\n") == 1, proc.stderr[-2000:]
        assert proc.stderr.startswith("arena: error: "), proc.stderr
        line = proc.stderr
    for needle in needles:
        assert needle in line, line
    assert len(line) < 1000, line  # names the problem; does not echo the file
    assert not (tmp_path / "page.html").exists()
    return line


def gz(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0))
    return path


# --- hostile files ---------------------------------------------------------------------------


def deep_nesting(tmp_path: Path) -> Path:
    """Line 1 is a JSON array nested 200,000 deep."""
    return gz(tmp_path / "deep.jsonl.gz", b"[" * 200_000 + b"]" * 200_000 + b"\n")


def long_number(tmp_path: Path) -> Path:
    """Line 1 holds a 5,000-digit integer (Python's int parsing stops at 4,300 digits)."""
    line = b'{"prev":"' + GENESIS.encode() + b'","schema":' + b"7" * 5000 + b',"type":"header"}'
    return gz(tmp_path / "digits.jsonl.gz", line + b"\n")


def fifo(tmp_path: Path) -> Path:
    """A named pipe nobody writes to: opening or reading it blocks."""
    path = tmp_path / "pipe.jsonl.gz"
    os.mkfifo(path)
    return path


def bomb(path: Path, unit: bytes, chunks: int, chunk: int = MIB) -> Path:
    """A valid gzip file that decompresses to ``chunks`` MiB of ``unit`` repeated, ~1 KiB per
    MiB: once deflate's window is full of the unit, each further MiB compresses to the same
    bytes, so the stream is one compressed MiB repeated, an empty final block and the trailer."""
    data = unit * (chunk // len(unit))
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    steady = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    assert c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH) == steady
    crc = 0
    for _ in range(chunks):
        crc = zlib.crc32(data, crc)
    trailer = crc.to_bytes(4, "little") + ((len(data) * chunks) & 0xFFFFFFFF).to_bytes(4, "little")
    with path.open("wb") as f:
        f.write(first)
        for _ in range(chunks - 1):
            f.write(steady)
        f.write(b"\x03\x00" + trailer)  # an empty final fixed-Huffman block, then the trailer
    return path


def test_the_bomb_builder_makes_valid_gzip(tmp_path: Path) -> None:
    small = bomb(tmp_path / "small.gz", b"ab\n", 5, chunk=3 * 1000)
    assert gzip.decompress(small.read_bytes()) == b"ab\n" * 5000


def bomb_of_spaces(tmp_path: Path) -> Path:
    """2 GiB of spaces from 2 MiB of gzip: one endless line."""
    return bomb(tmp_path / "spaces.jsonl.gz", b" ", 2048)


def bomb_of_newlines(tmp_path: Path) -> Path:
    """2 GiB of newlines: every line is short, only the total is too large."""
    return bomb(tmp_path / "newlines.jsonl.gz", b"\n", 2048)


def sparse_zeros(tmp_path: Path) -> Path:
    """A 1 GiB sparse file of zeros: not gzip, and too large to read whole."""
    path = tmp_path / "sparse.jsonl.gz"
    with path.open("wb") as f:
        f.truncate(1 << 30)
    return path


def sparse_gzip_magic(tmp_path: Path) -> Path:
    """A 1 GiB sparse file that starts like gzip: refused for its size before it is read."""
    path = tmp_path / "sparse-magic.jsonl.gz"
    with path.open("wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")
        f.truncate(1 << 30)
    return path


def _genuine(tmp_path: Path) -> bytes:
    return make_record(tmp_path, "whist", 5).read_bytes()


def flipped_inside(tmp_path: Path) -> Path:
    """One byte flipped in the middle of the deflate stream of a genuine record."""
    raw = bytearray(_genuine(tmp_path))
    raw[len(raw) // 2] ^= 0x10
    path = tmp_path / "flipped.jsonl.gz"
    path.write_bytes(bytes(raw))
    return path


def flipped_crc(tmp_path: Path) -> Path:
    """One byte of the gzip trailer's CRC-32 flipped: the data decompresses, the check fails."""
    raw = bytearray(_genuine(tmp_path))
    raw[-8] ^= 0xFF
    path = tmp_path / "crc.jsonl.gz"
    path.write_bytes(bytes(raw))
    return path


def truncated(tmp_path: Path) -> Path:
    """A genuine record cut in the middle of its gzip stream."""
    raw = _genuine(tmp_path)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(raw[: len(raw) // 2])
    return path


def trailing_garbage(tmp_path: Path) -> Path:
    """A genuine record followed by bytes that are not another gzip member."""
    path = tmp_path / "trailing.jsonl.gz"
    path.write_bytes(_genuine(tmp_path) + b"garbage")
    return path


#: name: (builder, what the one line must say)
HOSTILE: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "deep_nesting": (deep_nesting, ("line 1", "nested too deep")),
    "long_number": (long_number, ("line 1", "number too long")),
    "fifo": (fifo, ("not a regular file",)),
    "bomb_of_spaces": (bomb_of_spaces, ("line 1", "longer than", "cap")),
    "bomb_of_newlines": (bomb_of_newlines, ("uncompressed", "cap")),
    "sparse_zeros": (sparse_zeros, ("not a gzip file",)),
    "sparse_gzip_magic": (sparse_gzip_magic, ("larger than", "cap")),
    "flipped_inside": (flipped_inside, ("damaged gzip data",)),
    "flipped_crc": (flipped_crc, ("damaged gzip data", "CRC")),
    "truncated": (truncated, ("damaged gzip data", "truncated")),
    "trailing_garbage": (trailing_garbage, ("damaged gzip data",)),
}


@pytest.mark.slow  # a real arena process per case
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_is_refused_in_one_line(case: str, command: str, tmp_path: Path) -> None:
    build, needles = HOSTILE[case]
    record = build(tmp_path)
    line = assert_refused(
        run_reader(command, record, tmp_path), command, *needles, tmp_path=tmp_path
    )
    if case not in ("fifo", "sparse_zeros", "sparse_gzip_magic"):
        assert "not a gzip file" not in line


#: The hostile files a reader can meet in the test process itself: no bomb or sparse file (they
#: need the memory limit of a subprocess) and no FIFO (today's reader blocked on it for good).
IN_PROCESS = sorted(c for c in HOSTILE if not c.startswith(("bomb", "sparse")) and c != "fifo")


@pytest.mark.parametrize("case", IN_PROCESS)
def test_read_record_raises_a_record_error(case: str, tmp_path: Path) -> None:
    build, needles = HOSTILE[case]
    with pytest.raises(RecordError) as caught:
        read_record(build(tmp_path))
    for needle in needles:
        assert needle in str(caught.value)


# --- lines the JSON parser accepts but a record never has ----------------------------------


def _chained(objs: list[dict[str, Any]]) -> bytes:
    lines, prev = [], GENESIS
    for obj in objs:
        lines.append(_line(obj, prev))
        prev = _digest(lines[-1])
    return b"\n".join(lines) + b"\n"


def test_nesting_the_parser_accepts_is_still_refused(tmp_path: Path) -> None:
    # 500 deep parses in Python, but every later walk of the value (the HTML page's) would be
    # a recursion hazard: records nest 3 deep, the reader refuses more than its cap.
    deep: Any = 0
    for _ in range(500):
        deep = [deep]
    path = gz(tmp_path / "deep500.jsonl.gz", _chained([{"type": "header", "x": deep}]))
    with pytest.raises(RecordError, match=r"line 1: .*nested too deep"):
        read_record(path)


def test_a_line_longer_than_the_cap_is_refused(tmp_path: Path) -> None:
    header = {"type": "header", "schema": 1, "pad": "x" * (8 * MIB)}
    path = gz(tmp_path / "long.jsonl.gz", _chained([header, {"type": "result"}]))
    with pytest.raises(RecordError, match=r"line 1: longer than .*cap"):
        read_record(path)


def test_invalid_utf8_is_not_valid_json(tmp_path: Path) -> None:
    path = gz(tmp_path / "latin.jsonl.gz", b'{"prev":"\xff"}\n')
    with pytest.raises(RecordError, match="line 1: not valid JSON"):
        read_record(path)


def test_an_empty_file_is_not_a_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl.gz"
    path.write_bytes(b"")
    with pytest.raises(RecordError, match="not a gzip file"):
        read_record(path)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="is a directory"):
        read_record(tmp_path)


def test_genuine_records_still_read_and_verify(tmp_path: Path) -> None:
    record = make_record(tmp_path, "spoil_five", 3)
    assert verify(record) > 0
    # Several gzip members (`cat a.gz b.gz`, some recompressors) are still one gzip file.
    text = gzip.decompress(record.read_bytes())
    cut = text.index(b"\n", len(text) // 2) + 1
    split = tmp_path / "members.jsonl.gz"
    split.write_bytes(gzip.compress(text[:cut]) + gzip.compress(text[cut:]))
    assert verify(split) == verify(record)


@pytest.mark.slow  # a real arena process per case
def test_the_caps_leave_room_for_the_longest_matches(tmp_path: Path) -> None:
    from arena.records.format import MAX_LINE_BYTES, MAX_RECORD_BYTES
    from arena.selfplay import recorded_match
    from engine import get_game

    # Whist with the longest options is the largest record (~4 MB for random play); its
    # longest line is under 1 KB.
    path = tmp_path / "long.jsonl.gz"
    recorded_match(get_game("whist"), 4, {"points_to_win": 50, "games_per_rubber": 9}, 1, path)
    text = gzip.decompress(path.read_bytes())
    assert len(text) * 10 < MAX_RECORD_BYTES
    assert max(len(line) for line in text.split(b"\n")) * 1000 < MAX_LINE_BYTES
    assert read_record(path).result


# --- headers the viewers used to accept and verify refuses ----------------------------------


@pytest.fixture(scope="module")
def genuine_lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    path = make_record(tmp_path_factory.mktemp("genuine"), "whist", 11)
    text = gzip.decompress(path.read_bytes())
    return [json.loads(line) for line in text.splitlines()]


def _with_header(
    lines: list[dict[str, Any]], change: Callable[[dict[str, Any]], None], path: Path
) -> Path:
    objs = [{k: v for k, v in o.items() if k != "prev"} for o in lines]
    objs[0] = json.loads(json.dumps(objs[0]))
    change(objs[0])
    return gz(path, _chained(objs))


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(header: dict[str, Any]) -> None:
        header[key] = value

    return change


def _seat_field(seat: int, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(header: dict[str, Any]) -> None:
        header["seats"][seat][key] = value

    return change


#: name: (the change to a genuine header, what the one line must say)
BAD_HEADERS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "schema_float": (_set("schema", 1.0), "schema 1.0"),
    "schema_true": (_set("schema", True), "schema true"),
    "schema_string": (_set("schema", "1"), 'schema "1"'),
    "seats_string": (_set("seats", "N E S W"), "seats"),
    "seat_number_string": (_seat_field(2, "seat", "2"), "seat 2"),
    "seat_number_true": (_seat_field(1, "seat", True), "seat 1"),
    "bot_name_number": (_seat_field(0, "bot_name", 7), "seat 0"),
    "seed_true": (_set("seed", True), "seed"),
    "seed_string": (_set("seed", "11"), "seed"),
    "players_float": (_set("players", 4.0), "players"),
    "players_true": (_set("players", True), "players"),
    "game_version_number": (_set("game_version", 1), "game_version"),
    "options_list": (_set("options", [["points_to_win", 1]]), "options"),
    "time_control_string": (_set("time_control", "fast"), "time_control"),
    "fault_policy_other": (_set("fault_policy", "never"), "fault_policy"),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(BAD_HEADERS))
def test_every_reader_refuses_a_header_verify_refuses(
    case: str,
    command: str,
    genuine_lines: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    change, needle = BAD_HEADERS[case]
    path = _with_header(genuine_lines, change, tmp_path / f"{case}.jsonl.gz")
    args = ["replay", command, str(path)]
    if command == "html":
        args += ["-o", str(tmp_path / "page.html")]
    elif command == "ask":
        args += ["--at", "0", "--bot", NEVER_STARTED, "--timeout", "5"]
    code = main(args)
    captured = capsys.readouterr()
    assert "BOT-WAS-STARTED" not in captured.out + captured.err
    if command == "verify":
        assert code == 1 and captured.err == ""
        line = captured.out
        assert line.startswith("FAIL ")
    else:
        assert code == 2 and captured.out == ""
        line = captured.err
        assert line.startswith("arena: error: ")
    assert line.count("\n") == 1 and needle in line and "line 1" in line, line
    assert not (tmp_path / "page.html").exists()


@pytest.mark.slow  # a real arena process per case
@pytest.mark.parametrize("case", ["schema_true", "seats_string", "seat_number_true"])
def test_a_bad_header_fails_in_a_real_process(
    case: str, genuine_lines: list[dict[str, Any]], tmp_path: Path
) -> None:
    change, needle = BAD_HEADERS[case]
    path = _with_header(genuine_lines, change, tmp_path / f"{case}.jsonl.gz")
    for command in COMMANDS:
        assert_refused(run_reader(command, path, tmp_path), command, needle, tmp_path=tmp_path)


def test_the_library_viewers_refuse_a_bad_header(
    genuine_lines: list[dict[str, Any]], tmp_path: Path
) -> None:
    from arena.records.ask import ask_command
    from arena.records.html import write_html

    path = _with_header(genuine_lines, _set("schema", 1.0), tmp_path / "float.jsonl.gz")
    for read in (
        lambda: load_replay(path),
        lambda: write_html(path, tmp_path / "page.html"),
        lambda: ask_command(path, 0, NEVER_STARTED, 5.0, io.StringIO()),
    ):
        with pytest.raises(RecordError, match=r"schema 1\.0"):
            read()


def test_a_forfeit_event_without_a_seat_is_refused_by_the_viewers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only verify used to check a forfeit's seat; show crashed on int("x").
    record = read_record(make_record(tmp_path, "whist", 4))
    first = next(i for i, e in enumerate(record.entries) if e["type"] == "decision")
    forfeit = {"type": "event", "kind": "forfeit", "seat": "x", "why": "made up"}
    entries = [*record.entries[:first], forfeit, *record.entries[first:]]
    path = tmp_path / "forfeit.jsonl.gz"
    path.write_bytes(gzip.compress(encode_record(record.header, entries, record.result)))
    for command in ("show", "ask"):
        extra = ["--at", "0", "--bot", NEVER_STARTED] if command == "ask" else []
        assert main(["replay", command, str(path), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "forfeit event without a seat" in err, err


@pytest.mark.slow
def test_ask_holds_a_huge_time_control_to_what_the_protocol_carries(
    genuine_lines: list[dict[str, Any]], tmp_path: Path
) -> None:
    # A finite number of ms passes the header check, but not the protocol's uint32 fields.
    from arena.records.ask import ask_command

    huge = {"move_ms": 1e300, "bank_ms": 5e299}
    path = _with_header(genuine_lines, _set("time_control", huge), tmp_path / "tc.jsonl.gz")
    arena = Path(sys.executable).parent / "arena"
    out = io.StringIO()
    assert ask_command(path, 0, f"{arena} bot random --seed 1", 30.0, out) in (0, 1)
    assert "bot:" in out.getvalue()
