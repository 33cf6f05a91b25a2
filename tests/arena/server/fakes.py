"""Fakes for refereeing a match in milliseconds: a virtual clock and scripted bots.

:class:`VirtualClockLoop` is an asyncio event loop whose clock is virtual and auto-jumps (as
trio's ``MockClock(autojump_threshold=0)``): whenever the loop has nothing ready to run and would
wait in its selector for the next timer, the clock jumps to that timer instead of sleeping. A
match with a time control of seconds per move therefore runs in milliseconds of real time, and
every duration the referee measures is exactly what the script said (no scheduling jitter).

:class:`FakeBot` is a scripted bot on a scripted transport (after python-chess's
``MockTransport``): a :class:`FakeStream` is what the gRPC servicer
(:class:`~arena.server.service.ArenaService`) reads a bot's messages from and writes the
server's to, so the real servicer, hub and referee run, with no gRPC under them
(:class:`FakeServer`). The bot says Hello, reads what the server writes (decoded with the
SDK's codec, as a bot would) and answers each DecisionRequest as its script says: an index,
late by some virtual ms, never, an illegal index, garbage, a text, or by ending its stream.

Virtual time only moves while the loop waits, so code that runs between two waits takes no
time at all; durations are exact when the scripted delays are exact binary fractions of a
second (multiples of 125 ms, say), since the clock is a float.
"""

from __future__ import annotations

import asyncio
import itertools
import selectors
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from cardarena import codec as bot_codec
from cardarena.messages import (
    Answer,
    Decision,
    ErrorInfo,
    EventInfo,
    Hello,
    MatchEnd,
    MatchStart,
    ServerMessage,
)

from arena.protocol import codec
from arena.server.connections import Connection
from arena.server.hub import Hub
from arena.server.outbox import Outgoing
from arena.server.referee import LiveMatch
from arena.server.service import EOF, ArenaService
from arena.server.spec import MatchOutcome, MatchSpec

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

T = TypeVar("T")


# --- the virtual clock ------------------------------------------------------------------------


class VirtualClockDeadlock(RuntimeError):
    """The loop has nothing scheduled and nothing to read: it would wait forever."""


class VirtualClockOverrun(RuntimeError):
    """The loop ran longer in real time than its budget: something waits on a real clock, or
    spins (a test on the virtual clock takes milliseconds)."""


