"""A bot's stream as the server sees it, and the decision requests open on it.

Everything here lives on the server's asyncio loop thread (arena/server/service.py): the hub and
referees fill a connection's ``outbox``, and its stream writer starts writing each message as it
is queued, all on one thread, so nothing needs a lock and no message crosses a thread.
"""

from __future__ import annotations

import asyncio
import math
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from cardarena.messages import Answer, Hello, PlayerInfo

from arena.policy import FaultKind
from arena.protocol import codec
from arena.server.flood import TokenBucket
from arena.server.outbox import Outbox, Outgoing
from arena.server.spec import MatchSpec
from engine import Action

#: Closed request ids a connection remembers, to tell a late answer from an unknown one.
REMEMBERED_CLOSED = 256
#: Bits of a request id (random, see :class:`RequestBook`).
ID_BITS = 53


class MatchHandle(Protocol):
    """What a connection and the hub need of a match a connection plays in (the referee's
    :class:`~arena.server.referee.LiveMatch`): declared here so that this module need not
    import the referee, which imports it."""

    @property
    def spec(self) -> MatchSpec:
        """The match's spec."""
        ...

    @property
    def match_id(self) -> str:
        """The match's id."""
        ...

    @property
    def finished(self) -> bool:
        """Whether the match has ended."""
        ...

    def attach(self, conn: Connection, slots: list[SeatSlot]) -> None:
        """``conn`` now plays ``slots``."""
        ...

    def detach(self, conn: Connection) -> None:
        """``conn`` is gone."""
        ...

    def charge(
        self,
        seat: int,
        kind: FaultKind,
        detail: str,
        request_id: int = 0,
        to: Connection | None = None,
        private: str | None = None,
    ) -> None:
        """Charge a fault to ``seat``."""
        ...


@dataclass(eq=False, slots=True)
class SeatSlot:
    """One seat of a live match and the bot behind it."""

    #: The match.
    match: MatchHandle
    #: Seat number.
    seat: int
    #: The seat's name in the game.
    seat_name: str
    #: The token the seat's bot authenticates with.
    token: str
    #: Name from the spec (``""``: use the Hello's).
    spec_name: str
    #: Milliseconds left in the seat's bank.
    bank_ms: float
    #: The seat's connection, when its bot is connected.
    conn: Connection | None = None
    #: The bot's name from its Hello.
    hello_name: str = ""
    #: The bot's version from its Hello.
    hello_version: str = ""
    #: Strikes charged in this match.
    strikes: int = 0
    #: Set when the bot's process is known to be gone: why.
    crashed: str | None = None
    #: Whether a bot has played the seat in this match: only such a seat, once its bot is away,
    #: gets a grace to come back (one that never came is not waited for again).
    joined: bool = False

    @property
    def bot_name(self) -> str:
        """The name shown for the seat."""
        return self.spec_name or self.hello_name or f"seat{self.seat}"

    def player(self) -> PlayerInfo:
        """The seat as the protocol shows it."""
        return PlayerInfo(self.seat, self.seat_name, self.bot_name, self.hello_version)


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
        #: Events (``codec.event_to_body``) held back for the next DecisionRequest (the bot set
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
        """Send an Event (its body, ``codec.event_to_body``), or hold it for the next
        DecisionRequest."""
        if self.closed:
            return
        if self.batch_events:
            self.held.append(body)
        else:
            self.outbox.put(codec.event_body_to_bytes(body))

    def take_held(self) -> list[bytes]:
        """The held events, for a DecisionRequest to carry; none are held afterwards."""
        held, self.held = self.held, []
        return held

    def flush(self) -> None:
        """Send the held events as separate Event messages."""
        for body in self.take_held():
            self.outbox.put(codec.event_body_to_bytes(body))

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
        "deadline",
        "done",
        "interrupted",
        "legal",
        "lost_at",
        "outcome",
        "request_id",
        "settle",
        "slot",
        "stray",
    )

    def __init__(
        self,
        request_id: int,
        slot: SeatSlot,
        conn: Connection | None,
        legal: Sequence[Action],
        settle: Callable[[PendingDecision], None],
    ) -> None:
        #: The id the bot must echo.
        self.request_id = request_id
        #: The deciding seat.
        self.slot = slot
        #: Called once, when the decision is settled: the match referees on from there.
        self.settle = settle
        #: The connection asked (changes if the bot reconnects meanwhile); ``None`` while the
        #: seat's bot is away (the request is sent when it comes back).
        self.conn = conn
        #: The legal actions the request listed (an answer's index is into these).
        self.legal = legal
        #: When the request was sent (loop clock).
        self.asked_at = 0.0
        #: When its clock runs out (loop clock): move time plus the seat's bank.
        self.deadline = 0.0
        #: When the seat's bot was found gone while it decides (loop clock), until it is back.
        self.lost_at: float | None = None
        #: Whether it is settled (answered, interrupted or timed out).
        self.done = False
        #: The bot's answer, if it answered.
        self.outcome: Answer | None = None
        #: ``(fault kind, detail)``, or ``(None, why)`` for a forfeit, when something else
        #: settled it.
        self.interrupted: tuple[FaultKind | None, str] | None = None
        #: The id of the last answer its bot sent to no request of its while this one was open
        #: (so a timeout can say the bot did answer, with the wrong id).
        self.stray: int | None = None

    def resolve(self, answer: Answer) -> None:
        """The bot answered: the match referees on now."""
        if not self.done:
            self.done = True
            self.outcome = answer
            self.settle(self)

    @property
    def seat(self) -> int:
        """The deciding seat's number."""
        return self.slot.seat

    @property
    def match(self) -> MatchHandle:
        """The match deciding."""
        return self.slot.match

    def interrupt(self, kind: FaultKind | None, detail: str) -> None:
        """Settle without an answer: the bot went away (the fault to charge), or the match must
        end (``None``: a forfeit, with why)."""
        if not self.done:
            self.done = True
            self.interrupted = (kind, detail)
            asyncio.get_running_loop().call_soon(self.settle, self)

    def expire(self) -> None:
        """The deadline passed with no answer (called by the match's timer)."""
        if not self.done:
            self.done = True
            self.settle(self)


class RequestBook:
    """Every open request of the server, by id: ids are unique server-wide, so an answer to
    another connection's request is recognised as such (a ``wrong_seat`` fault).

    Ids are random, not counted: a counter shared by every match would tell a seat, by the gap
    between its own ids, how many decisions others were asked meanwhile (in spoil five, that a
    seat was asked whether to rob). They stay below 2**53 so that a bot whose JSON numbers are
    doubles reads them exactly.
    """

    def __init__(self) -> None:
        #: Open requests by id.
        self.open: dict[int, PendingDecision] = {}

    def new_id(self) -> int:
        """A fresh request id, never 0 (proto3's "unset") nor one still open."""
        while True:
            rid = secrets.randbits(ID_BITS)
            if rid and rid not in self.open:
                return rid
