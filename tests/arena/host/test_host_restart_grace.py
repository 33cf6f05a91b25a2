"""A real ``arena host`` killed (-9) mid-ladder with a live bot at its tables, and started again:
a unit waits ``ladder.live_grace_s`` for its live bot. Back within the grace, the bot plays it
out; gone for good, the unit fails after the grace and its matches say they will not be played
(410) instead of staying pending ("not finished") forever."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.host]

GRACE_S = 20
CONFIG = competition_config(extra=f"live_grace_s = {GRACE_S}\n")


def _query(directory: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _done(directory: Path) -> int:
    return int(_query(directory, "SELECT COUNT(*) FROM matches WHERE state = 'done'")[0][0])


def _pending_units(directory: Path) -> dict[int, list[str]]:
    """The pending units and their pending matches."""
    rows = _query(
        directory,
        "SELECT u.id, m.match_id FROM units u JOIN matches m ON m.unit_id = u.id "
        "WHERE u.state = 'pending' AND m.state = 'pending'",
    )
    units: dict[int, list[str]] = {}
    for unit, match in rows:
        units.setdefault(int(str(unit)), []).append(str(match))
    return units


def _unit_states(directory: Path, units: list[int]) -> dict[int, tuple[str, str]]:
    rows = _query(directory, "SELECT id, state, reason FROM units")
    return {int(str(u)): (str(s), str(r)) for u, s, r in rows if int(str(u)) in units}


class Output:
    """A host process's output lines, read as they come."""

    def __init__(self, host: Host) -> None:
        assert host.proc is not None and host.proc.stdout is not None
        self.lines: list[str] = []
        stdout = host.proc.stdout
        threading.Thread(
            target=lambda: self.lines.extend(line.decode() for line in stdout), daemon=True
        ).start()

    def has(self, text: str) -> bool:
        return any(text in line for line in list(self.lines))


def _kill_mid_unit(host: Host, bot: subprocess.Popen[bytes]) -> dict[int, list[str]]:
    """Kill the host (and the live bot) while a unit is pending; that unit's pending matches."""
    since = _done(host.directory)
    for _ in range(5):
        wait_until(
            lambda: _done(host.directory) > since and _pending_units(host.directory),
            240,
            what="the ladder to be mid-unit",
        )
        host.kill()
        left = _pending_units(host.directory)
        if left:
            bot.kill()
            bot.wait()
            return left
        host.start()  # killed between two units: once more
    raise AssertionError("never killed mid-unit")


def test_a_unit_waits_for_its_live_bot_after_a_restart_and_fails_only_after_the_grace(
    tmp_path: Path,
) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(CONFIG)
    host = Host(config, tmp_path / "cup", tls=None)
    host.start()
    bot: subprocess.Popen[bytes] | None = None
    try:
        with host.client(host.add_author("alice")) as a:
            made = a.put(
                "/api/v1/bots/alpha/versions",
                content=bot_archive(GOOD_BOT),
                headers={"Content-Type": "application/octet-stream"},
            )
            assert made.status_code == 201, made.text
            live = a.post("/api/v1/bots/beta/live")
            assert live.status_code == 201, live.text
        env = {**os.environ, "ARENA_ADDRESS": host.grpc, "ARENA_TOKEN": live.json()["token"]}

        def live_bot() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [sys.executable, "-m", "arena.cli", "bot", "random", "--give-up", "300"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

        bot = live_bot()
        # Every unit has the live bot at its table (two versions): killed mid-unit, with it.
        left = _kill_mid_unit(host, bot)
        host.start()
        out = Output(host)
        wait_until(lambda: out.has("match waits for its live bots"), 60, what="the unit to wait")
        bot = live_bot()  # back within the grace: the unit is played, not failed
        wait_until(
            lambda: all(s != "pending" for s, _ in _unit_states(host.directory, [*left]).values()),
            120,
            what="the units left by the kill to end",
        )
        assert {s for s, _ in _unit_states(host.directory, [*left]).values()} == {"done"}

        # Killed again, and this time the live bot never comes back.
        left = _kill_mid_unit(host, bot)
        host.start()
        wait_until(
            lambda: all(s != "pending" for s, _ in _unit_states(host.directory, [*left]).values()),
            GRACE_S + 60,
            what="the units left by the kill to be given up",
        )
        states = _unit_states(host.directory, [*left])
        assert all(s == "failed" for s, _ in states.values()), states
        assert all(f"not connected within {GRACE_S} s" in r for _, r in states.values()), states
        assert not _pending_units(host.directory)
        with host.client() as anyone:
            for matches in left.values():
                for match in matches:
                    said = anyone.get(f"/api/v1/matches/{match}")
                    assert said.status_code == 410, said.text
                    detail = said.json()["detail"]
                    assert detail.startswith(f"match {match!r} will not be played: its unit failed")
        # As an author reads it: one line, not "not finished".
        said = subprocess.run(
            [sys.executable, "-m", "arena.cli", "remote", "match", match, "--server", host.url],
            capture_output=True,
            text=True,
            check=False,
        )
        assert said.returncode == 2 and said.stdout == "", said
        assert said.stderr.splitlines() == [
            f"arena: error: HTTP 410: match {match!r} will not be played: its unit failed: "
            f"live bot beta@1 not connected within {GRACE_S} s"
        ]
    finally:
        if bot is not None:
            bot.kill()
            bot.wait()
        host.stop()