class _AutoJumpSelector(selectors.BaseSelector):
    """A selector that never sleeps: it polls, and when nothing is ready, jumps the loop's
    virtual clock by the timeout the loop asked to wait (to its next timer) instead."""

    def __init__(
        self, advance: Callable[[float], None], idle_real_s: float, real_budget_s: float | None
    ) -> None:
        self._inner = selectors.DefaultSelector()
        self._advance = advance
        self._idle_real_s = idle_real_s
        self._real_deadline = None if real_budget_s is None else time.monotonic() + real_budget_s
        self._real_budget_s = real_budget_s

    def register(
        self, fileobj: FileDescriptorLike, events: int, data: Any = None
    ) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: FileDescriptorLike) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def modify(
        self, fileobj: FileDescriptorLike, events: int, data: Any = None
    ) -> selectors.SelectorKey:
        return self._inner.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if self._real_deadline is not None and time.monotonic() > self._real_deadline:
            self._real_deadline = None  # once: the loop's clean-up must still run
            raise VirtualClockOverrun(
                f"the event loop ran for more than {self._real_budget_s} s of real time"
            )
        ready = self._inner.select(0)
        if ready:
            return ready
        if timeout is None:
            # No timer at all: only another thread (call_soon_threadsafe) could wake the loop.
            # Give it a moment of real time, then call it what it is.
            ready = self._inner.select(self._idle_real_s)
            if not ready:
                raise VirtualClockDeadlock(
                    "the event loop has no timer and nothing to read: it would wait forever"
                )
            return ready
        if timeout > 0:
            self._advance(timeout)
        return []

    def get_map(self) -> Mapping[FileDescriptorLike, selectors.SelectorKey]:
        return self._inner.get_map()

    def close(self) -> None:
        self._inner.close()


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop on a virtual clock that auto-jumps to the next timer when idle.

    ``loop.time()`` starts at ``start`` and moves only while the loop would otherwise wait:
    ``call_later``, ``call_at``, ``asyncio.sleep``, ``wait_for`` and the referee's deadlines all
    fire in order, at exactly their virtual times, without any real waiting. For single-threaded
    tests: the clock does not wait for other threads, except when no timer is left at all
    (then it waits ``idle_real_s`` of real time and raises :class:`VirtualClockDeadlock`). Past
    ``real_budget_s`` seconds of real time (``None``: no limit) it raises
    :class:`VirtualClockOverrun` rather than hang a test suite.
    """

    def __init__(
        self, start: float = 0.0, idle_real_s: float = 0.25, real_budget_s: float | None = None
    ) -> None:
        self._virtual_now = start
        #: How many times the clock jumped, and by how much in all (seconds).
        self.jumps = 0
        self.jumped_s = 0.0
        super().__init__(_AutoJumpSelector(self.advance, idle_real_s, real_budget_s))

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        """Move the virtual clock ``seconds`` on (the loop does it itself when idle)."""
        if seconds < 0:
            raise ValueError("time does not go backwards")
        self._virtual_now += seconds
        self.jumps += 1
        self.jumped_s += seconds


def run_virtual(
    main: Coroutine[Any, Any, T],
    *,
    start: float = 0.0,
    idle_real_s: float = 0.25,
    real_budget_s: float | None = 10.0,
) -> T:
    """Run ``main`` to completion on a fresh :class:`VirtualClockLoop` (then close it, as
    ``asyncio.run`` does)."""

    def new_loop() -> VirtualClockLoop:
        return VirtualClockLoop(start, idle_real_s, real_budget_s)

    with asyncio.Runner(loop_factory=new_loop) as runner:
        return runner.run(main)


# --- scripted bots ----------------------------------------------------------------------------


class Do(Enum):
    """What a :class:`Move` does."""

    INDEX = "index"
    TEXT = "text"
    ILLEGAL = "illegal"
    GARBAGE = "garbage"
    SILENT = "silent"
    DISCONNECT = "disconnect"


@dataclass(frozen=True, slots=True)
class Move:
    """A scripted reaction to one DecisionRequest, ``after_ms`` virtual ms after it arrived."""

    #: What to do.
    do: Do
    #: Virtual milliseconds between the request's arrival and the reaction.
    after_ms: float = 0.0
    #: For :attr:`Do.INDEX`: the index answered (past the end: an illegal answer); negative
    #: counts from the end of the legal list (resolved before sending: the wire's index is
    #: unsigned).
    index: int = 0
    #: For :attr:`Do.TEXT`: the action text answered.
    text: str = ""
    #: Added to the request id answered (non-zero: an answer to a request never sent).
    request_id_offset: int = 0


def answer(index: int = 0, after_ms: float = 0.0) -> Move:
    """Answer legal action ``index`` (``-1``: the last) after ``after_ms``."""
    return Move(Do.INDEX, after_ms, index=index)


def late(after_ms: float, index: int = 0) -> Move:
    """Answer legal action ``index``, ``after_ms`` virtual ms after the request."""
    return Move(Do.INDEX, after_ms, index=index)


def answer_text(text: str, after_ms: float = 0.0) -> Move:
    """Answer with an action's text form (legal or not)."""
    return Move(Do.TEXT, after_ms, text=text)


def illegal(after_ms: float = 0.0) -> Move:
    """Answer an index one past the last legal action."""
    return Move(Do.ILLEGAL, after_ms)


def garbage(after_ms: float = 0.0) -> Move:
    """Answer an Action with neither index nor text."""
    return Move(Do.GARBAGE, after_ms)


