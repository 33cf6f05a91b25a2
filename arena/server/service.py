"""gRPC glue: a ``grpc.aio`` server on its own asyncio loop thread, with the whole server on it.

The handlers call the :class:`~arena.server.hub.Hub` directly; an answer runs its referee on
inside the handler that read it, and the referee's next request, put in the connection's
:class:`~arena.server.connections.Outbox`, starts its write at once (:class:`_StreamWriter`): a
decision's request and answer never leave the thread, nor wait for a task switch. Trio code
(commands, tournaments, tests) reaches the server through :mod:`arena.server.api`, one thread hop
per call or per match.

Earlier designs paid for threads per message (sync grpcio woke threads to hand each message on; a
trio referee beside the loop cost two cross-thread wake-ups per decision), then for task switches
(a referee task and a writing task per stream): docs/performance.md.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import stat
import threading
from collections.abc import AsyncIterator, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc.aio
import structlog
from cardarena import rpc

from arena.errors import ArenaError
from arena.protocol import codec, spectator
from arena.server.connections import Connection
from arena.server.hub import MAX_GUESTS_PER_ADDRESS, Hub
from arena.server.limits import ConnectionCensus, Endpoint, grpc_endpoint, raise_open_files_limit
from arena.server.outbox import Outbox, Outgoing

log = structlog.get_logger("arena.server")
T = TypeVar("T")


_sessions = itertools.count(1)

#: Spectator streams (WatchMatch) open at once; more are refused, so watchers cannot fill the
#: server that bots play on.
MAX_WATCHERS = 64

#: What ``read()`` returns at the end of a grpc.aio stream (missing from grpc-stubs).
EOF: Any = getattr(grpc.aio, "EOF")  # noqa: B009


class ArenaService(rpc.ArenaServicer):
    """The bot service."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        #: Open streams and their TCP endpoints (for the census: arena/server/limits.py).
        self._streams: dict[Connection, Endpoint | None] = {}

    def endpoints_in_use(self) -> set[Endpoint]:
        """TCP endpoints whose connection carries a welcomed bot stream."""
        return {e for c, e in self._streams.items() if e is not None and c.hello is not None}

    async def Play(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        """One bot stream: hand its messages to the hub, write the outbox until either ends."""
        hub = self._hub
        if hub.closing:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        conn = Connection(f"c{next(_sessions)}", context.peer())
        self._streams[conn] = grpc_endpoint(conn.peer)
        hub.dispatch(hub.on_open, conn)
        writer = _StreamWriter(context, conn)
        reader = asyncio.ensure_future(self._read(context, conn))
        try:
            await writer.finished
        finally:
            writer.stop()
            reader.cancel()
            hub.dispatch(hub.on_close, conn)
            del self._streams[conn]

    async def _read(self, context: grpc.aio.ServicerContext[Any, Any], conn: Connection) -> None:
        hub = self._hub
        dispatch, on_message, read = hub.dispatch, hub.on_message, codec.bot_bytes_to_plain
        try:
            # context.read() rather than the request iterator: one async generator less per
            # message on the hottest path.
            while (raw := await context.read()) is not EOF:
                dispatch(on_message, conn, read(raw))
        except asyncio.CancelledError:
            raise
        except Exception as err:  # grpc ends the iterator with an error when the RPC dies
            log.debug("bot stream ended", session=conn.session_id, error=type(err).__name__)
        hub.dispatch(hub.on_close, conn)
        conn.wake()


class _StreamWriter:
    """Writes one bot stream's outbox, one message at a time (gRPC allows one write in flight).

    A write starts the moment its message is queued, inside the code that queued it: an answer
    makes the referee queue the next request (referee.py), and the request is on its way before
    the reader returns to the loop. A task per stream draining the outbox would cost a task
    switch per decision, and a reader that awaited its own writes would not be reading while the
    write completes. So each ``context.write`` coroutine is stepped here by hand, as a task would
    step it: to its first suspension at once, then on from each future it waits for.
    """

    __slots__ = ("_conn", "_coro", "context", "finished", "items")

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any], conn: Connection) -> None:
        self.context = context
        self._conn = conn
        self.items = conn.outbox.items
        #: Done once the outbox has ended (``None``) or a write failed.
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # The write in flight.
        self._coro: Coroutine[Any, Any, None] | None = None
        conn.outbox.listener = self.kick
        self.kick()

    def kick(self) -> None:
        """Start writing the next queued message, unless a write is in flight."""
        if self._coro is not None or self.finished.done() or not self.items:
            return
        msg = self.items.popleft()
        if msg is None:
            self.finished.set_result(None)
            return
        self._coro = self.context.write(msg)
        self._step()

    def _step(self, waited: object = None) -> None:
        coro = self._coro
        if coro is None:  # stopped meanwhile: the write's outcome no longer matters
            if isinstance(waited, asyncio.Future) and not waited.cancelled():
                waited.exception()  # retrieved, so asyncio does not log it as lost
            return
        try:
            waiting = coro.send(None)
        except StopIteration:
            self._coro = None
            self.kick()
            return
        except (Exception, asyncio.CancelledError) as err:  # the RPC died under a write
            self._coro = None
            log.debug("bot stream ended", session=self._conn.session_id, error=type(err).__name__)
            if not self.finished.done():
                self.finished.set_result(None)
            return
        if isinstance(waiting, asyncio.Future):
            waiting._asyncio_future_blocking = False
            waiting.add_done_callback(self._step)
        else:  # a bare yield: go on at the loop's next turn
            asyncio.get_running_loop().call_soon(self._step)

    def stop(self) -> None:
        """Abandon the write in flight (the stream is over)."""
        coro, self._coro = self._coro, None
        if coro is not None:
            coro.close()
        self._conn.outbox.listener = None


