"""Events on a real ``arena host`` with real bots: a knockout and a Swiss event started by the
host's command, each killed -9 in the middle and restarted, played to the end with no deal
played twice or lost, and the winner the stated rules give (checked here from the raw stored
results, not by the host's own code); the bracket and standings in ``arena remote``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.arena.host.processes import (
    GOOD_BOT,
    UNTHROTTLED,
    Host,
    bot_archive,
    competition_config,
)
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.host]

EVENTS = (
    '[[events]]\nname = "cup"\nformat = "knockout"\nentrants = 4\nbest_of = 2\n'
    '[[events]]\nname = "open"\nformat = "swiss"\nentrants = 3\nrounds = 3\n'
)
#: Whist's places: seats 0 and 2, seats 1 and 3.
PLACES = ((0, 2), (1, 3))


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config(extra=EVENTS))
    h = Host(config, tmp_path / "cup", None)
    with h.running():
        yield h


def remote(host: Host, *args: str) -> str:
    admin = (host.directory / "private" / "admin.token").read_text().strip()
    env = {**os.environ, "ARENA_SERVER": host.url, "ARENA_ADMIN_TOKEN": admin}
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "remote", *args],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def query(host: Host, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{host.directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def submit_bots(host: Host, n: int) -> None:
    for i in range(n):
        token = host.add_author(f"author{i}")
        with host.client(token) as c:
            body = bot_archive(GOOD_BOT + f"# {i}\n".encode())
            headers = {"Content-Type": "application/octet-stream"}
            assert c.put(f"/api/v1/bots/bot{i}/versions", content=body, headers=headers).is_success
    wait_until(
        lambda: len(query(host, "SELECT 1 FROM versions WHERE status='validated'")) == n,
        120,
        what="every version validated",
    )


def event_matches(host: Host, name: str) -> list[tuple[Any, ...]]:
    """``(round, tie, deal, unit state, match id, seats, result)`` of the event's matches."""
    return query(
        host,
        "SELECT e.round, e.tie, e.deal, u.state, m.match_id, m.seats, m.result "
        "FROM event_units e JOIN events ev ON ev.id = e.event_id JOIN units u ON u.id = e.unit_id "
        "JOIN matches m ON m.unit_id = u.id WHERE ev.name = ? AND m.state = 'done'",
        (name,),
    )


def kill_mid_event(host: Host, name: str) -> set[str]:
    """Kill -9 the host once the event has played a match and is still running; restart it.
    The matches done before the kill."""
    wait_until(lambda: event_matches(host, name), 120, what=f"{name}'s first match")
    host.kill()
    (state,) = query(host, "SELECT state FROM events WHERE name = ?", (name,))[0]
    assert state == "running", "the event ended before the kill: nothing was tested"
    before = {row[4] for row in event_matches(host, name)}
    host.start()
    return before


