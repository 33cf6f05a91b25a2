"""A second ``arena demo`` on the same ``--out`` is refused in one line (exit status 2, as for a
second ``arena tournament``) and deletes nothing: not while a demo runs there, not between two
of its games, not while an ``arena tournament`` runs in one of its game directories."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.demo import MARKER, demo_output, prepare_output
from arena.tournament.store import DB_NAME, Store
from engine import game_ids
from tests.waiting import wait_until

#: Every test here runs `arena demo` as a process: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

ARENA = str(Path(sys.executable).parent / "arena")


def demo(out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, "demo", "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


#: Files a running tournament makes and deletes itself (SQLite's journals, a record being
#: written): they may come and go between two looks.
TRANSIENT = ("-journal", "-wal", "-shm", ".tmp")


def files(out: Path) -> dict[str, int]:
    """Every lasting file under ``out`` with its inode (a file deleted and made again changes
    it)."""
    found = {}
    for p in out.rglob("*"):
        with contextlib.suppress(FileNotFoundError):  # a transient file gone meanwhile
            if p.is_file() and not p.name.endswith(TRANSIENT):
                found[str(p.relative_to(out))] = p.stat().st_ino
    return found


def assert_refused(proc: subprocess.CompletedProcess[str], says: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), proc.stderr
    assert says in lines[0], lines[0]


def test_a_second_demo_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    first = subprocess.Popen(
        [ARENA, "demo", "--out", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # Wait until the first demo plays its first game (it has emptied its output by then).
        def playing() -> bool:
            assert first.poll() is None, "the first demo ended early"
            return any((out / g / DB_NAME).exists() for g in game_ids())

        wait_until(playing, 120, what="the first demo to start a game")
        before = files(out)
        assert_refused(demo(out), "another `arena demo` is running on this directory")
        after = files(out)
        # Everything the first demo had made is still there, the same files.
        assert {name: after.get(name) for name in before} == before
        assert first.poll() is None, "the first demo did not survive the second"
    finally:
        # Ctrl-C for the first demo (and its bots): the test needs no more of it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGINT)
        try:
            first.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()


def test_a_demo_between_two_of_its_games_still_holds_its_output(tmp_path: Path) -> None:
    # No game's tournament lock is held at that moment, only the demo's own.
    out = tmp_path / "demo"
    with demo_output(out):
        (out / "whist").mkdir()
        (out / "whist" / DB_NAME).write_text("the first game's results")
        assert_refused(demo(out), "another `arena demo` is running on this directory")
        assert (out / "whist" / DB_NAME).read_text() == "the first game's results"
        assert (out / MARKER).is_file()
    prepare_output(out)  # once the demo is over, the next one may replace its output
    assert [p.name for p in out.iterdir()] == [MARKER]


def test_the_demo_does_not_delete_a_running_tournament(tmp_path: Path) -> None:
    # An `arena tournament --out DEMO/whist` (or a demo from before the demo's own lock).
    out = tmp_path / "demo"
    prepare_output(out)
    store = Store(out / "whist" / DB_NAME)
    try:
        store.lock()
        (out / "spoil_five").mkdir()
        before = files(out)
        assert_refused(demo(out), f"{out / 'whist'}: an `arena tournament` is running")
        assert files(out) == before
    finally:
        store.close()
    prepare_output(out)
    assert [p.name for p in out.iterdir()] == [MARKER]
