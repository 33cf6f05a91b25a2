"""gRPC glue: the sync grpcio server whose handler threads pass messages to and from trio.

Each bot stream uses two threads and never blocks trio:

* the handler thread (from grpcio's pool) drains the connection's outbox, a
  ``queue.SimpleQueue`` that the trio side fills without blocking;
* a reader thread decodes the bot's messages and hands each to trio with
  ``TrioToken.run_sync_soon`` (about 0.46 ms per decision round trip on the reference machine;
  ``trio.from_thread.run`` per message costs about a third more, as it waits for the result).

Only the rare unary spectator calls use ``trio.from_thread.run_sync``.
"""

from __future__ import annotations

import itertools
import queue
import stat
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import grpc
import structlog
import trio

from arena import serde
from arena._pb import arena_pb2 as pb
from arena._pb import arena_pb2_grpc as pb_grpc
from arena.errors import ArenaError
from arena.server.connections import Connection
from arena.server.hub import ArenaServer

log = structlog.get_logger("arena.server")
T = TypeVar("T")

#: Channel options, chosen deliberately (docs/protocol.md explains them to bot authors):
GRPC_OPTIONS: list[tuple[str, Any]] = [
    # A bot only ever sends Hello, Action and Ping, each well under 1 KiB: a 64 KiB cap stops a
    # broken or hostile bot from making the server buffer megabytes per message.
    ("grpc.max_receive_message_length", 64 * 1024),
    # Observations are a few KiB; 4 MiB leaves room for any game without being unbounded.
    ("grpc.max_send_message_length", 4 * 1024 * 1024),
    # Ping idle bots every 20 s and drop them 10 s after a missed answer, so a bot whose machine
    # vanished (no FIN) is noticed as disconnected and its decisions fault at once, instead of
    # each waiting for its full deadline.
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # Bots may keep their own connection alive (the SDK pings every 30 s), but not more often
    # than every 10 s: faster pings are a flood at the HTTP/2 level.
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 3),
    # Never share a port with another process (the default lets two servers bind one port).
    ("grpc.so_reuseport", 0),
]

_sessions = itertools.count(1)


class _Bridge:
    """Posting from gRPC threads into trio."""

    def __init__(self, server: ArenaServer, token: trio.lowlevel.TrioToken) -> None:
        self.server = server
        self.token = token

    def post(self, fn: Callable[..., None], *args: Any) -> bool:
        """Run ``fn(*args)`` soon on trio, without waiting; ``False`` once trio has stopped."""
        try:
            self.token.run_sync_soon(self.server.dispatch, fn, *args)
        except trio.RunFinishedError:
            return False
        return True

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on trio and wait for its result (for unary calls only)."""
        return trio.from_thread.run_sync(fn, *args, trio_token=self.token)


class ArenaService(pb_grpc.ArenaServicer):
    """The bot service."""

    def __init__(self, bridge: _Bridge) -> None:
        self._bridge = bridge

    def Play(
        self, request_iterator: Iterator[pb.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[pb.ServerMessage]:
        """One bot stream: hand it to trio, then relay the trio side's messages."""
        conn = Connection(f"c{next(_sessions)}", context.peer())
        if not self._bridge.post(self._bridge.server.on_open, conn):
            context.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        context.add_callback(conn.wake)
        reader = threading.Thread(
            target=self._read,
            args=(request_iterator, conn),
            name=f"arena-read-{conn.session_id}",
            daemon=True,
        )
        reader.start()
        yield from conn.messages()

    def _read(self, requests: Iterator[pb.BotMessage], conn: Connection) -> None:
        server = self._bridge.server
        try:
            for raw in requests:
                if not self._bridge.post(server.on_message, conn, serde.read_bot_message(raw)):
                    return
        except Exception as err:  # grpc ends the iterator with an error when the RPC dies
            log.debug("bot stream ended", session=conn.session_id, error=type(err).__name__)
        finally:
            self._bridge.post(server.on_close, conn)
            conn.wake()


class SpectatorService(pb_grpc.SpectatorServicer):
    """The read-only spectator service: public information only."""

    def __init__(self, bridge: _Bridge) -> None:
        self._bridge = bridge

    def ListMatches(
        self, request: pb.ListMatchesRequest, context: grpc.ServicerContext
    ) -> pb.ListMatchesResponse:
        """Matches the server knows."""
        running_only = serde.read_list_matches_request(request)
        try:
            rows = self._bridge.call(self._bridge.server.board.summaries, running_only)
        except trio.RunFinishedError:
            context.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        return serde.list_matches_response(rows)

    def WatchMatch(
        self, request: pb.WatchMatchRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.ServerMessage]:
        """Public events of one match, then its MatchEnd."""
        match_id = serde.read_watch_request(request)
        board = self._bridge.server.board
        q: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
        try:
            found = self._bridge.call(board.watch, match_id, q)
        except trio.RunFinishedError:
            context.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        if not found:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no match {match_id!r}")

        def done() -> None:
            q.put(None)
            self._bridge.post(board.unwatch, match_id, q)

        context.add_callback(done)
        while (msg := q.get()) is not None:
            yield msg

    def Standings(
        self, request: pb.StandingsRequest, context: grpc.ServicerContext
    ) -> pb.StandingsResponse:
        """Per-bot totals."""
        game = serde.read_standings_request(request)
        try:
            rows = self._bridge.call(self._bridge.server.board.standings, game)
        except trio.RunFinishedError:
            context.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        return serde.standings_response(rows)


def start_grpc_server(
    server: ArenaServer,
    token: trio.lowlevel.TrioToken,
    listen: str,
    unix: Path | None,
    max_connections: int,
) -> grpc.Server:
    """Build, bind and start the grpcio server; fills ``server.address``/``unix_address``."""
    bridge = _Bridge(server, token)
    # One handler thread per open stream (each blocks on its outbox), plus a few for unary calls;
    # past max_connections new calls fail fast with RESOURCE_EXHAUSTED instead of queueing.
    grpc_server = grpc.server(
        ThreadPoolExecutor(max_workers=max_connections + 8, thread_name_prefix="arena-grpc"),
        options=GRPC_OPTIONS,
        maximum_concurrent_rpcs=max_connections,
    )
    pb_grpc.add_ArenaServicer_to_server(ArenaService(bridge), grpc_server)
    pb_grpc.add_SpectatorServicer_to_server(SpectatorService(bridge), grpc_server)
    port = _bind(grpc_server, listen)
    host = listen.rsplit(":", 1)[0]
    server.address = f"{host}:{port}"
    if unix is not None:
        if unix.exists() and stat.S_ISSOCK(unix.stat().st_mode):
            unix.unlink()  # a stale socket from a previous run
        unix.parent.mkdir(parents=True, exist_ok=True)
        _bind(grpc_server, f"unix:{unix}")
        server.unix_address = f"unix:{unix}"
    grpc_server.start()
    return grpc_server


def _bind(grpc_server: grpc.Server, address: str) -> int:
    try:
        port = grpc_server.add_insecure_port(address)
    except RuntimeError as err:
        raise ArenaError(f"cannot listen on {address}: {err}") from None
    if port == 0 and not address.startswith("unix:"):
        raise ArenaError(f"cannot listen on {address}")
    return port