def wrong_id(offset: int, after_ms: float = 0.0) -> Move:
    """Answer legal action 0 of the request ``offset`` past the one asked (never sent)."""
    return Move(Do.INDEX, after_ms, request_id_offset=offset)


def silent() -> Move:
    """Never answer."""
    return Move(Do.SILENT)


def disconnect(after_ms: float = 0.0) -> Move:
    """End the stream instead of answering."""
    return Move(Do.DISCONNECT, after_ms)


#: A bot's script: one move per decision it is asked (then its default), or a function of the
#: request and how many requests came before it.
Script = Sequence[Move] | Callable[[Decision, int], Move]


@dataclass(frozen=True, slots=True)
class Received:
    """A message the bot received, with the virtual time it was queued."""

    #: Loop time (seconds).
    at: float
    #: The decoded message.
    message: ServerMessage


@dataclass(frozen=True, slots=True)
class Sent:
    """An answer the bot sent."""

    #: Loop time (seconds).
    at: float
    #: The answer as the server read it.
    answer: Answer
    #: Whether a request was open for it (``False``: too late, or never asked).
    open: bool


class StreamAborted(Exception):
    """The servicer aborted the call (``context.abort``): its status code and details."""


class FakeStream:
    """The transport under one bot stream: what :meth:`ArenaService.Play` reads and writes (the
    part of ``grpc.aio.ServicerContext`` it uses), with no gRPC. The bot's messages go in as
    wire bytes, oldest first, then ``EOF`` when the bot ends the stream; what the servicer
    writes goes to the bot at once, as a gRPC write starts."""

    def __init__(self, bot: FakeBot, peer: str) -> None:
        self._bot = bot
        self._peer = peer
        #: Wire bytes and the answer they carry (``None``: a Hello), or ``EOF``.
        self._inbox: asyncio.Queue[tuple[bytes, Answer | None] | object] = asyncio.Queue()

    def peer(self) -> str:
        return self._peer

    async def read(self) -> object:
        item = await self._inbox.get()
        if isinstance(item, tuple):
            data, sent = item
            if sent is not None:
                # The servicer hands it to the hub before its next await: whether a request is
                # open for it now is whether the hub finds one.
                self._bot.sending(sent)
            return data
        return item

    async def write(self, msg: Outgoing) -> None:
        self._bot.receive(msg)

    async def abort(self, code: object, details: str) -> NoReturn:
        raise StreamAborted(code, details)

    def put(self, data: bytes, answer: Answer | None = None) -> None:
        """Send ``data`` to the server (read after what was sent before)."""
        self._inbox.put_nowait((data, answer))

    def end(self) -> None:
        """End the stream from the bot's side."""
        self._inbox.put_nowait(EOF)


class FakeServer:
    """The real :class:`~arena.server.hub.Hub` behind the real
    :class:`~arena.server.service.ArenaService`, on the running loop, with no gRPC under them."""

    def __init__(self) -> None:
        self.hub = Hub(asyncio.get_running_loop())
        self.service = ArenaService(self.hub)

    def connection(self, peer: str) -> Connection | None:
        """The server's connection for the open stream from ``peer``."""
        # The servicer keeps its streams to itself; a test reads them to see what the hub did.
        streams = self.service._streams
        return next((c for c in streams if c.peer == peer), None)

    async def play(self, spec: MatchSpec, bots: Sequence[FakeBot | None]) -> Played:
        """Register ``spec``, connect each bot, and referee the match through the hub."""
        loop = asyncio.get_running_loop()
        match = self.hub.register(spec)
        for bot in bots:
            if bot is not None:
                bot.connect(self)
        start = loop.time()
        outcome = await self.hub.run_match(spec)
        return Played(match, outcome, list(bots), loop.time() - start, started_at=start)


_peers = itertools.count(1)


