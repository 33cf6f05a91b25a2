"""``limits.live_bots_per_author`` on a real ``arena host``: an author's live bot past the quota
(a real SDK bot process, over gRPC) is rejected at its Hello with the quota in one line, while
another author's live bot connects and their connected bot plays on, validated, charged nothing;
once the first bot stops, the second connects."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.arena.host.processes import UNTHROTTLED, Host, competition_config
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config(limits=UNTHROTTLED + "live_bots_per_author = 1\n"))
    with Host(config, tmp_path / "cup", None).running() as h:
        yield h


def _bot(host: Host, token: str) -> subprocess.Popen[str]:
    env = {**os.environ, "ARENA_ADDRESS": host.grpc, "ARENA_TOKEN": token}
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "bot", "random", "--give-up", "60"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _played(client: httpx.Client) -> dict[str, int]:
    """Each version's rated matches (a live version plays only while its bot is connected)."""
    rows = client.get("/api/v1/leaderboard").json()
    return {r["ref"]: r["matches"] for r in rows}


def _faults(directory: Path) -> list[object]:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT faults FROM matches WHERE state = 'done'").fetchall()
    finally:
        con.close()
    return [f for (faults,) in rows for f in json.loads(faults or "[]")]


def _running(*bots: subprocess.Popen[str]) -> None:
    for bot in bots:
        assert bot.poll() is None, f"a bot exited: {bot.stderr.read() if bot.stderr else ''}"


def test_live_bots_past_an_authors_quota_are_rejected_at_hello(host: Host) -> None:
    alice, bob = host.add_author("alice"), host.add_author("bob")
    bots: list[subprocess.Popen[str]] = []
    with host.client(alice) as a, host.client(bob) as b:
        one, two = (a.post(f"/api/v1/bots/{n}/live").json()["token"] for n in ("one", "two"))
        bee = b.post("/api/v1/bots/bee/live").json()["token"]
        try:
            first, third = _bot(host, one), _bot(host, bee)
            bots += [first, third]

            def both_play() -> bool:
                _running(first, third)
                played = _played(a)
                return played.get("one@1", 0) > 0 and played.get("bee@1", 0) > 0

            wait_until(both_play, 240, what="alice's and bob's live bots to play")
            # Alice's second live bot: refused at once, in one line naming the quota.
            second = _bot(host, two)
            bots.append(second)
            assert second.wait(60) != 0
            assert second.stderr is not None
            said = second.stderr.read()
            assert (
                "quota: 1 live bots of one author connected at once "
                "(limits.live_bots_per_author); yours connected: one@1; stop one first"
            ) in said, said
            assert "Traceback" not in said
            # The others play on, charged nothing; the refused one was never seated.
            before = _played(a)["one@1"]
            wait_until(
                lambda: _running(first, third) or _played(a)["one@1"] > before,
                240,
                what="the ladder to play on",
            )
            assert _played(a).get("two@1", 0) == 0
            assert _faults(host.directory) == []
            # Alice stops her first bot: her second may connect now, and plays.
            first.kill()
            first.wait()
            tries: list[subprocess.Popen[str]] = []

            def second_plays() -> bool:
                if not tries or tries[-1].poll() is not None:
                    # Rejected while the host had not yet seen the first bot go: again.
                    tries.append(_bot(host, two))
                    bots.append(tries[-1])
                    return False
                return _played(a).get("two@1", 0) > 0

            wait_until(second_plays, 240, what="alice's second bot let in to play")
        finally:
            for bot in bots:
                if bot.poll() is None:
                    bot.kill()
                bot.wait()
