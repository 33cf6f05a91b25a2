"""Seasons on a real host (``arena host``, real bots, real SQLite, HTTP): a season rolled over by
the clock, its standings archived and browsable (API, ``arena remote``), announced in ``/status``
and by a signed webhook retried after a failure; the admin ending a season; a kill -9 with the
host down over a season's end: it rolls over once on start, and the delivery pending at the
kill is sent after the restart."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from arena.host.seasons import iso
from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.arena.host.webhooks import Receiver
from tests.helpers import free_port
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.host]

SECRET = b"a-webhook-secret-of-the-hosts"
OCTET = {"Content-Type": "application/octet-stream"}


def _remote(host: Host, *args: str, token: str | None = None) -> str:
    auth = ["--token", token] if token else []
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "remote", *args, "--server", host.url, *auth],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _host(tmp_path: Path, seasons: str, webhook: str) -> Host:
    (tmp_path / "cup" / "private").mkdir(parents=True, mode=0o700)
    (tmp_path / "cup" / "private" / "webhook.secret").write_text(SECRET.decode() + "\n")
    extra = (
        "provisional_matches = 1\n"
        + seasons
        + f'[announce]\nwebhook_url = "{webhook}"\nsecret_file = "webhook.secret"\n'
    )
    config = tmp_path / "cup.toml"
    config.write_text(competition_config(extra=extra))
    return Host(config, tmp_path / "cup", None)


def test_a_season_rolls_over_by_the_clock_archived_announced_and_browsable(
    tmp_path: Path,
) -> None:
    start = datetime.now(UTC)
    one_ends = start + timedelta(seconds=45)
    seasons = (
        '[seasons]\nratings = "reset"\n'
        f'[[seasons.schedule]]\nname = "One"\nstart = "{iso(start)}"\nend = "{iso(one_ends)}"\n'
        f'[[seasons.schedule]]\nname = "Two"\nstart = "{iso(one_ends)}"\n'
        f'end = "{iso(one_ends + timedelta(days=1))}"\n'
    )
    receiver = Receiver(free_port(), SECRET, fail_first=1)
    receiver.start()
    host = _host(tmp_path, seasons, receiver.url)
    try:
        with host.running():
            alice, bob = host.add_author("alice"), host.add_author("bob")
            with host.client(alice) as a, host.client(bob) as b:
                assert (
                    a.put(
                        "/api/v1/bots/alpha/versions", content=bot_archive(GOOD_BOT), headers=OCTET
                    ).status_code
                    == 201
                )
                assert (
                    b.put(
                        "/api/v1/bots/beta/versions",
                        content=bot_archive(GOOD_BOT + b"#b\n"),
                        headers=OCTET,
                    ).status_code
                    == 201
                )
                status = a.get("/api/v1/status").json()
                assert status["season"]["title"] == "Season 1 (One)"
                assert status["season"]["ends"] == iso(one_ends)

                def seasons_now() -> list[dict[str, Any]]:
                    rows: list[dict[str, Any]] = a.get("/api/v1/seasons").json()
                    return rows

                wait_until(lambda: len(seasons_now()) == 2, 120, what="season 1 to end")
                first, second = seasons_now()
                assert (first["state"], first["ends"]) == ("archived", iso(one_ends))
                assert (second["state"], second["name"], second["starts"]) == (
                    "current",
                    "Two",
                    iso(one_ends),
                )
                detail = a.get("/api/v1/seasons/1").json()
                assert detail["season"]["matches"] == first["matches"]
                assert all(r["matches"] > 0 for r in detail["standings"])
                results = a.get("/api/v1/status").json()["results"]
                assert results[0]["subject"] == "Season 1 (One)"
                assert results[0]["winners"] == first["winners"]
                # The webhook: refused once (500), then delivered again, signed.
                wait_until(lambda: receiver.received, 60, what="the webhook delivered")
                (got,) = receiver.received
                assert got.valid and receiver.attempts == 2
                assert got.headers["X-Arena-Event"] == "season.finished"
                assert got.body["subject"] == "Season 1 (One)"
                assert got.body["winners"] == first["winners"]
                # Reset: season 2's leaderboard counts its own matches only.
                wait_until(
                    lambda: len(a.get("/api/v1/leaderboard").json()) == 2,
                    120,
                    what="both versions rated in season 2",
                )
                admin = (host.directory / "private" / "admin.token").read_text().strip()
                out = _remote(host, "admin", "season", "end", "--name", "Three", token=admin)
                assert "Season 2 (Two) ended, won by" in out and "Season 3 (Three) started" in out
                two = a.get("/api/v1/seasons/2").json()
                played = two["season"]["matches"]
                assert played > 0 and all(r["matches"] <= played for r in two["standings"])
                status = _remote(host, "status")
                assert "season: Season 3 (Three)" in status
                assert "result: Season 2 (Two) ended" in status
                listed = _remote(host, "seasons")
                assert "Season 1 (One)" in listed and "Season 3 (Three)" in listed
                shown = _remote(host, "season", "2")
                assert "frozen at its end" in shown
                assert all(r["ref"] in shown for r in two["standings"])
                wait_until(lambda: len(receiver.received) == 2, 60, what="season 2's webhook")
                assert receiver.received[1].body["subject"] == "Season 2 (Two)"
                assert all(r.valid for r in receiver.received)
    finally:
        receiver.stop()


def _seasons(directory: Path) -> list[tuple[int, str, str | None]]:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT number, state, ends FROM seasons ORDER BY number").fetchall()
    finally:
        con.close()
    return [(int(n), str(s), e) for n, s, e in rows]


def test_kill_9_with_a_season_end_passing_while_down_rolls_over_once_and_delivers(
    tmp_path: Path,
) -> None:
    receiver = Receiver(free_port(), SECRET)  # not listening yet: every delivery fails
    host = _host(tmp_path, f"[seasons]\nlength_days = {12 / 86400}\n", receiver.url)
    host.start()
    try:
        wait_until(lambda: len(_seasons(host.directory)) >= 2, 60, what="season 1 to end")
        host.kill()  # its delivery still pending: the receiver was down
        seen = _seasons(host.directory)
        current = seen[-1]
        assert [s[1] for s in seen] == ["archived"] * (len(seen) - 1) + ["current"]
        assert current[2] is not None
        ends = datetime.fromisoformat(current[2])
        wait_until(lambda: datetime.now(UTC) > ends, 60, what="the season's end, host down")
        receiver.start()
        host.start()
        wait_until(lambda: len(_seasons(host.directory)) == len(seen) + 1, 60, what="the roll-over")
        after = _seasons(host.directory)
        assert [n for n, _, _ in after] == list(range(1, len(after) + 1))
        assert [s for _, s, _ in after].count("current") == 1
        assert after[len(seen) - 1][2] == current[2]  # ended at its planned end
        subjects = [f"Season {n}" for n in range(1, len(seen) + 1)]
        wait_until(
            lambda: (
                sorted(r.body["subject"] for r in receiver.received)[: len(subjects)] == subjects
            ),
            60,
            what="the deliveries pending at the kill, sent after the restart",
        )
        assert all(r.valid for r in receiver.received)
        ids = [r.headers["X-Arena-Delivery"] for r in receiver.received]
        assert len(ids) == len(set(ids))
    finally:
        host.stop()
        receiver.stop()
