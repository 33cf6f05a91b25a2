"""A real ``arena host`` on loopback with TLS (a certificate the test makes): authors added while it
runs, archives submitted over HTTPS (one broken: it fails validation and its author sees why), a
live bot connecting from outside, the ladder playing until every version has rated matches, a
kill -9 mid-ladder and a restart that loses nothing and counts nothing twice."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.arena.host.processes import (
    BROKEN_BOT,
    GOOD_BOT,
    Host,
    archive,
    bot_archive,
    competition_config,
    make_certificate,
)
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

CONFIG = competition_config(extra="[final]\ntop = 3\nmatches_per_pairing = 2\n")


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def host(tmp_path: Path, tls: tuple[Path, Path]) -> Iterator[Host]:
    config = tmp_path / "cup.toml"
    config.write_text(CONFIG)
    h = Host(config, tmp_path / "cup", tls)
    h.start()
    try:
        yield h
    finally:
        h.stop()


def _done_matches(directory: Path) -> dict[str, Any]:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT match_id, result FROM matches WHERE state = 'done'").fetchall()
    finally:
        con.close()
    return {m: json.loads(r) for m, r in rows}


def _done_seats(directory: Path) -> list[tuple[str, list[int]]]:
    """Each finished match and the versions at its seats."""
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT match_id, seats FROM matches WHERE state = 'done'").fetchall()
    finally:
        con.close()
    return [(m, json.loads(seats)) for m, seats in rows]


OCTET = {"Content-Type": "application/octet-stream"}


def _submit(a: httpx.Client, b: httpx.Client, c: httpx.Client) -> int:
    """Alice's and Bob's good archives, Carol's broken one (its id returned), and a hostile one
    refused in one line naming its member, nothing stored."""
    va = a.put("/api/v1/bots/alpha/versions", content=bot_archive(GOOD_BOT), headers=OCTET)
    assert va.status_code == 201, va.text
    vb = b.put(
        "/api/v1/bots/beta/versions", content=bot_archive(GOOD_BOT + b"# beta\n"), headers=OCTET
    )
    vc = c.put("/api/v1/bots/gamma/versions", content=bot_archive(BROKEN_BOT), headers=OCTET)
    assert vb.status_code == vc.status_code == 201
    assert len(va.json()["sha256"]) == 64
    evil = archive({"cardarena.toml": b'command = "python3 bot.py"\n', "../x": b"x"})
    refused = c.put("/api/v1/bots/evil/versions", content=evil, headers=OCTET)
    assert refused.status_code == 400 and '"../x"' in refused.json()["detail"]
    assert "\n" not in refused.json()["detail"]
    gamma: int = vc.json()["id"]
    return gamma


def _live_bot(host: Host, token: str, ca: Path) -> subprocess.Popen[bytes]:
    """A live bot run on "its author's own machine": it connects over TLS with its token."""
    env = {**os.environ, "ARENA_ADDRESS": host.grpc, "ARENA_TOKEN": token, "ARENA_CA_CERT": str(ca)}
    return subprocess.Popen(
        # Longer than a restart of the host can take on a loaded machine (the default, 10 s, is
        # for a server that is gone, not one being restarted).
        [sys.executable, "-m", "arena.cli", "bot", "random", "--give-up", "300"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _the_broken_version_fails_and_only_its_author_sees_why(
    a: httpx.Client, c: httpx.Client, gamma: int
) -> None:
    def verdict() -> str:
        status: str = c.get(f"/api/v1/versions/{gamma}").json()["status"]
        return status

    wait_until(lambda: verdict() not in ("pending", "validating"), 60, what="validation")
    broken = c.get(f"/api/v1/versions/{gamma}").json()
    assert broken["status"] == "failed"
    assert broken["reason"].startswith("crash in its validation match")
    assert "cannot start: no model file" in c.get(f"/api/v1/versions/{gamma}/log").text
    # Another author sees neither why nor the log, nor the archive.
    assert a.get(f"/api/v1/versions/{gamma}").json()["reason"] is None
    assert a.get(f"/api/v1/versions/{gamma}/log").status_code == 403
    assert a.get(f"/api/v1/versions/{gamma}/archive").status_code == 403
    assert c.get(f"/api/v1/versions/{gamma}/archive").status_code == 200


def _kill_9_and_restart(host: Host, a: httpx.Client, live_id: int) -> None:
    """Kill -9 mid-ladder and restart on the same directory: nothing lost, nothing changed,
    nothing counted twice, and the live bot back at the table by itself."""
    before = _done_matches(host.directory)
    host.kill()
    kept = _done_matches(host.directory)
    assert set(before) <= set(kept)
    host.start()
    wait_until(
        lambda: len(_done_matches(host.directory)) > len(kept) + 4,
        240,
        what="the restarted ladder to play on",
    )
    # The live bot reconnects by itself (with backoff): the final needs it at its table.
    wait_until(
        lambda: any(live_id in seats for m, seats in _done_seats(host.directory) if m not in kept),
        240,
        what="the live bot to play again after the restart",
    )
    listed = [m["match_id"] for m in a.get("/api/v1/matches", params={"limit": 1000}).json()]
    after = _done_matches(host.directory)  # after the listing: the ladder plays on
    assert all(after[m] == r for m, r in kept.items())
    assert len(listed) == len(set(listed))
    assert set(listed) <= set(after)


def _a_record_downloads_and_verifies(host: Host, a: httpx.Client) -> None:
    public = next(m for m in a.get("/api/v1/matches").json() if m["record_available"])
    record = a.get(f"/api/v1/matches/{public['match_id']}/record")
    assert record.status_code == 200
    path = host.directory.parent / "r.jsonl.gz"
    path.write_bytes(record.content)
    check = subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", "verify", str(path)],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def _close_and_play_the_final(host: Host, a: httpx.Client) -> None:
    """The host closes the competition: submissions freeze, the final is played by the ladder's
    best three (every pair at a table, each deal in both rotations)."""
    admin = (host.directory / "private" / "admin.token").read_text().strip()
    with host.client(admin) as h:
        assert h.post("/api/v1/admin/ladder", json={"state": "closed"}).status_code == 200
    late = a.put(
        "/api/v1/bots/alpha/versions", content=bot_archive(GOOD_BOT + b"#2\n"), headers=OCTET
    )
    assert late.status_code == 409

    def final() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = a.get("/api/v1/leaderboard", params={"phase": "final"}).json()
        return rows

    # Each finalist: 2 tables (one per other finalist), one deal in 2 rotations each.
    wait_until(lambda: [r["matches"] for r in final()] == [4, 4, 4], 240, what="the whole final")
    assert {r["ref"] for r in final()} == {"alpha@1", "beta@1", "beta-live@1"}


@pytest.mark.host  # a real host for many seconds: make test-host
def test_a_competition_from_submissions_to_a_ladder_that_survives_kill_9(
    host: Host, tls: tuple[Path, Path]
) -> None:
    # Authors added while the host runs (through its API, with its admin token).
    alice, bob, carol = (host.add_author(n) for n in ("alice", "bob", "carol"))
    with host.client(alice) as a, host.client(bob) as b, host.client(carol) as c:
        gamma = _submit(a, b, c)
        live = b.post("/api/v1/bots/beta-live/live")
        assert live.status_code == 201
        bot = _live_bot(host, live.json()["token"], tls[0])
        try:
            _the_broken_version_fails_and_only_its_author_sees_why(a, c, gamma)

            def rated() -> set[str]:
                rows = a.get("/api/v1/leaderboard").json()
                return {r["ref"] for r in rows if r["matches"] > 0}

            wait_until(
                lambda: rated() >= {"alpha@1", "beta@1", "beta-live@1"},
                240,
                what="every validated version, the live one too, to have rated matches",
            )
            assert "gamma@1" not in rated()
            _kill_9_and_restart(host, a, live.json()["version"]["id"])
            _a_record_downloads_and_verifies(host, a)
            _close_and_play_the_final(host, a)
            out = host.terminate()
            assert "arena: host stopped (SIGTERM)" in out and "Traceback" not in out, out
        finally:
            bot.kill()
            bot.wait()


@pytest.mark.parametrize("flag", ["--http", "--grpc"])
def test_a_busy_port_is_one_line_before_anything_starts(tmp_path: Path, flag: str) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(CONFIG)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = f"127.0.0.1:{taken.getsockname()[1]}"
        other = "--grpc" if flag == "--http" else "--http"
        done = subprocess.run(
            [
                *(sys.executable, "-m", "arena.cli", "host", str(config)),
                *(flag, busy, other, "127.0.0.1:0", "--no-sandbox"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"arena: error: {flag} {busy}: address already in use (another program listens there: "
        "stop it, or choose another port)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cup.toml"]  # nothing made, nothing run
