"""A spectator's desk fed by the spectator service (Spectator.ListMatches, WatchMatch): the
match's start from its listing, its public events, its end. ``arena watch``'s page, and the
watch link ``arena play`` prints, are the people's page with this desk at no seat."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio
from cardarena import codec, messages, rpc
from cardarena.client import CLIENT_OPTIONS

from arena.people.desk import Desk
from arena.protocol import spectator

#: A spectator's desk sits at no seat: its page has no hand and no move of its own.
SPECTATOR = -1
#: How long a watch link's desk waits for its match to be on the server's board (seconds).
LISTED_WITHIN_S = 120.0


async def _listed(channel: grpc.aio.Channel, match_id: str) -> messages.MatchSummary | None:
    """``match_id`` as the server lists it, waiting for it to start (a watch link is printed
    before the match is)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + LISTED_WITHIN_S
    stub: Any = rpc.SpectatorStub(channel)
    while loop.time() < until:
        reply = await stub.ListMatches(spectator.list_matches_request())
        for m in spectator.read_list_matches_response(reply):
            if m.match_id == match_id:
                return m
        await asyncio.sleep(0.1)
    return None


async def spectate(desk: Desk, address: str, match_id: str) -> None:
    """Feed ``desk`` from WatchMatch until the match's end (or the server's refusal, said on the
    page)."""
    async with grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS) as channel:
        try:
            summary = await _listed(channel, match_id)
            if summary is None:
                desk.publish(_error(f"no match {match_id!r} on {address}"))
                return
            desk.take(
                messages.MatchStart(
                    match_id,
                    summary.game,
                    "",
                    dict(desk.options),
                    (),
                    summary.players,
                    messages.TimeControl(),
                    "",
                    0,
                )
            )
            watch: Any = rpc.SpectatorStub(channel).WatchMatch
            async for raw in watch(spectator.watch_request(match_id)):
                msg = codec.proto_to_plain(raw)
                desk.take(msg)
                if isinstance(msg, messages.MatchEnd):
                    return
            desk.publish(_error(f"{address}: the server ended the stream before the match's end"))
        except grpc.RpcError as err:
            code = err.code() if isinstance(err, grpc.Call) else None
            why = (err.details() if isinstance(err, grpc.Call) else "") or "no answer"
            name = code.name if code else "error"
            # One line (``arena watch`` exits with it): a server gone mid-match says so.
            gone = "the server went away before the match's end: " if desk.table else ""
            desk.publish(_error(f"{address}: {gone}{name}: {why.splitlines()[0]}"))


def _error(message: str) -> dict[str, Any]:
    return {"type": "error", "fault": "", "message": message, "code": ""}
