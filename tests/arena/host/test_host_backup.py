"""``arena host backup`` and ``arena host restore``, as real processes: a backup taken while a
host plays its ladder, restored, and a host on the restored directory that continues with
nothing lost or counted twice; and each refusal in one line."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.arena.host.processes import Host, arena_host, competition_config
from tests.waiting import wait_until

#: A bot that thinks a little: a match lasts seconds, so a backup meets matches in flight.
SLOW_BOT = b"""import time
from cardarena import RandomBot, run_bot

class Slow(RandomBot):
    def choose(self, game, observation, legal):
        time.sleep(0.1)
        return super().choose(game, observation, legal)

run_bot(Slow())
"""


def _rows(directory: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _done(directory: Path) -> dict[str, Any]:
    rows = _rows(directory, "SELECT match_id, result FROM matches WHERE state = 'done'")
    return {m: json.loads(r) for m, r in rows}


def _refused(out: subprocess.CompletedProcess[str], words: str) -> None:
    """Exit status 2, one line naming the trouble, no traceback."""
    assert out.returncode == 2, out.stdout + out.stderr
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def _consistent(api: httpx.Client) -> list[dict[str, Any]] | None:
    """The finished matches, when the leaderboard counts each exactly once for every version at
    its table (``None`` while a match finished between the two reads: look again)."""
    listed: list[dict[str, Any]] = api.get("/api/v1/matches", params={"limit": 1000}).json()
    rows = api.get("/api/v1/leaderboard").json()
    again = api.get("/api/v1/matches", params={"limit": 1000}).json()
    if len(again) != len(listed):
        return None
    ids = [m["match_id"] for m in listed]
    assert len(ids) == len(set(ids))
    counted = {r["ref"]: r["matches"] for r in rows}
    seated = {ref: sum(ref in m["seats"] for m in listed) for ref in counted}
    return listed if counted == seated else None


@pytest.mark.slow
@pytest.mark.host
def test_a_backup_taken_mid_ladder_restores_into_a_host_that_plays_on(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config())
    host = Host(config, tmp_path / "cup", None)
    dest = tmp_path / "backups" / "monday"
    with host.running():
        for name in ("alice", "bob"):
            host.submit_as_new_author(name, SLOW_BOT)
        wait_until(lambda: len(_done(host.directory)) >= 4, 240, what="the ladder to play")
        pending = "SELECT count(*) FROM matches WHERE state = 'pending'"
        wait_until(lambda: _rows(host.directory, pending)[0][0], 60, what="a match in flight")
        # While the ladder plays on.
        out = arena_host("backup", config, dest, "--dir", host.directory, "--json")
        assert out.returncode == 0, out.stdout + out.stderr
        manifest = json.loads(out.stdout)
    # A whole backup under DEST, nothing left beside it.
    assert not dest.with_name("monday.partial").exists()
    assert json.loads((dest / "backup.json").read_text()) == manifest
    at_backup = _done(dest)
    assert manifest["counts"]["matches_done"] == len(at_backup) >= 4
    assert manifest["schema_version"] >= 1 and len(manifest["database_sha256"]) == 64
    assert _rows(dest, pending)[0][0] > 0, "the backup was meant to catch matches in flight"
    # Every finished match's record, every version's snapshot; private/ for the owner only.
    for (record,) in _rows(dest, "SELECT record_path FROM matches WHERE state = 'done'"):
        assert (dest / record).is_file()
    for (sha256,) in _rows(dest, "SELECT sha256 FROM versions"):
        assert (dest / "snapshots" / sha256 / "cardarena.toml").is_file()
    assert (dest / "private").stat().st_mode & 0o777 == 0o700
    assert (dest / "private" / "admin.token").is_file()
    assert not (dest / "private" / "host.json").exists()

    restored = tmp_path / "restored"
    out = arena_host("restore", dest, restored)
    assert out.returncode == 0, out.stdout + out.stderr
    assert not (restored / "backup.json").exists()
    again = Host(config, restored, None)
    with again.running(), again.client() as api:
        first = wait_until(lambda: _consistent(api), 60, what="a consistent first look")
        # The matches finished at backup time are there, each once.
        assert set(at_backup) <= {m["match_id"] for m in first}
        wait_until(lambda: len(_done(restored)) >= len(at_backup) + 4, 240, what="more matches")
        later = wait_until(lambda: _consistent(api), 60, what="a consistent later look")
        assert len(later) >= len(at_backup) + 4
    after = _done(restored)
    assert all(after[m] == result for m, result in at_backup.items())


@pytest.mark.host  # a real host for many seconds: make test-host
def test_backup_and_restore_refuse_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config())
    directory = tmp_path / "cup"
    added = arena_host("add-author", config, "alice", "--dir", directory)
    assert added.returncode == 0, added.stderr
    _refused(arena_host("backup", config, tmp_path / "b", "--dir", tmp_path), "no competition")
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    _refused(arena_host("backup", config, full, "--dir", directory), "not empty")
    _refused(arena_host("backup", config, directory / "b", "--dir", directory), "inside")
    # An empty DEST is fine.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert arena_host("backup", config, empty, "--dir", directory).returncode == 0
    _refused(arena_host("restore", empty, full), "not empty")
    _refused(arena_host("restore", full, tmp_path / "r1"), "no backup.json")
    # A restored directory is a competition directory: the host's own store opens it.
    assert arena_host("restore", empty, tmp_path / "r2").returncode == 0
    assert arena_host("add-author", config, "bob", "--dir", tmp_path / "r2").returncode == 0
    # So is a plain copy of a backup, its manifest beside the database.
    shutil.copytree(empty, tmp_path / "r4", symlinks=True)
    assert arena_host("add-author", config, "carol", "--dir", tmp_path / "r4").returncode == 0
    # A damaged database in the backup: against the manifest, then against SQLite's check.
    db = empty / "competition.sqlite"
    data = bytearray(db.read_bytes())
    data[4096:8192] = b"\xa5" * 4096
    db.write_bytes(bytes(data))
    _refused(arena_host("restore", empty, tmp_path / "r3"), "SHA-256")
    manifest = json.loads((empty / "backup.json").read_text())
    out = subprocess.run(["sha256sum", str(db)], capture_output=True, text=True, check=True)
    manifest["database_sha256"] = out.stdout.split()[0]
    (empty / "backup.json").write_text(json.dumps(manifest))
    _refused(arena_host("restore", empty, tmp_path / "r3"), "damaged")
    assert not (tmp_path / "r3").exists() and not (tmp_path / "r3.partial").exists()
