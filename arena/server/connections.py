"""A bot's stream as the server sees it, and the decision requests open on it.

Everything here lives on the server's asyncio loop thread (arena/server/service.py): the hub and
referees fill a connection's ``outbox``, and its stream writer starts writing each message as it
is queued, all on one thread, so nothing needs a lock and no message crosses a thread.
"""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from arena import serde
from arena._pb import arena_pb2 as pb
from arena.serde import Answer, Hello
from arena.server.faults import TokenBucket

if TYPE_CHECKING:
    from arena.server.referee import LiveMatch, SeatSlot
    from engine import Action

#: Closed request ids a connection remembers, to tell a late answer from an unknown one.
REMEMBERED_CLOSED = 256

M = TypeVar("M")

#: What the server sends on a stream: a message, or one already in wire bytes (serde.wire).
Outgoing = pb.ServerMessage | bytes


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


class Connection:
    """One bot stream (Arena.Play)."""

    def __init__(self, session_id: str, peer: str) -> None:
        #: Id for logs and the Welcome.
        self.session_id = session_id
        #: The client's address as gRPC reports it.
        self.peer = peer
        #: Messages for the bot; ``None`` ends the stream.
        self.outbox: Outbox[Outgoing] = Outbox()
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
        #: When the last flood strike was charged (loop clock).
        self.last_flood_strike = -math.inf
        #: Whether the stream is over (either side ended it).
        self.closed = False
        #: Matches a lobby has seated this connection in (checked against Hello.max_matches).
        self.seated = 0
        #: When the stream opened (the loop's clock).
        self.opened_at = 0.0
        #: Events (``serde.event_body``) held back for the next DecisionRequest (the bot set
        #: Hello.batch_events).
        self.held: list[bytes] = []

    @property
    def batch_events(self) -> bool:
        """Whether events ride inside the next DecisionRequest (Hello.batch_events)."""
        return self.hello is not None and self.hello.batch_events

    def send(self, msg: Outgoing) -> None:
        """Queue a message for the bot (dropped once the stream is closed). Held events go
        first, so the bot learns everything in the order it happened."""
        if not self.closed:
            if self.held:
                self.flush()
            self.outbox.put(msg)

    def send_event(self, body: bytes) -> None:
        """Send an Event (its body, ``serde.event_body``), or hold it for the next
        DecisionRequest."""
        if self.closed:
            return
        if self.batch_events:
            self.held.append(body)
        else:
            self.outbox.put(serde.event_bytes(body))

    def take_held(self) -> list[bytes]:
        """The held events, for a DecisionRequest to carry; none are held afterwards."""
        held, self.held = self.held, []
        return held

    def flush(self) -> None:
        """Send the held events as separate Event messages."""
        for body in self.take_held():
            self.outbox.put(serde.event_bytes(body))

    def close(self) -> None:
        """End the stream from the server side."""
        if not self.closed:
            self.closed = True
            self.held = []
            self.outbox.put(None)

    def forget(self, request_id: int) -> None:
        """Move a request from open to recently closed."""
        self.open.pop(request_id, None)
        self.closed_ids[request_id] = None
        if len(self.closed_ids) > REMEMBERED_CLOSED:
            self.closed_ids.popitem(last=False)

    def wake(self) -> None:
        """End the stream's writer, and with it the handler: the RPC is over."""
        self.outbox.put(None)


class PendingDecision:
    """A decision request sent and not yet settled.

    Settling it (an answer, an interruption, the deadline) hands it back to its match at once,
    which referees on from there: an answer is refereed inside the stream handler that read it,
    so the next request is ready before control returns to the loop (no task switch per
    decision). Interruptions come from outside the referee (the hub, the API) and are handed over
    on the loop's next turn instead, so the referee never runs inside one of its own callers.
    """

    __slots__ = (
        "asked_at",
        "conn",
        "done",
        "interrupted",
        "legal",
        "match",
        "outcome",
        "request_id",
        "seat",
        "stray",
    )

    def __init__(
        self,
        request_id: int,
        match: LiveMatch,
        seat: int,
        conn: Connection,
        legal: Sequence[Action],
    ) -> None:
        #: The id the bot must echo.
        self.request_id = request_id
        #: The match.
        self.match = match
        #: The deciding seat.
        self.seat = seat
        #: The connection asked (changes if the bot reconnects meanwhile).
        self.conn = conn
        #: The legal actions the request listed (an answer's index is into these).
        self.legal = legal
        #: When the request was sent (loop clock).
        self.asked_at = 0.0
        #: Whether it is settled (answered, interrupted or timed out).
        self.done = False
        #: The bot's answer, if it answered.
        self.outcome: Answer | None = None
        #: ``(fault kind, detail)`` or ``("forfeit", why)`` when something else settled it.
        self.interrupted: tuple[str, str] | None = None
        #: The id of the last answer its bot sent to no request of its while this one was open
        #: (so a timeout can say the bot did answer, with the wrong id).
        self.stray: int | None = None

    def resolve(self, answer: Answer) -> None:
        """The bot answered: the match referees on now."""
        if not self.done:
            self.done = True
            self.outcome = answer
            self.match.settled(self)

    def interrupt(self, kind: str, detail: str) -> None:
        """Settle without an answer: the bot went away, or the match must end."""
        if not self.done:
            self.done = True
            self.interrupted = (kind, detail)
            asyncio.get_running_loop().call_soon(self.match.settled, self)

    def expire(self) -> None:
        """The deadline passed with no answer (called by the match's timer)."""
        if not self.done:
            self.done = True
            self.match.settled(self)


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
