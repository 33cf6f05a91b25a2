"""A tournament killed with kill -9 while writing a record leaves ``records/.<id>.jsonl.gz.*.tmp``;
the resume removes them before it plays anything, and nothing else."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.records.format import remove_stale_temps, write_record
from tests.arena.tournament.test_tournament_resume import done_count
from tests.waiting import wait_until

ARENA = str(Path(sys.executable).parent / "arena")

#: Four short tennis matches between the two reference bots.
CONFIG = """
game = "tennis"
seed = 13
matches_per_pairing = 4
duplicate = false
concurrency = 2
[options]
sets_to_win = 1
[[bots]]
name = "random"
[[bots]]
name = "rules"
"""


def leftover(records: Path, match_id: str) -> Path:
    """A temp file as :func:`write_record` makes it, left as a kill -9 mid-write leaves it."""
    fd, name = tempfile.mkstemp(prefix=f".{match_id}.jsonl.gz.", suffix=".tmp", dir=records)
    with open(fd, "wb") as f:
        f.write(b"\x1f\x8b half a record")
    return Path(name)


def tournament(cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [ARENA, "tournament", "t.toml", "--out", "out", "--quiet", "--no-sandbox"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


@pytest.mark.slow
def test_a_resume_removes_the_temp_files_a_killed_writer_left(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(CONFIG)
    out = tmp_path / "out"
    # Kill -9 the runner (its whole group) once one match is stored: the others are pending.
    proc = tournament(tmp_path)

    def stored() -> bool:
        if done_count(out / "results.sqlite") >= 1:
            return True
        assert proc.poll() is None, "the tournament ended before it could be killed"
        return False

    wait_until(stored, 120, what="the tournament to store a match")
    with contextlib.suppress(ProcessLookupError):  # all four may be done already: still valid
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    records = out / "records"
    stale = [leftover(records, "t0-d0-r1"), leftover(records, "t0-d0-r0")]
    keep = [records / ".notes", records / "notes.tmp"]
    for path in keep:
        path.write_text("not a record's temp file")
    before = sorted(p.name for p in records.glob("*.jsonl.gz"))
    # The resume plays the pending matches and leaves no temp file behind.
    resume = tournament(tmp_path)
    _, err = resume.communicate(timeout=300)
    assert resume.returncode == 0, err.decode()
    assert not any(p.exists() for p in stale)
    assert not list(records.glob(".*.tmp"))
    assert all(p.read_text() == "not a record's temp file" for p in keep)
    after = sorted(p.name for p in records.glob("*.jsonl.gz"))
    assert set(before) <= set(after) and len(after) == 4
    verify = subprocess.run(
        [ARENA, "replay", "verify", *after], cwd=records, capture_output=True, check=False
    )
    assert verify.returncode == 0, verify.stdout.decode()


def test_only_temp_files_of_records_are_removed(tmp_path: Path) -> None:
    record = tmp_path / "m1.jsonl.gz"
    write_record(record, {"game": "tennis"}, [], {"reason": "normal"})
    stale = leftover(tmp_path, "m2")
    others = [tmp_path / ".m1.jsonl.gz", tmp_path / "m1.jsonl.gz.x.tmp", tmp_path / ".log.tmp"]
    for path in others:
        path.write_text("keep")
    assert remove_stale_temps(tmp_path) == 1
    assert not stale.exists() and record.exists()
    assert all(p.read_text() == "keep" for p in others)
    assert remove_stale_temps(tmp_path / "missing") == 0
