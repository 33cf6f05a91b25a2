"""A bot's stream as the trio side sees it, and the decision requests open on it.

The gRPC handler (a coroutine on the server's asyncio loop thread, arena/server/service.py)
creates a :class:`Connection` and then only ever reads its ``outbox``; everything else about it is
touched on the trio thread alone, so it needs no lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Generic, TypeVar

import trio

from arena._pb import arena_pb2 as pb
from arena.serde import Answer, Hello
from arena.server.faults import TokenBucket

if TYPE_CHECKING:
    from arena.server.referee import LiveMatch, SeatSlot

#: Closed request ids a connection remembers, to tell a late answer from an unknown one.
REMEMBERED_CLOSED = 256

M = TypeVar("M")


class Outbox(Generic[M]):
    """Messages from the trio thread to one coroutine on the gRPC asyncio loop.

    :meth:`put` never blocks and wakes the loop (``call_soon_threadsafe``, the only cross-thread
    step) only when the reader is actually waiting, so a burst of messages (a decision's events
    and its request) costs one wake-up. ``None`` ends the reader's stream. Relies on
    ``deque.append``/``popleft`` and attribute stores being atomic under the GIL.
    """

    __slots__ = ("_items", "_loop", "_waiting", "_wake")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._items: deque[M | None] = deque()
        self._loop = loop
        self._wake: asyncio.Event | None = None
        self._waiting = False

    def put(self, msg: M | None) -> None:
        """Queue ``msg`` (any thread)."""
        self._items.append(msg)
        if self._waiting and self._loop is not None and self._wake is not None:
            self._waiting = False
            with contextlib.suppress(RuntimeError):  # a closed loop: the server is gone
                self._loop.call_soon_threadsafe(self._wake.set)

    async def get(self) -> M | None:
        """The next message (on the loop only)."""
        items = self._items
        if not items:
            if self._wake is None:
                self._wake = asyncio.Event()
            while not items:
                self._wake.clear()
                self._waiting = True
                if items:  # appended before the flag was seen
                    break
                await self._wake.wait()
            self._waiting = False
        return items.popleft()

    def drain(self) -> list[M | None]:
        """Everything queued now, without waiting (on the loop only)."""
        items = self._items
        out = []
        while items:
            out.append(items.popleft())
        return out


class Connection:
    """One bot stream (Arena.Play)."""

    def __init__(
        self, session_id: str, peer: str, loop: asyncio.AbstractEventLoop | None = None
    ) -> None:
        #: Id for logs and the Welcome.
        self.session_id = session_id
        #: The client's address as gRPC reports it.
        self.peer = peer
        #: Messages for the bot; ``None`` ends the stream. Filled by trio, drained by the
        #: handler coroutine on ``loop`` (the gRPC asyncio loop).
        self.outbox: Outbox[pb.ServerMessage] = Outbox(loop)
        #: The bot's Hello once accepted.
        self.hello: Hello | None = None
        #: The token it authenticated with.
        self.token: str | None = None
        #: The seats it plays now, across matches.
        self.slots: list[SeatSlot] = []
        #: Decision requests waiting for this connection's answer, by request id.
        self.open: dict[int, PendingDecision] = {}
        #: Recently closed request ids (answered, timed out, interrupted).
        self.closed_ids: OrderedDict[int, None] = OrderedDict()
        #: Rate limiter for unsolicited messages.
        self.bucket = TokenBucket()
        #: Messages dropped for flooding.
        self.flood_dropped = 0
        #: When the last flood strike was charged (trio clock).
        self.last_flood_strike = -math.inf
        #: Whether the stream is over (either side ended it).
        self.closed = False
        #: Matches a lobby has seated this connection in (checked against Hello.max_matches).
        self.seated = 0

    def send(self, msg: pb.ServerMessage) -> None:
        """Queue a message for the bot (dropped once the stream is closed)."""
        if not self.closed:
            self.outbox.put(msg)

    def close(self) -> None:
        """End the stream from the server side."""
        if not self.closed:
            self.closed = True
            self.outbox.put(None)

    def forget(self, request_id: int) -> None:
        """Move a request from open to recently closed."""
        self.open.pop(request_id, None)
        self.closed_ids[request_id] = None
        if len(self.closed_ids) > REMEMBERED_CLOSED:
            self.closed_ids.popitem(last=False)

    def wake(self) -> None:
        """Unblock the handler coroutine (thread-safe): the RPC is over."""
        self.outbox.put(None)


class PendingDecision:
    """A decision request sent and not yet settled."""

    __slots__ = (
        "conn",
        "event",
        "interrupted",
        "match",
        "message",
        "outcome",
        "request_id",
        "seat",
    )

    def __init__(
        self,
        request_id: int,
        match: LiveMatch,
        seat: int,
        conn: Connection,
        message: pb.ServerMessage,
    ) -> None:
        #: The id the bot must echo.
        self.request_id = request_id
        #: The match.
        self.match = match
        #: The deciding seat.
        self.seat = seat
        #: The connection asked (changes if the bot reconnects meanwhile).
        self.conn = conn
        #: The request as sent (re-sent on reconnection).
        self.message = message
        #: Set once settled.
        self.event = trio.Event()
        #: The bot's answer, if it answered.
        self.outcome: Answer | None = None
        #: ``(fault kind, detail)`` or ``("forfeit", why)`` when something else settled it.
        self.interrupted: tuple[str, str] | None = None

    def resolve(self, answer: Answer) -> None:
        """The bot answered."""
        if not self.event.is_set():
            self.outcome = answer
            self.event.set()

    def interrupt(self, kind: str, detail: str) -> None:
        """Settle without an answer: the bot went away, or the match must end."""
        if not self.event.is_set():
            self.interrupted = (kind, detail)
            self.event.set()


class RequestBook:
    """Every open request of the server, by id: ids are unique server-wide, so an answer to
    another connection's request is recognised as such (a ``wrong_seat`` fault)."""

    def __init__(self) -> None:
        self._next = 1
        #: Open requests by id.
        self.open: dict[int, PendingDecision] = {}

    def new_id(self) -> int:
        """A fresh request id."""
        rid = self._next
        self._next += 1
        return rid
