"""``arena watch``: the matches an arena server shows to spectators, and one match followed as
it is played, from the spectator service (Spectator.ListMatches, WatchMatch): public events
only, then the result. A server that plays duplicate deals (a tournament, a competition host, a
worker) shows none (:data:`arena.server.service.NOT_SHOWN`); its refusal is said in one line.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Mapping

import grpc
from cardarena import codec, messages, rpc

from arena.errors import ArenaError
from arena.people.bridge import PeopleBridge
from arena.people.desk import Desk
from arena.people.play import loopback_listener, page_url
from arena.people.spectate import SPECTATOR, spectate
from arena.protocol import spectator
from arena.records.view import event_text
from engine import EngineError, Event, OptionValue, get_game

#: Seconds a server has to answer ListMatches.
LIST_TIMEOUT_S = 5.0


class WatchError(ArenaError):
    """The server refused, or is not there: one line."""


def _trouble(address: str, err: grpc.RpcError) -> WatchError:
    code = err.code() if isinstance(err, grpc.Call) else None
    why = err.details() if isinstance(err, grpc.Call) else ""
    if code is grpc.StatusCode.PERMISSION_DENIED:
        return WatchError(f"{address}: {why}")
    if code is grpc.StatusCode.NOT_FOUND:
        return WatchError(f"{address}: {why} (arena watch {address} lists the matches)")
    name = code.name if code is not None else "error"
    return WatchError(f"{address}: {name}: {why or 'no answer'}")


def list_matches(address: str) -> list[messages.MatchSummary]:
    """The matches the server at ``address`` shows (running and recently finished)."""
    try:
        with grpc.insecure_channel(address) as channel:
            reply = rpc.SpectatorStub(channel).ListMatches(
                spectator.list_matches_request(), timeout=LIST_TIMEOUT_S
            )
    except grpc.RpcError as err:
        raise _trouble(address, err) from None
    except ValueError as err:  # a malformed address
        raise WatchError(f"{address}: {err}") from None
    return spectator.read_list_matches_response(reply)


def summary_line(m: messages.MatchSummary) -> str:
    """One match as a line: ``ID  GAME  running  bot-a, bot-b``."""
    bots = ", ".join(p.bot_name for p in sorted(m.players, key=lambda p: p.seat))
    status = messages.MatchStatus(m.status).name.lower()
    end = f"  {m.result.summary or m.result.reason}" if m.result is not None else ""
    return f"{m.match_id}  {m.game}  {status}  {bots}{end}"


def seat_names(m: messages.MatchSummary) -> tuple[str, ...]:
    """The seats' names of ``m``'s game (``N``, ``E``…), or the bots' names for a game this
    copy cannot seat from the summary alone."""
    try:
        game = get_game(m.game)
        names = tuple(game.seat_names(game.configure(len(m.players), {})))
        if len(names) == len(m.players):
            return names
    except Exception:  # an unknown game, or one whose seats need options: name the bots
        pass
    return tuple(p.bot_name for p in sorted(m.players, key=lambda p: p.seat))


def find(address: str, match_id: str) -> messages.MatchSummary:
    """``match_id`` as the server lists it; :class:`WatchError` (one line) when the server does
    not show it: its own refusal (spectators off, an unknown match)."""
    for m in list_matches(address):
        if m.match_id == match_id:
            return m
    try:
        # Not listed: the server's WatchMatch says why (it answers at once).
        with grpc.insecure_channel(address) as channel:
            stub = rpc.SpectatorStub(channel)
            list(stub.WatchMatch(spectator.watch_request(match_id), timeout=LIST_TIMEOUT_S))
    except grpc.RpcError as err:
        raise _trouble(address, err) from None
    raise WatchError(f"{address}: no match {match_id!r}")


def follow(address: str, match_id: str) -> Iterator[str]:
    """``match_id``'s public events as lines while it is played, then its result's line."""
    names = seat_names(find(address, match_id))
    try:
        with grpc.insecure_channel(address) as channel:
            stream = rpc.SpectatorStub(channel).WatchMatch(spectator.watch_request(match_id))
            for raw in stream:
                msg = codec.proto_to_plain(raw)
                if isinstance(msg, messages.EventInfo):
                    yield event_text(Event(msg.kind, msg.data, None), names)
                elif isinstance(msg, messages.MatchEnd):
                    res = msg.result
                    scores = " ".join(f"{s:g}" for s in res.scores)
                    yield f"end: {res.summary or res.reason} (scores {scores})"
                    return
    except grpc.RpcError as err:
        raise _trouble(address, err) from None
    raise WatchError(f"{address}: the server ended the stream before the match's end")


def watch_page(
    address: str,
    match_id: str,
    announce: Callable[[str], None],
    options: Mapping[str, OptionValue] | None = None,
    players: int | None = None,
) -> None:
    """Serve a live page of ``match_id`` on loopback (a random secret in its URL, given to
    ``announce``) until the match is over and the page was told: the people's page, fed by the
    spectator service instead of a seat, so it holds public events and the result only (its
    table drawn by the rules with ``options`` and ``players``, the match's)."""
    summary = find(address, match_id)
    try:
        game = get_game(summary.game)
        game.configure(players or len(summary.players), options or {})
    except EngineError as err:
        raise WatchError(f"{address}: {match_id}: {err}") from None
    listener = loopback_listener()
    try:
        desk = Desk(SPECTATOR, secrets.token_urlsafe(18), players, options=dict(options or {}))
        bridge = PeopleBridge([desk], [match_id], listener, hold=spectate)
        announce(page_url(listener, desk))
        bridge.run(address)
    finally:
        listener.close()
    if isinstance(bridge.error, KeyboardInterrupt):
        raise bridge.error
    if bridge.error is not None:
        raise WatchError(f"{address}: the page failed: {bridge.error}")
    if not desk.ended:
        # The server went away (or refused) mid-watch: the page said why; so does the command.
        said = [m["message"] for m in desk.feed if m.get("type") == "error"]
        raise WatchError(said[-1] if said else f"{address}: the stream ended before the match")
