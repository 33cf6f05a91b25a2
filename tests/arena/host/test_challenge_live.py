"""A challenge followed live on a real host (docs/hosting.md, "Live matches"): a human match has
no other seating of its deal, so it is listed in ``/live`` (labelled human) and shown at once;
its feed, under the same caps as any, carries the public events only: no card of the person's
hand appears before it is played (checked against the record's hidden hands); it ends, and the
match is then over."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.host.livefeed import MAX_STREAMS_PER_ADDRESS, challenge_verdict
from arena.records.format import read_record
from tests.arena.host.processes import host_in
from tests.arena.host.test_challenges import CHALLENGES, finished, play_through, validated
from tests.arena.host.test_live_feed import idle_reader, read_feed
from tests.arena.replay_truth import card_tokens
from tests.waiting import wait_until

pytestmark = pytest.mark.host


def test_a_challenge_is_followed_live_with_public_events_only(tmp_path: Path) -> None:
    h = host_in(tmp_path, "cup", CHALLENGES)
    with h.running():
        alice, bob = h.add_author("alice"), h.add_author("bob")
        validated(h, bob, "bobbot")
        with h.client() as anon, h.client(alice) as api:
            started = api.post("/api/v1/challenges", json={"opponents": ["bobbot"], "seat": 1})
            assert started.status_code == 201, started.text
            match_id, url = started.json()["match_id"], started.json()["play_url"]
            # At once: live, or (its seats still connecting) starting, never held back.
            first = anon.get(f"/api/v1/live/{match_id}").json()
            assert first["showing"] in ("live", "waiting") and first["waiting_for"] == []

            def listed() -> dict[str, Any] | None:
                rows = anon.get("/api/v1/live").json()["matches"]
                return next((m for m in rows if m["match_id"] == match_id), None)

            row = wait_until(listed, 60, what="the challenge in /live")
            assert row["human"] and row["phase"] == "challenge"
            assert row["seats"] == ["bobbot@1", "person:alice", "bobbot@1", "bobbot@1"]
            status = anon.get(f"/api/v1/live/{match_id}").json()
            assert status["showing"] == "live" and status["waiting_for"] == []
            feed_url = f"{h.url}/api/v1/live/{match_id}/feed"
            # The caps of any live feed: as many readers as one address may have, no more.
            idle = [idle_reader(feed_url) for _ in range(MAX_STREAMS_PER_ADDRESS)]
            try:
                for sock in idle:
                    assert sock.recv(64, socket.MSG_PEEK).startswith(b"HTTP/1.1 200")
                refused = anon.get(f"/api/v1/live/{match_id}/feed")
                assert refused.status_code == 429, refused.text
            finally:
                for sock in idle:
                    sock.close()
            # A spectator reads the feed while the person plays.
            got: list[list[dict[str, Any]]] = []
            reader = threading.Thread(
                target=lambda: got.append(
                    wait_until(lambda: read_feed(feed_url), 60, what="a place to read")
                ),
                daemon=True,
            )
            reader.start()
            assert play_through(url) > 0
            reader.join(60)
            assert not reader.is_alive() and got
            wait_until(lambda: finished(anon, match_id), 60, what="the challenge stored")
            assert anon.get(f"/api/v1/live/{match_id}").json()["showing"] == "over"
            assert listed() is None
            record = tmp_path / "challenge.jsonl.gz"
            record.write_bytes(anon.get(f"/api/v1/challenges/{match_id}/record").content)
    check_hidden(got[0], record, person=1)


def test_a_challenge_s_rule_waits_for_no_other_seating() -> None:
    assert challenge_verdict("challenge-1", True, ["challenge-1"]).showing == "live"
    starting = challenge_verdict("challenge-1", True, [])
    assert starting.showing == "waiting" and "starting" in starting.why
    assert challenge_verdict("challenge-1", False, ["challenge-1"]).showing == "over"


def check_hidden(got: list[dict[str, Any]], record: Path, person: int) -> None:
    """The feed started, ended with the record's result, sent public events only, and named no
    card of the person's hidden hand (the record's events to their seat) before its play."""
    rec = read_record(record)
    hand = {
        card
        for e in rec.entries
        if e.get("type") == "event" and person in (e.get("to") or ())
        for card in card_tokens(json.dumps(e))
    }
    assert len(hand) >= 13
    assert got[0]["type"] == "start" and got[-1]["type"] == "end"
    assert got[-1]["result"]["summary"] == rec.result["summary"]
    assert "person:alice" in got[0]["meta"]["bots"]
    played: set[str] = set()
    views = 0
    for m in got:
        if m["type"] == "event":
            assert m["event"]["to"] is None
            played |= set(card_tokens(m["event"]["text"]))
        elif m["type"] == "view":
            views += 1
            step = m["step"]
            assert all(p == {} for p in step["private"]) and "hand" not in step["public"]
            shown = set(card_tokens(json.dumps(step["public"])))
            assert not (shown & hand) - played, "a card of the person's hand before its play"
    assert views > 20 and hand <= played