#: What a server that shows no match to spectators answers WatchMatch with.
NOT_SHOWN = (
    "this arena shows no match as it is played: it plays duplicate deals, and another rotation "
    "of a deal may still be at the table"
)


class SpectatorService(rpc.SpectatorServicer):
    """The read-only spectator service: public information only. ``shown=False`` (a server that
    plays duplicate deals with strangers' bots: a tournament, a competition host, a worker)
    shows nothing: one rotation's public cards are another's hidden hands, and a bot at one
    table could watch the same deal at the other. ListMatches and Standings then answer empty
    (a health check still gets its answer) and WatchMatch is refused."""

    def __init__(self, hub: Hub, shown: bool = True) -> None:
        self._board = hub.board
        self._shown = shown
        self._watchers = 0
        #: TCP endpoints of the WatchMatch streams (for the census), with their streams.
        self._watching: dict[Endpoint, int] = {}

    def endpoints_in_use(self) -> set[Endpoint]:
        """TCP endpoints whose connection carries a spectator's stream."""
        return set(self._watching)

    async def ListMatches(
        self, request: rpc.ListMatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rpc.ListMatchesResponse:
        """Matches the server knows."""
        running_only = spectator.read_list_matches_request(request)
        if not self._shown:
            return spectator.list_matches_response([])
        return spectator.list_matches_response(self._board.summaries(running_only))

    async def WatchMatch(  # type: ignore[override]
        self, request: rpc.WatchMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Outgoing]:
        """Public events of one match, then its MatchEnd."""
        match_id = spectator.read_watch_request(request)
        if not self._shown:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, NOT_SHOWN)
        board = self._board
        if self._watchers >= MAX_WATCHERS:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_WATCHERS} spectators are watching already; try later",
            )
        q: Outbox[Outgoing] = Outbox()
        if not board.watch(match_id, q):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {match_id!r}")
        self._watchers += 1
        endpoint = grpc_endpoint(context.peer())
        if endpoint is not None:
            self._watching[endpoint] = self._watching.get(endpoint, 0) + 1
        try:
            while (msg := await q.get()) is not None:
                yield msg
        finally:
            self._watchers -= 1
            board.unwatch(match_id, q)
            if endpoint is not None:
                if self._watching[endpoint] > 1:
                    self._watching[endpoint] -= 1
                else:
                    del self._watching[endpoint]

    async def Standings(
        self, request: rpc.StandingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rpc.StandingsResponse:
        """Per-bot totals."""
        game = spectator.read_standings_request(request)
        return spectator.standings_response(self._board.standings(game) if self._shown else [])


class GrpcHost:
    """The asyncio loop thread that runs the ``grpc.aio`` server."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.grpc_server: grpc.aio.Server | None = None
        #: Counts connections per peer once serving (arena/server/limits.py).
        self.census: ConnectionCensus | None = None
        self._thread = threading.Thread(target=self._run, name="arena-grpc", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Run ``coro`` on the loop (any thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, grace: float) -> None:
        """Stop the gRPC server (``grace`` seconds for open calls), then the loop (blocking)."""
        if self.census is not None:
            self.census.stop()
        if self.grpc_server is not None:
            try:
                self.submit(self.grpc_server.stop(grace)).result(grace + 5.0)
            except Exception:
                log.exception("stopping the gRPC server")
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5.0)


#: A TLS certificate chain and its private key, both PEM: the TCP listener serves TLS with them.
TlsPair = tuple[bytes, bytes]


def start_grpc_server(
    listen: str,
    unix: Path | None,
    max_connections: int,
    tls: TlsPair | None = None,
    max_guests_per_address: int = MAX_GUESTS_PER_ADDRESS,
    spectators: bool = True,
) -> tuple[GrpcHost, Hub]:
    """Start the loop thread, the hub and the grpc.aio server on it, bound and serving
    (blocking); the hub's ``address``/``unix_address`` say where. ``max_connections``: lobby
    guests admitted at once (bots with known tokens always are), ``max_guests_per_address`` of
    them from one network address; ``spectators``: whether the spectator service shows the
    matches (:class:`SpectatorService`).

    Every server of the arena starts here (``arena serve``, ``arena match``, tournaments, the
    lobby, tests), so this is where its descriptor limit is raised and its census started."""
    raise_open_files_limit()
    host = GrpcHost()
    server = Hub(host.loop, max_connections, max_guests_per_address)
    try:
        arena, watching = host.submit(
            _start(host, server, listen, unix, max_connections, tls, spectators)
        ).result(30.0)

        def in_use() -> set[Endpoint] | None:
            found: Future[set[Endpoint]] = Future()

            def collect() -> None:
                found.set_result(arena.endpoints_in_use() | watching.endpoints_in_use())

            try:
                host.loop.call_soon_threadsafe(collect)
                return found.result(5.0)
            except Exception:  # the loop has stopped, or is too busy to say
                return None

        port = int(server.address.rsplit(":", 1)[1])
        host.census = ConnectionCensus(port, None if unix is None else str(unix), in_use)
        host.census.start()
    except BaseException:
        host.stop(0)
        raise
    return host, server


async def _start(
    host: GrpcHost,
    server: Hub,
    listen: str,
    unix: Path | None,
    max_connections: int,
    tls: TlsPair | None = None,
    spectators: bool = True,
) -> tuple[ArenaService, SpectatorService]:
    # No cap on concurrent calls here: gRPC's would refuse a bot with a known token as readily
    # as a stream opened only to fill the cap. The hub and the spectator service bound what
    # each kind of stream may hold instead (MAX_GREETING, guests, MAX_WATCHERS).
    grpc_server = grpc.aio.server(options=rpc.SERVER_OPTIONS)
    host.grpc_server = grpc_server
    services = ArenaService(server), SpectatorService(server, spectators)
    _add_services(grpc_server, *services)
    port = _bind(grpc_server, listen, tls)
    host_part = listen.rsplit(":", 1)[0]
    server.address = f"{host_part}:{port}"
    if unix is not None:
        _claim_socket_path(unix)
        _bind(grpc_server, f"unix:{unix}")
        server.unix_address = f"unix:{unix}"
    await grpc_server.start()
    return services


def _add_services(
    grpc_server: grpc.aio.Server, arena: ArenaService, spectator: SpectatorService
) -> None:
    """What the generated ``add_*Servicer_to_server`` do, except that streams of ServerMessage
    take ``codec.proto_to_bytes`` as their serializer (the referee sends its decision requests and
    events already encoded, codec.decision_to_bytes), and that Play reads bytes."""
    services = {
        "Arena": {
            # Bot messages arrive as bytes: codec.bot_bytes_to_plain reads the usual answer without
            # building a message, and tells the bot when its bytes are no BotMessage (a
            # deserializer's error would end the stream without a word).
            "Play": grpc.stream_stream_rpc_method_handler(
                arena.Play, response_serializer=codec.proto_to_bytes
            )
        },
        "Spectator": {
            "ListMatches": grpc.unary_unary_rpc_method_handler(
                spectator.ListMatches,
                request_deserializer=rpc.ListMatchesRequest.FromString,
                response_serializer=rpc.ListMatchesResponse.SerializeToString,
            ),
            "WatchMatch": grpc.unary_stream_rpc_method_handler(
                spectator.WatchMatch,
                request_deserializer=rpc.WatchMatchRequest.FromString,
                response_serializer=codec.proto_to_bytes,
            ),
            "Standings": grpc.unary_unary_rpc_method_handler(
                spectator.Standings,
                request_deserializer=rpc.StandingsRequest.FromString,
                response_serializer=rpc.StandingsResponse.SerializeToString,
            ),
        },
    }
    for name, handlers in services.items():
        full_name = rpc.service_name(name)
        grpc_server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(full_name, handlers),)
        )
        # As generated code does (missing from grpc-stubs): the call path skips a lookup.
        grpc_server.add_registered_method_handlers(full_name, handlers)  # type: ignore[attr-defined]


def _bind(grpc_server: grpc.aio.Server, address: str, tls: TlsPair | None = None) -> int:
    if not address.startswith("unix:"):
        _check_tcp(address)
    try:
        if tls is None:
            port = grpc_server.add_insecure_port(address)
        else:
            cert, key = tls
            credentials = grpc.ssl_server_credentials([(key, cert)])
            port = grpc_server.add_secure_port(address, credentials)
    except RuntimeError as err:
        # gRPC appends advice about GRPC_VERBOSITY; the first sentence is the message.
        raise ArenaError(f"cannot listen on {address}: {str(err).split(';')[0]}") from None
    if port == 0 and not address.startswith("unix:"):
        raise ArenaError(f"cannot listen on {address}")
    return port


def _claim_socket_path(path: Path) -> None:
    """Make way for a Unix socket at ``path``: remove a stale socket file from a previous run,
    but refuse one a running server still listens on (unlinking it would cut that server off
    without a word), and say in words why the path cannot be used."""
    try:
        mode: int | None = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise ArenaError(f"cannot listen on unix:{path}: {err.strerror or err}") from None
    if mode is not None and stat.S_ISSOCK(mode):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                path.unlink(missing_ok=True)  # nobody listens: stale
            else:
                raise ArenaError(f"cannot listen on unix:{path}: another server listens there")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ArenaError(f"cannot listen on unix:{path}: {err.strerror or err}") from None


def _check_tcp(address: str) -> None:
    """Refuse a malformed ``HOST:PORT`` or a port already taken, in words (gRPC would take
    port 99999 as 34463, and says only "Failed to bind" for a port in use)."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ArenaError(
            f"cannot listen on {address!r}: expected HOST:PORT with a port from 0 to 65535"
        )
    port = int(port_text)
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except OSError as err:
        raise ArenaError(f"cannot listen on {address}: {err.strerror or err}") from None
    family, kind, proto, _, where = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # As gRPC binds: SO_REUSEADDR, so a port in TIME_WAIT is not reported as taken.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except OSError as err:
            raise ArenaError(f"cannot listen on {address}: {err.strerror or err}") from None
