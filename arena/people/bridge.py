"""The bridge between people's pages and the arena: each person's seat held over the protocol
exactly as a bot holds one, and the pages served on loopback.

:class:`PeopleBridge` runs in a thread of its own, on one asyncio loop: a gRPC stream per
person's seat (the SDK's messages, codec and stubs; a ``Hello`` with the seat's token, then the
seat's messages into its :class:`~arena.people.desk.Desk`, the person's answers out) and
hypercorn serving :func:`~arena.people.page.people_app` on a socket bound by the caller. The
referee sees a connection like any bot's: a person who never answers (a closed tab) gets the
seat's timeouts and, under the policy, its forfeit; nothing here decides for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, cast

import grpc
import grpc.aio
from cardarena import codec, messages, rpc
from cardarena.client import CLIENT_OPTIONS, EOF
from hypercorn.asyncio import serve
from hypercorn.config import Config

from arena.people.desk import Desk
from arena.people.page import people_app

#: How long the pages are served after the match, while one is still listening (seconds): time
#: for it to receive the end; a page closes its feed once it has.
LINGER_S = 10.0
#: The name a person's seat gives in its Hello (the record's bot name).
PERSON = "person"


class PeopleBridge:
    """People's seats of one match: their streams and their pages, in a thread."""

    def __init__(
        self,
        desks: Sequence[Desk],
        tokens: Sequence[str],
        listener: socket.socket,
        hold: Callable[[Desk, str, str], Coroutine[Any, Any, None]] | None = None,
    ):
        #: What feeds each desk (``hold(desk, address, token)``): a seat's stream by default; a
        #: spectator's (``arena watch``) feeds its desk from the spectator service instead.
        self.hold = hold or hold_seat
        self.desks = tuple(desks)
        self.tokens = tuple(tokens)
        self.listener = listener
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self.error: BaseException | None = None

    def run(self, address: str) -> None:
        """Hold the seats at ``address`` and serve the pages until every seat's match ended and
        its page was told (or :meth:`stop`); blocks: run it in a thread."""
        try:
            asyncio.run(self._main(address))
        except BaseException as err:  # reported by the caller, in its own words
            self.error = err
        finally:
            self._ready.set()

    def stop(self) -> None:
        """End the run now (from any thread)."""
        self._ready.wait()
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop has just closed
                loop.call_soon_threadsafe(stop.set)

    async def _main(self, address: str) -> None:
        self._loop = asyncio.get_running_loop()
        stop = self._stop = asyncio.Event()
        self._ready.set()
        config = Config()
        # hypercorn closes what it serves on: a copy, so the caller's socket stays its own.
        config.bind = [f"fd://{os.dup(self.listener.fileno())}"]
        config.graceful_timeout = 0.5
        config.accesslog = None
        config.errorlog = None
        # Starlette is an ASGI app; hypercorn's annotation names its own scope types.
        app: Any = people_app(self.desks)
        http = asyncio.create_task(serve(app, config, shutdown_trigger=stop.wait))
        seats = [
            asyncio.create_task(self.hold(desk, address, token))
            for desk, token in zip(self.desks, self.tokens, strict=True)
        ]
        try:
            done: asyncio.Future[list[Any]] = asyncio.gather(*seats, return_exceptions=True)
            stopped = asyncio.create_task(stop.wait())
            waits: list[asyncio.Future[Any]] = [done, stopped]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if done.done():
                # A seat's own failure (a bug here, not the person's doing) is the run's error.
                failed = [r for r in done.result() if isinstance(r, Exception)]
                self.error = failed[0] if failed else None
            if not stop.is_set():
                await _linger(self.desks, stop)
        finally:
            stop.set()
            for task in seats:
                task.cancel()
            await asyncio.gather(*seats, return_exceptions=True)
            await http


async def _linger(desks: Sequence[Desk], stop: asyncio.Event) -> None:
    """Serve on while a page still listens, up to :data:`LINGER_S`: it receives the end."""
    loop = asyncio.get_running_loop()
    until = loop.time() + LINGER_S
    while any(d.listeners for d in desks) and loop.time() < until and not stop.is_set():
        await asyncio.sleep(0.05)


async def hold_seat(desk: Desk, address: str, token: str) -> None:
    """Play ``desk``'s seat over one gRPC stream: Hello with ``token``, every message the seat
    is sent into the desk, each answer the person gives out; returns at the match's end (or
    when the server ends or breaks the stream: the referee then plays the seat's fault rules)."""
    hello = messages.Hello(
        PERSON, "", token, messages.PROTOCOL_VERSION, omit_text=True, omit_json=True
    )
    async with grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS) as channel:
        play: Any = rpc.ArenaStub(channel).Play
        call: grpc.aio.StreamStreamCall[rpc.BotMessage, rpc.ServerMessage] = play()

        async def answer() -> None:
            while True:
                request_id, index = await desk.answers.get()
                await call.write(codec.answer_to_proto(request_id, index=index))

        writer = asyncio.create_task(answer())
        try:
            await call.write(codec.hello_to_proto(hello))
            while (raw := await call.read()) is not EOF:
                msg = codec.proto_to_plain(cast(rpc.ServerMessage, raw))
                try:
                    desk.take(msg)
                except Exception as err:
                    desk.publish(_error(f"the bridge failed: {type(err).__name__}: {err}"))
                    raise
                if isinstance(msg, messages.Rejected):
                    desk.publish(_error(msg.reason))
                    return
                if isinstance(msg, messages.MatchEnd):
                    return
        except grpc.RpcError as err:
            code = err.code() if isinstance(err, grpc.Call) else None
            desk.publish(_error(f"connection lost ({code})"))
        finally:
            writer.cancel()
            call.cancel()


def _error(message: str) -> dict[str, Any]:
    """A page message for the bridge's own trouble (not a fault the referee charged)."""
    return {"type": "error", "fault": "", "message": message, "code": ""}
