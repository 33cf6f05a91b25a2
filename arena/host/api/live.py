"""The matches in progress: who plays which (``/live``), and one match followed as it is played
(``/live/{id}``, ``/live/{id}/feed``) when the duplicate-deal rule allows it.

A unit plays one deal in every rotation of its places, so what is public in one rotation (the
cards played) is another rotation's hidden hands. The list says only which matches are being
played, by whom. One match's public events are streamed (Server-Sent Events: the people's page
messages of arena/people/desk.py, drawn by the match page as ``arena watch`` draws them) only
once no other seating of its deal is still to play or in play (arena/host/livefeed.py, which
says why not otherwise). Only the host's own arena's matches are known as they play; with
``[workers] dask`` the ladder's are on the cluster's workers (``on_workers``). A challenge (a
person at the table, arena/host/api/challenges.py) is listed too, labelled ``human``, and is
followed at once: its deal is its own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from starlette.types import Receive, Scope, Send

from arena.host.api.challenges import challenge_out, is_challenge
from arena.host.api.deps import PREFIX, Host, HostState, MatchId
from arena.host.api.limits import client_address
from arena.host.apitypes import Live, LiveMatch, LiveStatus
from arena.host.livefeed import (
    SEND_TIMEOUT_S,
    Feed,
    LiveFeeds,
    Refused,
    Verdict,
    challenge_verdict,
    stored,
    verdict,
)
from arena.host.store import NotFound, StoredMatch

router = APIRouter(prefix=PREFIX)

#: Seconds between two looks at a feed for new messages, and between keep-alive comments.
POLL_S = 0.2
KEEPALIVE_S = 15.0
#: Page messages sent in one write.
BATCH = 200


@router.get("/live", response_model=Live, response_model_exclude_none=True)
def live(host: Host) -> Live:
    store = host.store
    found: list[StoredMatch] = []
    human: list[LiveMatch] = []
    for match_id in host.running():
        if is_challenge(match_id):
            human.extend(_challenge_row(host, match_id))
            continue
        try:
            m = store.match(match_id)
        except NotFound:
            continue  # a validation match: not the competition's
        if m.state == "pending":
            found.append(m)
    refs = store.version_refs([v for m in found for v in m.seats])
    return Live(
        matches=[
            LiveMatch(
                match_id=m.match_id,
                unit=m.unit_id,
                phase=m.phase,
                rotation=m.rotation,
                seats=[refs.get(v, str(v)) for v in m.seats],
            )
            for m in found
        ]
        + human,
        on_workers=host.config.workers.dask is not None,
    )


def _challenge_row(host: HostState, match_id: str) -> list[LiveMatch]:
    """A challenge being played as ``/live`` lists it (none once it is stored as over)."""
    try:
        c = challenge_out(host, host.store.challenge(match_id))
    except NotFound:
        return []
    if c.state != "playing":
        return []
    return [
        LiveMatch(match_id=c.match_id, unit=0, phase=c.phase, rotation=0, seats=c.seats, human=True)
    ]


def _seen(host: HostState, match_id: str) -> tuple[Verdict, list[str]]:
    """Whether ``match_id`` is shown live now, and who plays each seat (``BOT@N``, a
    person's ``person:AUTHOR``); 404 for no such match."""
    running = host.running()
    if is_challenge(match_id):
        try:
            c = challenge_out(host, host.store.challenge(match_id))
        except NotFound:
            raise HTTPException(404, f"no match {match_id!r}") from None
        return challenge_verdict(match_id, c.state == "playing", running), c.seats
    m = stored(host.store, match_id)
    if m is None:
        raise HTTPException(404, f"no match {match_id!r}")
    refs = host.store.version_refs(list(m.seats))
    return verdict(host.store, m, running), [refs.get(s, str(s)) for s in m.seats]


@router.get("/live/{match_id}", response_model=LiveStatus)
def live_status(match_id: MatchId, host: Host) -> LiveStatus:
    """Whether the match is shown live now, and why (not)."""
    v, _ = _seen(host, match_id)
    return LiveStatus(
        match_id=match_id, showing=v.showing, why=v.why, waiting_for=list(v.waiting_for)
    )


@router.get("/live/{match_id}/feed", response_class=Response)
def live_feed(match_id: MatchId, host: Host, request: Request) -> Response:
    """The match's public events as the page's messages (Server-Sent Events, one ``data:``
    line of JSON each), those so far first; 409 while the rule keeps it hidden."""
    feeds = host.live_feeds
    v, seats = _seen(host, match_id)
    if v.showing != "live":
        raise HTTPException(409, v.why)
    if feeds is None:
        raise HTTPException(409, "this host shows no live match")
    address = client_address(request.scope)
    try:
        feed = feeds.open(match_id, seats, address)
    except Refused as err:
        raise HTTPException(429, str(err), headers={"Retry-After": "10"}) from None
    if feed is None:
        raise HTTPException(409, "not being played by this host's arena now")
    return EventStream(feeds, feed, address)


class EventStream(Response):
    """A feed read at the reader's pace: each write must be taken within
    :data:`SEND_TIMEOUT_S`, or the reader is dropped (the feed, shared, holds nothing for it)."""

    media_type = "text/event-stream"

    def __init__(self, feeds: LiveFeeds, feed: Feed, address: str) -> None:
        super().__init__(
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            media_type=self.media_type,
        )
        self.feeds, self.feed, self.address = feeds, feed, address

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as tg:

                async def gone() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                tg.start_soon(gone)
                await self._stream(send)
                tg.cancel_scope.cancel()
        finally:
            self.feeds.close(self.feed, self.address)

    async def _stream(self, send: Send) -> None:
        # Not the Response's own headers: they would say a length of 0.
        headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        try:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            async for chunk in _chunks(self.feed):
                with anyio.fail_after(SEND_TIMEOUT_S):
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            with anyio.fail_after(SEND_TIMEOUT_S):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except (TimeoutError, OSError):
            pass  # a slow or gone reader is dropped; the match never knew


async def _chunks(feed: Feed) -> AsyncIterator[bytes]:
    """The feed's messages in batches as they come, keep-alive comments while idle; ends
    after the last message (the match's end)."""
    sent, idle = 0, 0.0
    messages = feed.desk.feed
    while True:
        done = feed.done  # before the look: a message added after it is still sent
        if sent < len(messages):
            batch = messages[sent : sent + BATCH]
            sent += len(batch)
            idle = 0.0
            yield "".join(_sse(m) for m in batch).encode()
            continue
        if done:
            return
        await anyio.sleep(POLL_S)
        idle += POLL_S
        if idle >= KEEPALIVE_S:
            idle = 0.0
            yield b": keep-alive\n\n"


def _sse(message: dict[str, Any]) -> str:
    return "data: " + json.dumps(message, separators=(",", ":")) + "\n\n"
