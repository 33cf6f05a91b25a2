"""Exports over a real HTTP API and a real store: standings and matches as CSV (read back with
the csv module) and JSON equal the API's own answers, by phase, season and version; nothing
hidden in them (no seed); ``arena remote export`` writes the same bytes."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.host.announce import Announcer
from arena.host.ladder import Standings
from arena.host.seasons import Seasons
from arena.ratings import fit_ratings
from tests.arena.host.serving import Host, competition, hosting
from tests.arena.host.test_seasons import EW, NS, play, two_versions

SEED = 987654321


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with hosting(tmp_path) as h:
        store = h.store
        a, b = two_versions(store)
        play(store, a, b, NS, 3, SEED)
        play(store, a, b, EW, 1, SEED)
        refit(h)
        config = competition()
        Seasons(store, config, Announcer(store, config)).end_now("Two")
        play(store, a, b, EW, 2, SEED)
        refit(h)
        yield h


def refit(h: Host) -> None:
    entries, units = h.store.rated_matches("ladder")
    table = fit_ratings(entries, clusters=units)
    h.standings = Standings(table, fit_ratings([]))


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _same(rows: list[dict[str, str]], api: list[dict[str, Any]]) -> None:
    assert [r["ref"] for r in rows] == [r["ref"] for r in api]
    for got, want in zip(rows, api, strict=True):
        for key, value in want.items():
            assert got[key] == str(value), key


def test_standings_export_as_the_api_serves_them(host: Host) -> None:
    with httpx.Client(base_url=host.url) as c:
        now = c.get("/api/v1/leaderboard").json()
        as_csv = c.get("/api/v1/export/standings.csv")
        assert as_csv.status_code == 200 and as_csv.headers["content-type"].startswith("text/csv")
        _same(_csv(as_csv.text), now)
        assert c.get("/api/v1/export/standings.json").json() == now
        frozen = c.get("/api/v1/seasons/1").json()["standings"]
        assert c.get("/api/v1/export/standings.json", params={"season": 1}).json() == frozen
        _same(_csv(c.get("/api/v1/export/standings.csv", params={"season": 1}).text), frozen)
        assert c.get("/api/v1/export/standings.json", params={"season": 9}).status_code == 404
        bad = c.get("/api/v1/export/standings.json", params={"season": 1, "phase": "final"})
        assert bad.status_code == 400 and "\n" not in bad.json()["detail"]
        assert c.get("/api/v1/export/standings.xml").status_code == 422


def test_matches_export_by_season_and_version_public_info_only(host: Host) -> None:
    with httpx.Client(base_url=host.url) as c:
        listed = c.get("/api/v1/matches", params={"limit": 1000}).json()
        every = c.get("/api/v1/export/matches.json").json()
        assert [m["match_id"] for m in every] == [m["match_id"] for m in reversed(listed)]
        for m, api in zip(every, reversed(listed), strict=True):
            assert (m["seats"], m["ranks"], m["summary"]) == (
                api["seats"],
                api["ranks"],
                api["summary"],
            )
            # A record only as its link, where the API says it is available.
            assert (m["record"] is not None) == api["record_available"]
            assert m["record"] in (None, f"/api/v1/matches/{m['match_id']}/record")
        assert [m["season"] for m in every] == [1, 1, 1, 1, 2, 2]
        second = c.get("/api/v1/export/matches.csv", params={"season": 2}).text
        rows = _csv(second)
        assert [r["season"] for r in rows] == ["2", "2"] and rows[0]["seats"] == "a@1 b@1 a@1 b@1"
        assert rows[0]["ranks"] == "2 1 2 1" and json.loads(rows[0]["faults"]) == []
        body = c.get("/api/v1/export/matches.json").text + second
        assert str(SEED) not in body and "seed" not in body
        assert len(c.get("/api/v1/export/matches.json", params={"version": 1}).json()) == 6
        assert c.get("/api/v1/export/matches.csv", params={"version": 99}).status_code == 404
        # Any phase a match may have, an event's too (none here).
        assert c.get("/api/v1/export/matches.json", params={"phase": "event"}).json() == []
        assert len(c.get("/api/v1/export/matches.json", params={"phase": "ladder"}).json()) == 6


def test_arena_remote_export_writes_what_the_api_serves(host: Host, tmp_path: Path) -> None:
    out = tmp_path / "standings.csv"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "arena.cli", "remote", "export", "standings"),
            *("--server", host.url, "--format", "csv", "-o", str(out), "--season", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    with httpx.Client(base_url=host.url) as c:
        assert out.read_bytes() == c.get("/api/v1/export/standings.csv?season=1").content
        matches = subprocess.run(
            [
                *(sys.executable, "-m", "arena.cli", "remote", "export", "matches"),
                *("--server", host.url, "--format", "json"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert json.loads(matches.stdout) == c.get("/api/v1/export/matches.json").json()
