"""What a connection to the competition's HTTP API may hold: the ``[http]`` limits.

A stranger's connection costs the host a descriptor and a task for as long as it stays open, and
hypercorn (arena/host/http.py serves with it) bounds neither by itself: its idle timer waits as
long for a TLS handshake as a client likes to take (60 s), a body may trickle in one byte at a
time for ever, and one address may open connections until the host is out of descriptors (issue
41: the ladder then could not start its bots). :func:`serve` is hypercorn's trio worker with:

* each accepted connection counted per address (IPv6: per /64, what one subscriber gets) and in
  all, and closed at once beyond ``max_connections_per_address`` or ``max_connections``: a
  refusal holds nothing, neither a descriptor nor a queue slot;
* ``header_timeout_s`` for a new connection's TLS handshake and for its first request's headers
  (hypercorn's own idle timer, which runs until a request's headers are complete, with this
  figure), and ``keep_alive_s`` for the same timer after each answer;
* :class:`BodyDeadline` around the application: a body that goes ``body_timeout_s`` without a
  byte, or averages less than ``min_body_rate`` bytes a second past that, ends its request with
  408 (over HTTP/1.1 the connection is then closed, the rest of the body unread).

What hypercorn does well it keeps doing: header size (``h11_max_incomplete_size``), HTTP/2
streams per connection and frame sizes, and the HTTP/2 fix of arena/host/http.py.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import structlog
import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.events import Event, Updated
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.statsd import StatsdLogger
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import ShutdownError, raise_shutdown, repr_socket_addr, wrap_app

from arena.host.config import HttpConfig

log = structlog.get_logger("arena.host")

#: Seconds between two log lines about refused connections.
REFUSAL_LOG_S = 60.0

_Scope = dict[str, Any]
_Message = dict[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_App = Callable[[_Scope, _Receive, _Send], Awaitable[None]]

_TIMED_OUT = {
    "type": "http.response.start",
    "status": 408,
    "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
}
_TIMED_OUT_BODY = b'{"detail":"the request\'s body came too slowly"}'


class BodyDeadline:
    """ASGI middleware: a request's body must keep coming (see the module's docstring)."""

    def __init__(self, app: _App, limits: HttpConfig) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        timeout, rate = self.limits.body_timeout_s, self.limits.min_body_rate
        start = trio.current_time()
        received = 0
        complete = answered = timed_out = False

        async def guarded_receive() -> _Message:
            nonlocal received, complete, timed_out
            if complete:  # past the body only a disconnect comes: no deadline
                return await receive()
            deadline = trio.current_time() + timeout
            if rate > 0:  # the average rate, the first ``timeout`` seconds free
                deadline = min(deadline, start + timeout + received / rate)
            with trio.move_on_at(deadline):
                message = await receive()
                if message["type"] == "http.request":
                    received += len(message.get("body", b""))
                    complete = not message.get("more_body", False)
                else:
                    complete = True
                return message
            timed_out = True
            scope_.cancel()  # the application's wait ends as a cancellation, not an error
            await trio.sleep_forever()

        async def watched_send(message: _Message) -> None:
            nonlocal answered
            answered = True
            await send(message)

        with trio.CancelScope() as scope_:
            await self.app(scope, guarded_receive, watched_send)
        if timed_out and not answered:
            await send(_TIMED_OUT)
            await send({"type": "http.response.body", "body": _TIMED_OUT_BODY})


class Connections:
    """The connections open now, per address and in all; a refusal is logged, once a minute at
    most (an attack is news to the host, its every connection is not)."""

    def __init__(self, per_address: int, total: int) -> None:
        self.per_address, self.total = per_address, total
        self.open: Counter[str] = Counter()
        self._logged = -math.inf

    @contextmanager
    def admit(self, address: str) -> Iterator[bool]:
        """Yields whether one more connection from ``address`` is allowed; counted while open."""
        key = address_key(address)
        if self.open[key] >= self.per_address or self.open.total() >= self.total:
            if time.monotonic() - self._logged >= REFUSAL_LOG_S:
                self._logged = time.monotonic()
                log.warning(
                    "refusing HTTP connections beyond the [http] caps",
                    address=key,
                    open_from_it=self.open[key],
                    open_in_all=self.open.total(),
                )
            yield False
            return
        self.open[key] += 1
        try:
            yield True
        finally:
            self.open[key] -= 1
            if not self.open[key]:
                del self.open[key]


def address_key(address: str) -> str:
    """What the per-address cap counts: an IPv4 address, an IPv6 address's /64."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip.ipv4_mapped or ip) if isinstance(ip, ipaddress.IPv6Address) else str(ip)


