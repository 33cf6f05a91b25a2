"""Kill -9 and resume: a tournament killed at any point and run again ends with the same table as
an uninterrupted run of the same config and seed, each match counted once."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.store import DB_NAME
from tests.waiting import wait_until

#: Every test here plays (and kills) whole tournaments: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

ARENA = str(Path(sys.executable).parent / "arena")

#: Four bots (two of each reference bot under different names), short whist rubbers.
CONFIG = """
game = "whist"
seed = 5
concurrency = 2
matches_per_pairing = 2
[options]
points_to_win = 2
games_per_rubber = 1
[time_control]
move_ms = 5000
[[bots]]
name = "random"
[[bots]]
name = "rules"
[[bots]]
name = "random2"
command = "arena bot random"
[[bots]]
name = "rules2"
command = "arena bot rules"
"""
TOTAL = 12  # C(4, 2) pairings × 2 sides
#: The same, long enough that the runner is still playing when it is interrupted: CONFIG's twelve
#: matches can all end while a second runner starts up and is refused.
LONG_CONFIG = CONFIG.replace("matches_per_pairing = 2", "matches_per_pairing = 20")
LONG_TOTAL = 120


def done_count(db: Path) -> int:
    """Finished matches, read while the tournament runs (WAL lets a reader in)."""
    if not db.exists():
        return -1
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            row = con.execute("SELECT COUNT(*) FROM matches WHERE status='done'").fetchone()
    except sqlite3.OperationalError:  # tables not created yet
        return -1
    return int(row[0])


def running(pid: int) -> bool:
    """Whether process ``pid`` is still there and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (the bot processes, each leading its own process group)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            out.append(int(entry.name))
    return out


def run_and_kill(cwd: Path, out: str, at_least: int) -> int:
    """Start the tournament, SIGKILL it once ``at_least`` matches are stored (or, for 0, as soon
    as the results file exists); return how many were stored when it died."""
    proc = subprocess.Popen(
        [ARENA, "tournament", "t.toml", "--out", out],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    db = cwd / out / DB_NAME
    try:
        wait_until(
            lambda: done_count(db) >= at_least or proc.poll() is not None,
            120,
            what=f"the tournament to store {at_least} matches",
        )
        assert proc.poll() is None, "the tournament finished before it could be killed"
        children_left = children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Nothing a killed arena started outlives it: its reaper (one of its children) stops the rest.
    wait_until(
        lambda: not [pid for pid in children_left if running(pid)],
        15,
        what="the killed arena's bots and reaper to go",
    )
    return done_count(db)


def finish(cwd: Path, out: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [ARENA, "tournament", "t.toml", "--out", out],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def results(cwd: Path, out: str) -> dict[str, tuple[str, str, str, int]]:
    with contextlib.closing(sqlite3.connect(cwd / out / DB_NAME)) as con:
        rows = con.execute("SELECT match_id, seats, status, result, attempts FROM matches")
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


def test_kill_9_at_several_points_resumes_to_the_same_final_table(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(CONFIG)
    reference = finish(tmp_path, "straight")
    expected = results(tmp_path, "straight")
    assert len(expected) == TOTAL

    stored_at_kill = [run_and_kill(tmp_path, "killed", n) for n in (0, 3, 7)]
    # Each kill happened mid-tournament, and no result was lost by a later kill.
    assert stored_at_kill == sorted(stored_at_kill)
    assert 0 <= stored_at_kill[0] < TOTAL and 7 <= stored_at_kill[-1] < TOTAL
    resumed = finish(tmp_path, "killed")
    assert f"resuming with {stored_at_kill[-1]} already played" in resumed.stderr

    got = results(tmp_path, "killed")
    assert set(got) == set(expected)
    for match_id, (seats, status, result, _) in expected.items():
        g_seats, g_status, g_result, attempts = got[match_id]
        assert (g_seats, g_status) == (seats, "done") and status == "done"
        # Same config and seed: the same match, whether or not it was interrupted and replayed.
        assert json.loads(g_result) == json.loads(result), match_id
        assert attempts >= 1
    # Matches cut off by a kill were played again from the start (and counted once).
    assert any(attempts >= 2 for _, _, _, attempts in got.values())
    # The final table (cross-table and leaderboard) is identical.
    assert resumed.stdout == reference.stdout
    assert "12/12 matches" in resumed.stdout


def test_ctrl_c_stops_cleanly_and_a_second_runner_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(LONG_CONFIG)
    proc = subprocess.Popen(
        [ARENA, "tournament", "t.toml", "--out", "out"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A child of a non-interactive shell may inherit SIGINT ignored; a user's Ctrl-C is not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    db = tmp_path / "out" / DB_NAME

    # Wait for a stored match and for bots at play: between two matches there may be none.
    def bots_at_play() -> list[int]:
        assert proc.poll() is None, "the tournament ended before it was interrupted"
        return children(proc.pid) if done_count(db) >= 1 else []

    bots = wait_until(bots_at_play, 120, what="a stored match and bots at play")
    # A second runner on the same directory is refused while this one holds it.
    second = subprocess.run(
        [ARENA, "tournament", "t.toml", "--out", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert second.returncode == 2
    assert second.stderr.strip() == (
        "arena: error: out: another `arena tournament` is running on this directory"
    )
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1] == "arena: interrupted"
    assert "run the same command again to resume" in lines[-2]
    # Every bot process of the interrupted matches was stopped (a bot left behind would play
    # on for its 10 s --give-up; one the arena killed may be a zombie for a moment).
    wait_until(lambda: not [pid for pid in bots if running(pid)], 3, what="the bots to be stopped")
    assert 1 <= done_count(db) < LONG_TOTAL