class FakeBot:
    """A scripted bot on a :class:`FakeStream`: the real servicer and hub read it.

    :meth:`connect` opens its stream and says Hello. What the server writes is decoded the
    moment it is written, and each answer is encoded to wire bytes and scheduled on the loop
    (``call_later``), so the virtual clock decides when it arrives.
    """

    def __init__(
        self,
        name: str,
        script: Script = (),
        *,
        default: Move | None = None,
        token: str = "",
        batch_events: bool = False,
    ) -> None:
        self.name = name
        self.script = script
        #: The move for requests past the end of a sequence script.
        self.default = default if default is not None else answer()
        self.hello = Hello(bot_name=name, token=token or f"token-{name}", batch_events=batch_events)
        #: The token the bot says Hello with.
        self.token = self.hello.token
        #: Everything received, in order.
        self.received: list[Received] = []
        #: Every answer sent, in order.
        self.sent: list[Sent] = []
        #: Whether the stream ended (the server closed it, or the bot disconnected).
        self.stream_ended = False
        #: Whether the bot ended it itself.
        self.disconnected = False
        #: Errors raised while decoding or scripting: the match must not see them (run_match
        #: raises the first after the match).
        self.problems: list[BaseException] = []
        self._asked = 0
        self._server: FakeServer | None = None
        self._stream: FakeStream | None = None

    # --- the stream -------------------------------------------------------------------------

    def connect(self, server: FakeServer) -> None:
        """Open a stream to ``server``'s servicer (as a bot dials it) and say Hello."""
        stream = FakeStream(self, f"fake:{self.name}:{next(_peers)}")
        self._server, self._stream = server, stream
        stream.put(bot_codec.hello_to_proto(self.hello).SerializeToString())
        call = asyncio.ensure_future(server.service.Play(_no_requests(), stream))  # type: ignore[arg-type]
        call.add_done_callback(self._call_ended)

    @property
    def conn(self) -> Connection:
        """The server's connection for this bot's stream (while it is open)."""
        assert self._server is not None and self._stream is not None, f"{self.name} never connected"
        conn = self._server.connection(self._stream.peer())
        assert conn is not None, f"{self.name}'s stream is not open"
        return conn

    def disconnect(self) -> None:
        """End the stream from the bot's side, as a bot that goes away does."""
        self.disconnected = True
        if self._stream is not None:
            self._stream.end()

    def deliver(self, message: Answer) -> None:
        """Hand an answer to the hub as the servicer does once it has read one from the wire:
        for answers no wire carries (a negative index)."""
        assert self._server is not None
        self.sending(message)
        hub = self._server.hub
        hub.dispatch(hub.on_message, self.conn, message)

    def _call_ended(self, call: asyncio.Future[None]) -> None:
        self.stream_ended = True
        if not call.cancelled() and call.exception() is not None:
            self.problems.append(call.exception())  # type: ignore[arg-type]

    # --- inspection -------------------------------------------------------------------------

    def of_type(self, kind: type[T]) -> list[T]:
        """The received messages of one type."""
        return [r.message for r in self.received if isinstance(r.message, kind)]

    @property
    def decisions(self) -> list[Decision]:
        """The DecisionRequests received."""
        return self.of_type(Decision)

    @property
    def errors(self) -> list[ErrorInfo]:
        """The Errors received."""
        return self.of_type(ErrorInfo)

    @property
    def events(self) -> list[EventInfo]:
        """The Events received."""
        return self.of_type(EventInfo)

    @property
    def starts(self) -> list[MatchStart]:
        """The MatchStarts received."""
        return self.of_type(MatchStart)

    @property
    def match_end(self) -> MatchEnd | None:
        """The MatchEnd, once received."""
        ends = self.of_type(MatchEnd)
        return ends[-1] if ends else None

    @property
    def strays(self) -> list[Sent]:
        """Answers that found no open request (the hub warned or charged them)."""
        return [s for s in self.sent if not s.open]

    # --- what the stream calls --------------------------------------------------------------

    def receive(self, msg: Outgoing) -> None:
        """What the server wrote: decoded and recorded; a DecisionRequest gets its move."""
        try:
            self._receive(msg)
        except Exception as err:  # never into the server, which is the caller
            self.problems.append(err)

    def sending(self, message: Answer) -> None:
        """An answer reaches the hub now: recorded, with whether a request is open for it."""
        conn = (
            self._server.connection(self._stream.peer()) if self._server and self._stream else None
        )
        is_open = conn is not None and message.request_id in conn.open
        self.sent.append(Sent(asyncio.get_running_loop().time(), message, is_open))

    def _receive(self, msg: Outgoing) -> None:
        loop = asyncio.get_running_loop()
        pb_msg = codec.bytes_to_proto(msg) if isinstance(msg, bytes) else msg
        decoded = bot_codec.proto_to_plain(pb_msg)
        if decoded is None:
            raise AssertionError(f"{self.name} received a message of unknown kind: {pb_msg}")
        self.received.append(Received(loop.time(), decoded))
        if isinstance(decoded, Decision):
            move = self._move(decoded)
            if move.do is not Do.SILENT:
                loop.call_later(move.after_ms / 1000.0, self._react, decoded, move)

    def _move(self, decision: Decision) -> Move:
        n = self._asked
        self._asked += 1
        script = self.script
        if callable(script):
            return script(decision, n)
        return script[n] if n < len(script) else self.default

    def _react(self, decision: Decision, move: Move) -> None:
        if self.stream_ended or self.disconnected or self._stream is None:
            return
        try:
            if move.do is Do.DISCONNECT:
                self.disconnect()
                return
            rid = decision.request_id + move.request_id_offset
            legal = len(decision.legal)
            if move.do is Do.INDEX:
                index = move.index if move.index >= 0 else max(0, legal + move.index)
                wire = bot_codec.answer_to_proto(rid, index=index)
            elif move.do is Do.ILLEGAL:
                wire = bot_codec.answer_to_proto(rid, index=legal)
            elif move.do is Do.TEXT:
                wire = bot_codec.answer_to_proto(rid, text=move.text)
            else:
                wire = bot_codec.answer_to_proto(rid)
            data = wire.SerializeToString()
            sent = codec.bot_bytes_to_plain(data)
            assert isinstance(sent, Answer)
        except Exception as err:
            self.problems.append(err)
            return
        self._stream.put(data, sent)