def finished(host: Host, name: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        with host.client() as c:
            event: dict[str, Any] = c.get(f"/api/v1/events/{name}").json()
        return event if event["state"] == "finished" else None

    event = wait_until(done, 300, what=f"{name} to finish")
    assert event is not None
    return event


def side_totals(rows: list[tuple[Any, ...]], a: int, b: int) -> tuple[tuple[float, float], ...]:
    """Match points and game score of versions ``a`` and ``b`` over ``rows``' matches."""
    out = {a: [0.0, 0.0], b: [0.0, 0.0]}
    for *_, seats, result in rows:
        seats, result = json.loads(seats), json.loads(result)
        ranks = {seats[g[0]]: result["ranks"][g[0]] for g in PLACES}
        for v, other in ((a, b), (b, a)):
            out[v][0] += 1.0 if ranks[v] < ranks[other] else 0.5 if ranks[v] == ranks[other] else 0
            out[v][1] += result["scores"][next(g[0] for g in PLACES if seats[g[0]] == v)]
    return tuple((out[v][0], out[v][1]) for v in (a, b))


def test_a_knockout_survives_kill_9_and_its_winner_follows_the_rules(host: Host) -> None:
    submit_bots(host, 4)
    out = remote(host, "admin", "event", "start", "cup")
    assert "event cup started: 4 entrants" in out
    before = kill_mid_event(host, "cup")
    event = finished(host, "cup")
    rows = event_matches(host, "cup")
    ids = [r[4] for r in rows]
    # Nothing lost or played twice: the matches done before the kill are kept, and every deal
    # of every tie is one unit played in both rotations.
    assert before <= set(ids) and len(ids) == len(set(ids))
    deals = sorted({(r, t, d) for r, t, d, *_ in rows})
    assert [(r, t) for r, t, d in deals if d < 2] == sorted(
        [(0, 0), (0, 0), (0, 1), (0, 1), (1, 0), (1, 0)]
    )
    assert all(sum(1 for row in rows if row[:3] == k) == 2 for k in deals)
    assert all(row[3] == "done" for row in rows)
    # The winner by the stated rule, from the raw results: points, then score, then an extra
    # deal, then the better seed.
    (entrants,) = query(host, "SELECT entrants FROM events WHERE name='cup'")[0]
    seeds = json.loads(entrants)
    refs = dict(
        query(
            host,
            "SELECT v.id, b.name || '@' || v.number FROM versions v JOIN bots b ON b.id = v.bot_id",
        )
    )

    def tie_winner(round_: int, a: int, b: int) -> int:
        tie = [
            r
            for r in rows
            if r[0] == round_ and seeds[a] in json.loads(r[5]) and seeds[b] in json.loads(r[5])
        ]
        for part in ([r for r in tie if r[2] < 2], [r for r in tie if r[2] >= 2]):
            ta, tb = side_totals(part, seeds[a], seeds[b])
            if ta != tb:
                return a if ta > tb else b
        return min(a, b)

    final = (tie_winner(0, 0, 3), tie_winner(0, 1, 2))
    assert event["winner"] == refs[seeds[tie_winner(1, *sorted(final))]]
    # The bracket in the terminal.
    text = remote(host, "event", "cup")
    assert "semi-final" in text and "final" in text and f"winner: {event['winner']}" in text
    assert ids[0] in text
    listing = remote(host, "events")
    assert "cup" in listing and "finished" in listing and "open" in listing
    with host.client() as c:
        status = c.get("/api/v1/status").json()
    assert {"name": "cup", "state": "finished", "winner": event["winner"]} in status["events"]
    assert f"event cup: finished, won by {event['winner']}" in remote(host, "status")


def test_a_swiss_survives_kill_9_with_no_pairing_repeated(host: Host) -> None:
    submit_bots(host, 3)
    remote(host, "admin", "event", "start", "open")
    before = kill_mid_event(host, "open")
    event = finished(host, "open")
    rows = event_matches(host, "open")
    ids = [r[4] for r in rows]
    assert before <= set(ids) and len(ids) == len(set(ids))
    # Three entrants, three rounds: each round one pairing (one deal, both rotations) and a
    # bye, each entrant's bye once; no pairing twice.
    pairs = [frozenset(json.loads(r[5])) for r in rows if r[2] == 0]
    assert len(rows) == 3 * 2 and len(set(pairs)) == 3
    detail = event
    byes = [t["sides"][0] for r in detail["rounds"] for t in r["ties"] if t["sides"][1] is None]
    assert sorted(byes) == sorted(detail["entrants"])
    standings = detail["standings"]
    assert standings[0]["ref"] == event["winner"]
    assert [s["points"] for s in standings] == sorted(
        (s["points"] for s in standings), reverse=True
    )
    text = remote(host, "event", "open")
    assert "standings" in text and "BUCHHOLZ" in text and "bye" in text


SPOIL = (
    'name = "spoil"\ngame = "spoil_five"\nplayers = 3\n[options]\nrounds = 1\n'
    "[time_control]\nmove_ms = 2000\nbank_ms = 4000\n"
    f"[limits]\n{UNTHROTTLED}[ladder]\nconcurrency = 2\n"
)
#: Begun long ago: a host that was down at an event's start begins it when it comes up.
HEATS = (
    '[[events]]\nname = "heats"\nformat = "heats"\nentrants = 5\nadvance = 2\n'
    "start = 2026-01-01T00:00:00Z\n"
)


def test_heats_of_three_begin_at_their_start_and_end_in_a_final_heat(tmp_path: Path) -> None:
    config = tmp_path / "spoil.toml"
    config.write_text(SPOIL)
    host = Host(config, tmp_path / "spoil", None)
    with host.running():
        submit_bots(host, 5)
    # The host adds the event to its config (only the rules are fixed for a competition's
    # life) and starts again, after the event's start: it begins at once.
    config.write_text(SPOIL + HEATS)
    host.extra = ["--log-level", "info"]
    host.start()
    try:
        event = finished(host, "heats")
    finally:
        log = host.interrupt()
    # The end is said in the log, with the winner.
    (line,) = [json.loads(x) for x in log.splitlines() if '"event finished"' in x]
    assert (line["name"], line["winner"]) == ("heats", event["winner"])
    assert len(event["entrants"]) == 5
    first, final = event["rounds"]
    # Five in snake order: heats of seeds 1 4 5 and 2 3; the best two of the three-table
    # and the best of the two-table make the final heat of three.
    assert [t["seeds"] for t in first["ties"]] == [[1, 4, 5], [2, 3]]
    assert final["name"] == "final heat" and len(final["ties"][0]["sides"]) == 3
    assert set(final["ties"][0]["sides"]) == {
        *first["ties"][0]["result"][:2],
        first["ties"][1]["result"][0],
    }
    assert event["winner"] == final["ties"][0]["result"][0]
    # Each heat's deal played in every rotation of its table: three, and two for a cyclic
    # table of two entrants.
    assert [len(t["deals"][0]["match_ids"]) for t in first["ties"]] == [3, 2]
