"""Test helpers: a real arena server on loopback and scripted raw gRPC bots in threads.

A raw bot speaks the protocol message by message (so tests can send garbage, stay silent, or
answer someone else's request); :func:`run_scenario` runs one match with one behaviour per seat
and returns the outcome with every bot's transcript.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import trio
from cardarena._pb import arena_pb2 as pb
from cardarena._pb import arena_pb2_grpc as pb_grpc
from cardarena.messages import TimeControl

from arena.policy import FaultPolicy
from arena.server import (
    ArenaServer,
    MatchOutcome,
    MatchSpec,
    SeatSpec,
    new_token,
    open_arena_server,
)
from engine import OptionValue

#: Short whist: one game of one point, so one deal (52 decisions).
SHORT_WHIST: dict[str, OptionValue] = {"points_to_win": 1, "games_per_rubber": 1}


class RawBot:
    """One Arena.Play stream driven by hand."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self._outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        self._inbox: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
        #: Everything received, in order.
        self.received: list[pb.ServerMessage] = []
        #: Whether the server ended the stream (or it broke).
        self.ended = threading.Event()
        self.status: grpc.StatusCode | None = None
        self._call = pb_grpc.ArenaStub(self.channel).Play(self._requests())
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _requests(self) -> Iterator[pb.BotMessage]:
        while (msg := self._outbox.get()) is not None:
            yield msg

    def _read(self) -> None:
        try:
            for msg in self._call:
                self.received.append(msg)
                self._inbox.put(msg)
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as err:
            self.status = err.code() if isinstance(err, grpc.Call) else None
        finally:
            self.ended.set()
            self._inbox.put(None)

    def send(self, msg: pb.BotMessage) -> None:
        """Send one message."""
        self._outbox.put(msg)

    def hello(self, token: str, name: str = "raw", version: int = 1, *, lean: bool = False) -> None:
        """Send Hello; ``lean`` sets batch_events, omit_text and omit_json."""
        hello = pb.Hello(bot_name=name, bot_version="t", token=token, protocol_version=version)
        if lean:
            hello.batch_events = hello.omit_text = hello.omit_json = True
        self.send(pb.BotMessage(hello=hello))

    def answer(self, request_id: int, index: int | None = None, text: str | None = None) -> None:
        """Send an Action."""
        if text is not None:
            self.send(pb.BotMessage(action=pb.Action(request_id=request_id, text=text)))
        elif index is not None:
            self.send(pb.BotMessage(action=pb.Action(request_id=request_id, index=index)))
        else:
            self.send(pb.BotMessage(action=pb.Action(request_id=request_id)))

    def recv(self, timeout: float = 20.0) -> pb.ServerMessage | None:
        """The next message, or ``None`` once the stream has ended."""
        try:
            return self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout} s") from None

    def messages(self) -> Iterator[pb.ServerMessage]:
        """Messages until the stream ends."""
        while (msg := self.recv()) is not None:
            yield msg

    def close(self) -> None:
        """End our side of the stream and drop the connection."""
        self._outbox.put(None)
        self.channel.close()

    def of_kind(self, kind: str) -> list[Any]:
        """The received messages' bodies of one kind (``decision``, ``error`` …)."""
        return [getattr(m, kind) for m in self.received if m.WhichOneof("kind") == kind]


#: Decides the answer to a decision: return a BotMessage to send, or None to stay silent.
Answerer = Callable[[pb.DecisionRequest, int], pb.BotMessage | None]


def first_legal(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
    """Answer index 0."""
    return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=0))


def play_loop(bot: RawBot, answer: Answerer = first_legal, stop_after_end: bool = True) -> None:
    """Answer decisions with ``answer`` until MatchEnd (or the stream ends)."""
    n = 0
    for msg in bot.messages():
        kind = msg.WhichOneof("kind")
        if kind == "decision":
            reply = answer(msg.decision, n)
            n += 1
            if reply is not None:
                bot.send(reply)
        elif kind == "match_end" and stop_after_end:
            return


