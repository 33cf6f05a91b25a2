"""A TCP relay between a bot and the arena server whose connections a test cuts at once, as a
network failure or a server killed hard would: every socket is closed with SO_LINGER 0, so both
ends get a reset (RST) instead of an orderly end, and the listener closes so nothing reconnects.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

#: SO_LINGER on, zero seconds: close() resets the connection at once.
_RESET = struct.pack("ii", 1, 0)


class CutProxy:
    """Relays each connection made to :attr:`address` to the server; :meth:`cut` ends them."""

    def __init__(self, upstream: str, listener: trio.SocketListener) -> None:
        self.upstream = upstream
        self._listener = listener
        port = listener.socket.getsockname()[1]
        self.address = f"127.0.0.1:{port}"
        self._streams: list[trio.SocketStream] = []
        #: Set once :meth:`cut` has run.
        self.was_cut = trio.Event()

    def cut(self) -> None:
        """Reset every relayed connection, both sides, and stop accepting new ones."""
        self.was_cut.set()
        self._listener.socket.close()
        for stream in self._streams:
            stream.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
            stream.socket.close()  # trio wakes the pumps blocked on it: they end
        self._streams.clear()

    async def serve(self) -> None:
        async with trio.open_nursery() as nursery:
            while True:
                try:
                    client = await self._listener.accept()
                except (trio.ClosedResourceError, OSError):
                    return  # cut
                host, port = self.upstream.rsplit(":", 1)
                server = await trio.open_tcp_stream(host, int(port))
                if self.was_cut.is_set():
                    await client.aclose()
                    await server.aclose()
                    return
                self._streams += [client, server]
                nursery.start_soon(_pump, client, server)
                nursery.start_soon(_pump, server, client)


async def _pump(source: trio.SocketStream, sink: trio.SocketStream) -> None:
    """Bytes from ``source`` to ``sink`` until either ends (an orderly end is passed on)."""
    try:
        while data := await source.receive_some():
            await sink.send_all(data)
        await sink.send_eof()
    except (trio.ClosedResourceError, trio.BrokenResourceError, OSError):
        pass  # cut, or the other side went


@asynccontextmanager
async def open_cut_proxy(upstream: str) -> AsyncIterator[CutProxy]:
    """A :class:`CutProxy` to ``upstream`` (``host:port``), relaying until the block ends."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    proxy = CutProxy(upstream, listener)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(proxy.serve)
        try:
            yield proxy
        finally:
            nursery.cancel_scope.cancel()
            proxy.cut()
