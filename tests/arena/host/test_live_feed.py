"""One match followed live on a competition host (``/api/v1/live/{id}``, ``…/feed``): the
duplicate-deal rule (a match is shown only once no other seating of its deal is still to play or
in play), over the real app and store; then over a real ``arena host`` whose ladder real bots
play: the feed carries public events only and the table drawn from them, a sibling rotation is
refused while it would tell a bot's hidden cards, and a reader that reads nothing slows nothing;
and a stream whose reader takes nothing, dropped after its time (trio's MockClock), its place
freed."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import trio
from trio.testing import MockClock

from arena.host.api.live import EventStream
from arena.host.livefeed import MAX_STREAMS_PER_ADDRESS, SEND_TIMEOUT_S, LiveFeeds, Refused
from arena.records.format import read_record
from arena.records.view import event_text
from engine import Event, Result
from tests.arena.host.processes import Host, competition_config
from tests.arena.host.serving import hosting, validated_versions
from tests.arena.replay_truth import card_tokens
from tests.waiting import wait_until

WIN = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N-S")
NAMES = ("N", "E", "S", "W")
#: A record entry's keys that are not its event's data.
HEAD = {"type", "kind", "to"}


def test_a_match_is_shown_live_only_once_no_other_seating_of_its_deal_is_to_play(
    tmp_path: Path,
) -> None:
    board = ["u1-r0", "u2-r0"]
    with hosting(tmp_path, running=lambda: board) as host:
        a, b = validated_versions(host.store, ("a", "b"))
        rotations = [(f"u1-r{r}", r, (a, b) * 2) for r in (0, 1)]
        host.store.create_unit("ladder", 1, (a, b), rotations)
        host.store.create_unit("ladder", 2, (a, b), [("u2-r0", 0, (a, b) * 2)])

        def status(match_id: str) -> dict[str, Any]:
            reply = httpx.get(f"{host.url}/api/v1/live/{match_id}")
            assert reply.status_code == 200, reply.text
            return dict(reply.json())

        waiting = status("u1-r0")
        assert waiting["showing"] == "waiting" and waiting["waiting_for"] == ["u1-r1"]
        assert "other seatings of its deal" in waiting["why"]
        refused = httpx.get(f"{host.url}/api/v1/live/u1-r0/feed")
        assert refused.status_code == 409 and "other seatings" in refused.json()["detail"]
        # A deal of one seating is live at once (this app has no arena to feed it: it says so).
        assert status("u2-r0")["showing"] == "live"
        no_feed = httpx.get(f"{host.url}/api/v1/live/u2-r0/feed")
        assert no_feed.status_code == 409 and no_feed.json()["detail"] == (
            "this host shows no live match"
        )
        # Once the sibling is over, the match in play is shown; one not in play is elsewhere.
        host.store.commit_match("u1-r1", WIN, [], None)
        assert status("u1-r0")["showing"] == "live"
        board.remove("u1-r0")
        assert status("u1-r0")["showing"] == "elsewhere"
        host.store.commit_match("u1-r0", WIN, [], None)
        assert status("u1-r0")["showing"] == "over"
        assert httpx.get(f"{host.url}/api/v1/live/nope").status_code == 404


#: A random bot that thinks a little per move, so that a match lasts seconds.
SLOW_BOT = b"""import random, time
from cardarena import Bot, run_bot

class Slow(Bot):
    name = "slow"
    def choose(self, game, observation, legal):
        time.sleep(0.1)
        return random.randrange(len(legal))