class _Connection(TCPServer):
    """Hypercorn's connection, its idle timer at ``header_timeout_s`` until the first answer and
    at ``keep_alive_s`` after it (the timer runs only while no request is under way). Once the
    client has gone the timer is stopped: hypercorn would wait it out, the connection (and its
    descriptor, and its place under the caps) held for nothing."""

    limits: HttpConfig

    def __init__(self, limits: HttpConfig, *args: Any) -> None:
        super().__init__(*args)
        self.limits = limits
        self._idle_s = limits.header_timeout_s
        self._gone = False

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, Updated) and event.idle:
            self._idle_s = self.limits.keep_alive_s
        await super().protocol_send(event)

    async def _read_data(self) -> None:
        await super()._read_data()
        self._gone = True
        await self.idle_task.stop()

    async def _idle_timeout(self) -> None:
        if not self._gone:
            with trio.move_on_after(self._idle_s):
                await self.context.terminated.wait()
        with trio.CancelScope(shield=True):
            await self._initiate_server_close()


def _peer(stream: Any) -> str:
    """The client's address of a stream a listener accepted (TLS or not)."""
    sock = getattr(stream, "transport_stream", stream).socket
    peer = sock.getpeername()
    return str(peer[0]) if isinstance(peer, tuple) else str(peer)


def configure(config: HypercornConfig, limits: HttpConfig) -> None:
    """The limits hypercorn enforces itself, set on its config."""
    config.ssl_handshake_timeout = limits.header_timeout_s
    config.keep_alive_timeout = limits.keep_alive_s


async def serve(
    app: object,
    config: HypercornConfig,
    limits: HttpConfig,
    *,
    shutdown_trigger: Callable[[], Awaitable[object]],
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """``hypercorn.trio.serve`` (its ASGI worker over TCP: the host serves no QUIC, and no
    worker restarts after ``max_requests``), each connection held to ``limits``."""
    configure(config, limits)
    config.set_statsd_logger_class(StatsdLogger)
    wrapped = wrap_app(BodyDeadline(app, limits), config.wsgi_max_body_size, "asgi")  # type: ignore[arg-type]
    lifespan_state: dict[str, Any] = {}
    lifespan = Lifespan(wrapped, config, lifespan_state)
    context = WorkerContext(None)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        async with trio.open_nursery() as server_nursery:
            connection = partial(
                _Connection,
                limits,
                wrapped,
                config,
                context,
                ConnectionState(lifespan_state.copy()),
            )
            try:
                await _listen(
                    config, limits, connection, server_nursery, task_status, shutdown_trigger
                )
            finally:
                await context.terminated.set()
                server_nursery.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()


async def _listen(
    config: HypercornConfig,
    limits: HttpConfig,
    connection: Callable[[Any], _Connection],
    handlers: trio.Nursery,
    task_status: trio.TaskStatus[list[str]],
    shutdown_trigger: Callable[[], Awaitable[object]],
) -> None:
    sockets = config.create_sockets()
    ssl_context = config.create_ssl_context()
    listeners: list[trio.abc.Listener[Any]] = []
    binds = []
    for sock, secure in [(s, True) for s in sockets.secure_sockets] + [
        (s, False) for s in sockets.insecure_sockets
    ]:
        sock.listen(config.backlog)
        listener: trio.abc.Listener[Any] = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
        if secure:
            assert ssl_context is not None
            listener = trio.SSLListener(listener, ssl_context, https_compatible=True)
        listeners.append(listener)
        scheme = "https" if secure else "http"
        binds.append(f"{scheme}://{repr_socket_addr(sock.family, sock.getsockname())}")
    connections = Connections(limits.max_connections_per_address, limits.max_connections)

    async def handle(stream: Any) -> None:
        try:
            peer = _peer(stream)
        except OSError:  # gone already
            await trio.aclose_forcefully(stream)
            return
        with connections.admit(peer) as admitted:
            if admitted:
                await connection(stream).run()
            else:
                await trio.aclose_forcefully(stream)

    task_status.started(binds)
    try:
        async with trio.open_nursery(strict_exception_groups=True) as nursery:
            nursery.start_soon(raise_shutdown, shutdown_trigger)
            nursery.start_soon(
                partial(trio.serve_listeners, handle, listeners, handler_nursery=handlers)
            )
            await trio.sleep_forever()
    except BaseExceptionGroup as error:
        _, other = error.split(ShutdownError)
        if other is not None:
            raise other from None