#: A seat's behaviour: given the server address and the seat's token, play (in a thread).
Behaviour = Callable[[str, str], None]


@dataclass
class Recorder:
    """Keeps the raw bots a behaviour created, for assertions afterwards."""

    bots: list[RawBot] = field(default_factory=list)

    def new(self, address: str) -> RawBot:
        bot = RawBot(address)
        self.bots.append(bot)
        return bot


def raw(
    answer: Answerer = first_legal, rec: Recorder | None = None, lean: bool = False
) -> Behaviour:
    """A raw bot that says Hello (``lean``: with every opt-in flag) and answers with ``answer``."""

    def behaviour(address: str, token: str) -> None:
        bot = rec.new(address) if rec is not None else RawBot(address)
        bot.hello(token, lean=lean)
        try:
            play_loop(bot, answer)
        finally:
            bot.close()

    return behaviour


def sdk(bot_name: str = "random", seed: int = 0) -> Behaviour:
    """A reference bot through the Python SDK, for one match."""

    def behaviour(address: str, token: str) -> None:
        from cardarena.client import run_bot

        from reference_bots.catalog import make_bot

        run_bot(make_bot(bot_name, seed), address, token, matches=1, give_up_s=2.0)

    return behaviour


@dataclass
class Scenario:
    """One match's outcome and timing."""

    outcome: MatchOutcome
    seconds: float
    spec: MatchSpec


def make_spec(
    game: str,
    seats: int,
    *,
    options: Mapping[str, OptionValue] | None = None,
    players: int | None = None,
    seed: int = 1,
    policy: FaultPolicy = "lenient",
    move_ms: int = 2000,
    bank_ms: int = 0,
    connect_timeout_s: float = 10.0,
    match_id: str = "m1",
    tokens: Sequence[str] | None = None,
) -> MatchSpec:
    """A spec with fresh tokens (or ``tokens``)."""
    toks = list(tokens) if tokens is not None else [new_token() for _ in range(seats)]
    return MatchSpec(
        match_id=match_id,
        game=game,
        seats=tuple(SeatSpec(t, f"bot{i}") for i, t in enumerate(toks)),
        seed=seed,
        players=players,
        options=dict(options or {}),
        time_control=TimeControl(move_ms, bank_ms),
        fault_policy=policy,
        connect_timeout_s=connect_timeout_s,
    )


async def play_with(
    server: ArenaServer, spec: MatchSpec, behaviours: Sequence[Behaviour | None]
) -> Scenario:
    """Register ``spec`` (unless it is), start one thread per behaviour, run the match, join the
    threads."""
    if spec.match_id not in server.matches():
        server.register(spec)
    threads = []
    for seat_spec, behaviour in zip(spec.seats, behaviours, strict=True):
        if behaviour is None:
            continue
        t = threading.Thread(target=behaviour, args=(server.address, seat_spec.token), daemon=True)
        t.start()
        threads.append(t)
    start = time.monotonic()
    outcome = await server.run_match(spec)
    seconds = time.monotonic() - start

    await trio.to_thread.run_sync(join_all, threads)
    return Scenario(outcome, seconds, spec)


def join_all(threads: Sequence[threading.Thread], timeout: float = 10.0) -> None:
    """Join ``threads`` (blocking: run it in a worker thread from trio)."""
    for t in threads:
        t.join(timeout=timeout)


def run_scenario(spec: MatchSpec, behaviours: Sequence[Behaviour | None]) -> Scenario:
    """Open a server, play ``spec`` with ``behaviours``, close the server."""

    async def main() -> Scenario:
        async with open_arena_server() as server:
            return await play_with(server, spec, behaviours)

    return trio.run(main)


def fault_kinds(outcome: MatchOutcome, seat: int | None = None) -> list[str]:
    """Kinds of the faults charged (to ``seat``)."""
    return [f.kind for f in outcome.faults if seat is None or f.seat == seat]