run_bot(Slow())
"""


def read_feed(url: str) -> list[dict[str, Any]] | None:
    """A live feed's page messages, until its stream ends; ``None`` while the address has its
    streams open (a closed one may not be counted off yet)."""
    with httpx.stream("GET", url, timeout=60) as reply:
        if reply.status_code == 429:
            return None
        assert reply.status_code == 200, reply.read()
        return [json.loads(x[6:]) for x in reply.iter_lines() if x.startswith("data: ")]


def idle_reader(url: str) -> socket.socket:
    """A reader that asks for the feed and never reads a byte (a tiny receive buffer)."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect((parts.hostname or "", parts.port or 80))
    sock.sendall(f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
    return sock


@pytest.mark.host
def test_a_real_hosts_match_is_followed_live_with_public_events_only(tmp_path: Path) -> None:
    # One match at a time: a unit's rotation 0 plays while rotation 1 waits (hidden), then
    # rotation 1 plays with its sibling over (shown).
    config = tmp_path / "live-feed.toml"
    config.write_text(competition_config("live-feed").replace("concurrency = 2", "concurrency = 1"))
    host = Host(config, tmp_path / "live-feed", tls=None)
    with host.running():
        token = host.add_author("alice")
        for bot in ("alpha", "beta"):
            host.submit(token, bot, SLOW_BOT)
        with host.client() as c:
            verdicts: dict[str, str] = {}

            def playing(showing: str) -> str | None:
                for m in c.get("/api/v1/live").json()["matches"]:
                    v = c.get(f"/api/v1/live/{m['match_id']}").json()
                    verdicts[m["match_id"]] = v["showing"]
                    if v["showing"] == "waiting":
                        feed = c.get(f"/api/v1/live/{m['match_id']}/feed")
                        assert feed.status_code == 409, feed.text
                    if v["showing"] == showing:
                        return str(m["match_id"])
                return None

            wait_until(lambda: playing("waiting"), 240, what="a rotation held back")
            match_id = wait_until(lambda: playing("live"), 240, what="a match shown live")
            url = f"{host.url}/api/v1/live/{match_id}/feed"
            # Readers that read nothing, as many as one address may open: one more is refused.
            idle = [idle_reader(url) for _ in range(MAX_STREAMS_PER_ADDRESS)]
            try:
                for sock in idle:
                    assert sock.recv(64, socket.MSG_PEEK).startswith(b"HTTP/1.1 200")  # counted
                refused = c.get(f"/api/v1/live/{match_id}/feed")
                assert refused.status_code == 429, refused.text
                assert "live streams from one address" in refused.json()["detail"]
                for sock in idle[:2]:
                    sock.close()
                got = wait_until(lambda: read_feed(url), 60, what="a place to read the feed")
            finally:
                for sock in idle:
                    sock.close()
            record_url = f"/api/v1/matches/{match_id}/record"
            wait_until(lambda: c.get(record_url).status_code == 200, 120, what="the record")
            record = tmp_path / "record.jsonl.gz"
            record.write_bytes(c.get(record_url).content)
    assert got is not None
    check_public(got, record)


def check_public(got: list[dict[str, Any]], record: Path) -> None:
    """The feed said the record's public events, in order, drew the table from them with no
    hand and no card before its play, and ended with the result; the arena never waited on a
    slow reader (every decision took the bot's time)."""
    rec = read_record(record)
    public = [
        event_text(Event(e["kind"], {k: v for k, v in e.items() if k not in HEAD}), NAMES)
        for e in rec.entries
        if e.get("type") == "event" and e.get("to") is None
    ]
    events = [m["event"] for m in got if m["type"] == "event"]
    assert all(e["to"] is None for e in events)
    assert [sorted(e["text"].split()) for e in events] == [sorted(p.split()) for p in public]
    assert got[0]["type"] == "start" and got[-1]["type"] == "end"
    assert sorted(set(got[0]["meta"]["bots"])) == ["alpha", "beta"]
    assert got[-1]["result"]["summary"] == rec.result["summary"]
    views = [m for m in got if m["type"] == "view"]
    assert len(views) > 20
    named: set[str] = set()
    for m in got:
        if m["type"] == "event":
            named |= set(card_tokens(m["event"]["text"]))
        elif m["type"] == "view":
            step = m["step"]
            assert all(p == {} for p in step["private"]) and "hand" not in step["public"]
            assert set(card_tokens(json.dumps(step["public"]))) <= named
    decisions = [e for _, e in rec.decisions()]
    assert decisions and all(e["ms"] < 1500 for e in decisions)


def test_a_reader_that_takes_nothing_is_dropped_and_its_place_freed() -> None:
    stopped: list[str] = []

    def tap(match_id: str, deliver: Callable[[Any], None]) -> Callable[[], None]:
        deliver(None)  # the arena has nothing more for this feed
        return lambda: stopped.append(match_id)

    feeds = LiveFeeds(tap, 4, {}, "whist")
    feeds_of = [feeds.open("m1", ["a@1", "b@1"] * 2, "10.0.0.1")]
    feeds_of += [feeds.open("m1", ["a@1", "b@1"] * 2, "10.0.0.1") for _ in range(3)]
    with pytest.raises(Refused, match="live streams from one address"):
        feeds.open("m1", ["a@1", "b@1"] * 2, "10.0.0.1")
    feed = feeds_of[0]
    assert feed is not None and all(f is feed for f in feeds_of)
    wait_until(lambda: feed.done, 10, what="the feed's start")

    async def never_read() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def send(message: Any) -> None:
            sent.append(message)
            if message["type"] == "http.response.body":
                await trio.sleep_forever()  # the reader's window stays shut

        async def receive() -> Any:
            await trio.sleep_forever()

        await EventStream(feeds, feed, "10.0.0.1")({"type": "http"}, receive, send)
        return sent

    clock = MockClock(autojump_threshold=0)
    sent = trio.run(never_read, clock=clock)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert clock.current_time() >= SEND_TIMEOUT_S  # given its time, then dropped
    # Its place is free again; the last reader ends the feed and the arena's tap.
    assert feeds.open("m1", ["a@1", "b@1"] * 2, "10.0.0.1") is feed
    for _ in range(4):
        feeds.close(feed, "10.0.0.1")
    assert feeds.following() == 0 and stopped == ["m1"]
