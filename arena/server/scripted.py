"""A seat played again from a script: one bot, taken through what its seat was sent in a match.

``arena replay ask`` (arena/records/ask/) scripts a recorded match for the seat of the bot under
test: its MatchStart, the events its seat saw, each decision it was asked (observation and legal
actions) and, at the end, the events after its last decision and MatchEnd. :class:`ScriptedSeat`
plays that script through the :class:`~arena.server.hub.Hub` like any match's seat, so the bot
meets the same Hello, token, Welcome, reconnection and Ping handling as in a live match; what it
answers is reported, never refereed (the script goes on whatever it answers), and nothing runs
on a clock: the caller decides how long to wait.

Everything here lives on the server's loop thread, but :attr:`ScriptedSeat.results`, a
thread-safe queue, is read from the caller's (trio) thread.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cardarena import messages

from arena.policy import ERROR_CODE, FaultKind
from arena.protocol import codec
from arena.server.connections import Connection, PendingDecision, RequestBook, SeatSlot
from arena.server.spec import MatchSpec, SeatSpec
from engine import Action, Event, Observation


@dataclass(frozen=True, slots=True)
class ScriptedDecision:
    """One decision of the seat, and the events it saw since its previous one."""

    observation: Observation
    legal: tuple[Action, ...]
    #: The events since the seat's previous decision, the first numbered ``seq``.
    events: tuple[Event, ...]
    seq: int


@dataclass(frozen=True, slots=True)
class Script:
    """What the bot holding ``token`` is sent, from MatchStart to MatchEnd."""

    token: str
    #: The seat's MatchStart (its match id is the script's).
    start: messages.MatchStart
    seat: int
    seat_name: str
    decisions: tuple[ScriptedDecision, ...]
    #: The events after the last decision, the first numbered ``tail_seq``.
    tail: tuple[Event, ...]
    tail_seq: int
    end: messages.MatchEnd

    @property
    def match_id(self) -> str:
        return self.start.match_id


class ScriptedSeat:
    """A :class:`Script` played through the hub (a
    :class:`~arena.server.connections.MatchHandle` of one seat).

    :attr:`results` gets, in order: ``("answer", k, Answer, ms, bot)`` for the ``k``-th decision
    (``ms`` from its request to the answer; ``bot``: the Hello's name and version), then
    ``("done",)`` just before MatchEnd goes out; or ``("garbage", k, why)`` or ``("closed", k)``
    when the bot spoiled decision ``k`` or left before answering it. Then the script ends, and
    with it the bot's stream (``ended``: the hub's clean-up).
    """

    def __init__(
        self,
        script: Script,
        requests: RequestBook,
        ended: Callable[[ScriptedSeat], None],
    ) -> None:
        self.script = script
        self.spec = MatchSpec(script.match_id, script.start.game, (SeatSpec(script.token),))
        tc = script.start.time_control
        slot = SeatSlot(self, script.seat, script.seat_name, script.token, "", tc.bank_ms)
        self.slots = [slot]
        self.results: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._requests = requests
        self._ended = ended
        #: The decision asked now (or next), and its request while open.
        self._k = 0
        self._pending: PendingDecision | None = None
        self._asked_at = 0.0
        self._finished = False

    @property
    def match_id(self) -> str:
        return self.script.match_id

    @property
    def finished(self) -> bool:
        return self._finished

    # --- the hub's side --------------------------------------------------------------------

    def attach(self, conn: Connection, slots: list[SeatSlot]) -> None:
        """The bot said Hello with the token; a bot that comes back (a new stream) is sent the
        match again up to the open request, as a resumed seat in a live match is."""
        assert conn.hello is not None
        for slot in slots:
            slot.conn = conn
            slot.joined = True
            slot.hello_name, slot.hello_version = conn.hello.bot_name, conn.hello.bot_version
            if slot not in conn.slots:
                conn.slots.append(slot)
        conn.send(codec.plain_to_proto(self.script.start))
        for decision in self.script.decisions[: self._k + 1]:
            self._send_events(conn, decision.events, decision.seq)
        pending = self._pending
        if pending is None:
            self._ask(conn)
            return
        if pending.conn is not None:
            pending.conn.open.pop(pending.request_id, None)
        pending.conn = conn
        conn.open[pending.request_id] = pending
        conn.send(self._request(conn, pending.request_id))

    def detach(self, conn: Connection) -> None:
        """The bot's stream ended before the script did."""
        slot = self.slots[0]
        if slot.conn is conn:
            slot.conn = None
            self._finish(("closed", self._k))

    def charge(
        self,
        seat: int,
        kind: FaultKind,
        detail: str,
        request_id: int = 0,
        to: Connection | None = None,
        private: str | None = None,
    ) -> None:
        """Garbage ends the script (reported); anything else the bot is told, as in a match."""
        if kind is FaultKind.GARBAGE:
            self._finish(("garbage", self._k, detail))
            return
        conn = to or self.slots[0].conn
        if conn is not None:
            error = messages.ErrorInfo(
                ERROR_CODE[kind], private or detail, 0, self.match_id, request_id, kind, seat
            )
            conn.send(codec.plain_to_proto(error))

    # --- the script ------------------------------------------------------------------------

    def _send_events(self, conn: Connection, events: tuple[Event, ...], seq: int) -> None:
        for i, event in enumerate(events):
            conn.send_event(codec.event_to_body(self.match_id, seq + i, event))

    def _ask(self, conn: Connection) -> None:
        """Decision ``_k``: its request (its events went before it)."""
        decision = self.script.decisions[self._k]
        rid = self._requests.new_id()
        pending = PendingDecision(rid, self.slots[0], conn, decision.legal, self._settled)
        self._requests.open[rid] = pending
        conn.open[rid] = pending
        self._pending = pending
        conn.send(self._request(conn, rid))
        self._asked_at = time.perf_counter()

    def _request(self, conn: Connection, rid: int) -> bytes:
        decision = self.script.decisions[self._k]
        hello = conn.hello
        tc = self.script.start.time_control
        return codec.decision_to_bytes(
            rid,
            self.match_id,
            self.script.seat,
            self.script.start.game,
            decision.observation,
            decision.legal,
            tc.move_ms,
            tc.bank_ms,
            events=conn.take_held() if conn.held else (),
            text=hello is None or not hello.omit_text,
            json=hello is None or not hello.omit_json,
        )

    def _settled(self, pending: PendingDecision) -> None:
        """The bot answered decision ``_k`` (nothing else settles a scripted request)."""
        if pending is not self._pending or pending.outcome is None or self._finished:
            return
        ms = (time.perf_counter() - self._asked_at) * 1000.0
        self._close_request(pending)
        conn = pending.conn
        assert conn is not None and conn.hello is not None
        bot = f"{conn.hello.bot_name} {conn.hello.bot_version}"
        self.results.put(("answer", self._k, pending.outcome, ms, bot))
        self._k += 1
        if self._k < len(self.script.decisions):
            decision = self.script.decisions[self._k]
            self._send_events(conn, decision.events, decision.seq)
            self._ask(conn)
            return
        # Done before MatchEnd goes out: a bot may leave as soon as it has it.
        self.results.put(("done",))
        self._send_events(conn, self.script.tail, self.script.tail_seq)
        conn.send(codec.plain_to_proto(self.script.end))
        self._finish(None)

    def _close_request(self, pending: PendingDecision) -> None:
        self._pending = None
        self._requests.open.pop(pending.request_id, None)
        if pending.conn is not None:
            pending.conn.forget(pending.request_id)

    def _finish(self, why: tuple[Any, ...] | None) -> None:
        """The script is over (``why``: what cut it short, reported)."""
        if self._finished:
            return
        self._finished = True
        if self._pending is not None:
            self._pending.done = True
            self._close_request(self._pending)
        if why is not None:
            self.results.put(why)
        self._ended(self)
