"""Match records: round trip, verification, and every way a record can be damaged."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.records.format import GENESIS, RecordError, read_record, write_record
from arena.records.replay import verify
from arena.selfplay import recorded_match
from engine import get_game
from engine.records import line_digest as _digest
from engine.records import record_line as _line


@pytest.fixture
def record(tmp_path: Path) -> Path:
    path = tmp_path / "whist.jsonl.gz"
    recorded_match(get_game("whist"), None, {"points_to_win": "5"}, 11, path)
    return path


def _lines(path: Path) -> list[bytes]:
    return gzip.decompress(path.read_bytes()).split(b"\n")[:-1]


def _rewrite(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))


def test_round_trip_and_verify(record: Path) -> None:
    rec = read_record(record)
    assert rec.header["game"] == "whist"
    decisions = list(rec.decisions())
    assert verify(record) == len(decisions) > 0
    assert rec.result["reason"] == "normal"


def test_one_byte_changed_is_detected(record: Path) -> None:
    lines = _lines(record)
    # Change a played card inside a middle line without fixing the chain.
    i = next(n for n, line in enumerate(lines) if b'"kind":"play"' in line and n > 20)
    lines[i] = lines[i].replace(b'"seat":', b'"seat": ', 1)
    _rewrite(record, lines)
    with pytest.raises(RecordError, match=f"line {i + 1}"):
        read_record(record)


def test_edit_with_rehashed_chain_is_caught_by_replay(record: Path) -> None:
    # A forger who recomputes every hash still cannot change what happened: replay diverges.
    rec = read_record(record)
    entries = rec.entries
    idx = next(i for i, e in enumerate(entries) if e["type"] == "decision")
    seat = entries[idx]["seat"]
    other = next(
        e["card"]
        for e in entries[idx + 1 :]
        if e["type"] == "event" and e["kind"] == "play" and e["seat"] != seat
    )
    entries[idx] = {**entries[idx], "action": f"play:{other}"}
    write_record(record, rec.header, entries, rec.result)
    with pytest.raises(RecordError, match=r"line \d+"):
        verify(record)


def test_truncated_record(record: Path) -> None:
    lines = _lines(record)
    _rewrite(record, lines[: len(lines) // 2])
    with pytest.raises(RecordError, match="truncated"):
        read_record(record)
    raw = record.read_bytes()
    record.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(RecordError, match=r"truncated|corrupt"):
        read_record(record)


def test_other_schema_version(record: Path) -> None:
    lines = _lines(record)
    first = json.loads(lines[0])
    first["schema"] = 99
    # Rebuild the chain honestly around the changed header so only the schema is wrong.
    first.pop("prev")
    new = [_line(first, GENESIS)]
    for raw in lines[1:]:
        o = json.loads(raw)
        o.pop("prev")
        new.append(_line(o, _digest(new[-1])))
    _rewrite(record, new)
    with pytest.raises(RecordError, match="schema 99 is not supported"):
        read_record(record)


def test_not_gzip(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text('{"type": "header"}\n')
    with pytest.raises(RecordError, match="not a gzip file"):
        read_record(path)


def test_cli_errors_are_one_line(tmp_path: Path, record: Path) -> None:
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"\x00garbage")
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", "verify", str(record), str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("ok ")
    assert out[1].startswith("FAIL ") and "not a gzip file" in out[1]


def test_atomic_write_leaves_no_partial_file(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl.gz"

    class Boom:
        def __iter__(self) -> object:
            raise RuntimeError("crash mid-write")

    with pytest.raises(RuntimeError):
        write_record(path, {"game": "whist"}, Boom(), {})  # type: ignore[arg-type]
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("game_id", ["whist", "tennis_whist", "spoil_five", "forty_five", "tennis"])
def test_every_game_records_and_verifies(tmp_path: Path, game_id: str) -> None:
    path = tmp_path / f"{game_id}.jsonl.gz"
    recorded_match(get_game(game_id), None, {}, 5, path)
    assert verify(path) > 0


def test_a_record_that_cannot_be_written_is_one_record_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(RecordError, match=r"a-file/r\.jsonl\.gz: cannot write the match record"):
        write_record(blocker / "r.jsonl.gz", {"match_id": "m"}, [], {})
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]