async def _no_requests() -> AsyncIterator[bytes]:
    """The request iterator Play is given and never reads (it reads ``context.read()``)."""
    return
    yield


# --- a match on the virtual clock ---------------------------------------------------------


@dataclass(slots=True)
class Played:
    """A match refereed on the virtual clock."""

    #: The referee (its slots keep their final banks and strikes).
    match: LiveMatch
    #: What the match produced.
    outcome: MatchOutcome
    #: The bots, by seat (``None`` for a seat nobody played).
    bots: list[FakeBot | None]
    #: Virtual seconds from the call to the outcome.
    virtual_s: float
    #: Real seconds it took.
    real_s: float = 0.0
    #: Loop time the match began at.
    started_at: float = 0.0

    def bot(self, seat: int) -> FakeBot:
        """The bot of ``seat``."""
        bot = self.bots[seat]
        assert bot is not None, f"seat {seat} has no bot"
        return bot


async def referee(spec: MatchSpec, bots: Sequence[FakeBot | None]) -> Played:
    """Seat ``bots[i]`` at seat ``i`` (``None``: leave it empty; each bot says Hello with its
    seat's token) and referee the match through a :class:`FakeServer`."""
    return await FakeServer().play(spec, bots)


def run_match(spec: MatchSpec, bots: Sequence[FakeBot | None]) -> Played:
    """:func:`referee` on a fresh virtual clock; raises what went wrong inside a bot."""
    began = time.perf_counter()
    played = run_virtual(referee(spec, bots))
    played.real_s = time.perf_counter() - began
    for bot in bots:
        if bot is not None and bot.problems:
            raise bot.problems[0]
    return played
