"""What a stream handler reads from: a queue of messages filled on the server's loop thread.

Bot streams (:mod:`arena.server.connections`) and spectators (:mod:`arena.server.board`) both
read from one; everything here lives on the server's asyncio loop thread.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from cardarena import rpc

M = TypeVar("M")

#: What the server sends on a stream: a message, or one already in wire bytes
#: (codec.proto_to_bytes).
Outgoing = rpc.ServerMessage | bytes


class Outbox(Generic[M]):
    """Messages for one coroutine on the loop (a bot's or a spectator's stream handler).

    :meth:`put` never blocks, so a slow reader never slows a match down; ``None`` ends the
    reader's stream. Loop thread only.
    """

    __slots__ = ("_waiter", "items", "listener")

    def __init__(self) -> None:
        #: The queued messages, oldest first.
        self.items: deque[M | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        #: Called on every :meth:`put` instead of waking a waiting reader: for a reader that
        #: is not a coroutine (a bot stream's writer, service.py).
        self.listener: Callable[[], None] | None = None

    def put(self, msg: M | None) -> None:
        """Queue ``msg``, waking the reader if it waits."""
        self.items.append(msg)
        if self.listener is not None:
            self.listener()
        else:
            self.notify()

    def notify(self) -> None:
        """Wake the reader if it waits."""
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self) -> None:
        """Until the next :meth:`put` or :meth:`notify`."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        try:
            await waiter
        finally:
            self._waiter = None

    async def get(self) -> M | None:
        """The next message."""
        items = self.items
        while not items:
            await self.wait()
        return items.popleft()
