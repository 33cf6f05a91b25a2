"""The reference for protocol overhead, and the bot client both sides are measured with.

* :class:`RawPingPong` is a bare ``grpc.aio`` server of the arena's own service: per stream it
  answers Hello with Welcome, then sends pre-built whist DecisionRequests (the arena's real
  messages, so the sizes match) one at a time and waits for each Action: a pure request/answer
  ping-pong with nothing else to do, timed on the server like the arena's referee times its own.
* ``python -m benchmarks.wire client …`` is one process of ``grpc.aio`` bot connections (one
  channel, hence one TCP connection, each). Its Hello asks for the lean protocol (``batch_events``,
  ``omit_text``, ``omit_json``: events ride in the DecisionRequests, observations carry the typed
  message only), as the Python SDK's does. It answers every DecisionRequest at once with a
  uniformly random index, reads and drops everything else, and plays until it has seen its
  matches end (arena) or the server closes the stream (raw). The same client drives both
  servers, so the ratio of the two is the server side's overhead alone.
* :func:`sample_decisions` builds the raw server's messages as the arena sends them to that
  client holding all four seats of a whist match (or, for the scale section, one seat per
  connection): each request lean and carrying the events since the connection's previous one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
from cardarena import codec as bot_codec
from cardarena import messages
from cardarena._pb import arena_pb2 as pb
from cardarena._pb import arena_pb2_grpc as pb_grpc

from arena.protocol import codec, wireformat
from engine import Action, MatchState, get_game

#: What ``read()`` returns at the end of a grpc.aio stream (missing from grpc-stubs).
EOF: Any = getattr(grpc.aio, "EOF")  # noqa: B009

#: Client channel options: one TCP connection per channel (grpc would otherwise share one
#: connection between channels to the same address), and the server's message sizes.
CLIENT_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.use_local_subchannel_pool", 1),
    ("grpc.max_receive_message_length", 4 * 1024 * 1024),
]

#: The time control every sampled request states (ms): the bench arena's.
DEADLINE_MS, BANK_MS = 1000, 10000


def lean_whist_request(
    state: MatchState,
    request_id: int,
    match_id: str,
    sent: int,
    *,
    own_seat: bool = False,
    observation: bool = True,
) -> tuple[bytes, int]:
    """The DecisionRequest the referee sends for the seat to move in ``state`` to a lean bot
    (``batch_events``, ``omit_text``, ``omit_json``): it carries the events from index ``sent``
    on, every one for a bot holding all four seats, or with ``own_seat`` those the seat may see
    (a bot playing that seat alone). Returns the wire bytes and the events sent so far.

    Without ``observation``, the request a protocol with no observation in its requests would
    send (the bot rebuilding its view from the events): :func:`bare_request`."""
    seat = state.to_move
    assert seat is not None
    events = state.events
    held = [
        codec.event_to_body(match_id, seq, events[seq])
        for seq in range(sent, len(events))
        if not own_seat or events[seq].to is None or seat in events[seq].to
    ]
    if not observation:
        return bare_request(request_id, match_id, seat, state.legal_actions(), held), len(events)
    request = codec.decision_to_bytes(
        request_id, match_id, seat, "whist", state.observation(seat), state.legal_actions(),
        DEADLINE_MS, BANK_MS, events=held, text=False, json=False,
    )  # fmt: skip
    return request, len(events)


def bare_request(
    request_id: int, match_id: str, seat: int, legal: Sequence[Action], events: Sequence[bytes]
) -> bytes:
    """``codec.decision_to_bytes`` without the observation, assembled from the codec's own field
    encoders the way its Python path does (``benchmarks.ceiling --bare`` measures what such a
    protocol would gain; the protocol has no such message, so serde has no encoder for it)."""
    out = [codec._REQUEST_ID_KEY + wireformat.varint(request_id), codec._MATCH_ID[match_id]]
    if seat:
        out.append(codec._SEAT_KEY + wireformat.varint(seat))
    out += [codec._legal_bytes(legal), codec._DEADLINE[DEADLINE_MS], codec._BANK[BANK_MS]]
    out += [wireformat.delimited(codec._EVENTS_KEY, e) for e in events]
    return wireformat.delimited(codec._DECISION_KEY, b"".join(out))


def sample_decisions(
    count: int = 400, seed: int = 1, *, seat_per_connection: bool = False, observation: bool = True
) -> list[bytes]:
    """Real whist DecisionRequests (``codec.decision_to_bytes``, the referee's own encoding) along
    random playouts, exactly as the arena sends them to the bench client (lean Hello): no text or
    JSON rendering, and each request carrying the match's events since the connection's previous
    request. By default one connection holds all four seats (it sees every event, and its
    previous request is the match's); with ``seat_per_connection`` each seat has a connection of
    its own (the scale section), so a request carries what its seat may see since its own
    previous request. Like the arena, the raw server sends them already encoded, so both write
    the same bytes. Without ``observation``, the same requests with no observation in them
    (:func:`bare_request`)."""
    game = get_game("whist")
    rng = random.Random(seed)
    out: list[bytes] = []
    while len(out) < count:
        state = game.new_match(game.configure(), seed + len(out))
        sent = [0, 0, 0, 0]  # per connection: events of this match already carried
        while state.to_move is not None and len(out) < count:
            conn = state.to_move if seat_per_connection else 0
            request, sent[conn] = lean_whist_request(
                state,
                len(out) + 1,
                "raw-0",
                sent[conn],
                own_seat=seat_per_connection,
                observation=observation,
            )
            out.append(request)
            state.apply(rng.choice(state.legal_actions()))
    return out


@dataclass(slots=True)
class RawStats:
    """What the raw server measured."""

    #: Server-side round trips: request written to answer read, seconds.
    rtts: list[float] = field(default_factory=list)
    #: Streams that said Hello.
    streams: int = 0
    #: When the last stream read its last answer (``time.perf_counter``): the run's end on the
    #: server, as the arena run's clock stops when its last match is over.
    finished: float = 0.0
    #: With ``RawPingPong(spans=True)``: ``(stream, written, answered)`` per round trip, the
    #: streams numbered in Hello order (for tests of the turn taking).
    spans: list[tuple[int, float, float]] | None = None


def match_frames(match_id: str = "raw-0", seed: int = 1) -> tuple[bytes, bytes]:
    """What a bot that plays whole matches (the Python SDK) needs around the raw server's
    decisions: a whist MatchStart for one connection holding all four seats, and the MatchEnd
    of a random playout, as wire bytes."""
    game = get_game("whist")
    config = game.configure()
    state = game.new_match(config, seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        state.apply(rng.choice(state.legal_actions()))
    result = state.result()
    assert result is not None
    names = game.seat_names(config)
    start = messages.MatchStart(
        match_id=match_id,
        game="whist",
        game_version=game.version,
        options={k: codec.option_to_text(v) for k, v in config.options},
        seats=tuple(range(len(names))),
        players=tuple(messages.PlayerInfo(i, name, f"bot{i}") for i, name in enumerate(names)),
        time_control=messages.TimeControl(),
        fault_policy="lenient",
        bot_seed=seed,
    )
    end = messages.MatchEnd(match_id, result)
    return codec.proto_to_bytes(codec.plain_to_proto(start)), codec.proto_to_bytes(
        codec.plain_to_proto(end)
    )


class RawPingPong(pb_grpc.ArenaServicer):
    """Arena.Play as a bare ping-pong: Welcome, then decisions, each answered: ``rounds`` per
    stream, or per table a number from the list ``rounds`` (a table being a stream, or
    ``turns`` streams, below), so that the run has the shape of an arena run whose matches
    last as long as they did.

    The first request goes out once ``expected`` streams have said Hello, as the arena run
    starts its clock once every bot is connected; :attr:`started` is that moment. With
    ``frames`` (:func:`match_frames`) the decisions come between a MatchStart and a MatchEnd,
    for a bot that needs them; the clock runs from before the MatchStart to the last answer.

    With ``turns`` above 1 the streams sit at tables of ``turns`` (in the order they said
    Hello) and take turns, as the seats of a match with one connection per seat do: only one
    stream of a table has a request out at a time, the next one's goes out when it is answered.
    """

    def __init__(
        self,
        decisions: Sequence[bytes],
        rounds: int | Sequence[int],
        expected: int,
        frames: tuple[bytes, bytes] | None = None,
        turns: int = 1,
        spans: bool = False,
    ) -> None:
        self.decisions = list(decisions)
        self.rounds = rounds
        self.expected = expected
        self.frames = frames
        self.turns = turns
        # Per stream, in Hello order: set when it is that stream's turn (turns > 1).
        self._turn: list[asyncio.Event] = []
        self.stats = RawStats(spans=[] if spans else None)
        self.welcome = codec.proto_to_bytes(codec.plain_to_proto(messages.Welcome("raw", "raw")))
        self.started = 0.0
        self._all_here: asyncio.Event | None = None

    async def Play(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        hello = await context.read()
        if hello is EOF:
            return
        await context.write(self.welcome)
        if self._all_here is None:
            self._all_here = asyncio.Event()
        me = self.stats.streams
        self.stats.streams += 1
        turns = self._turn
        turns.append(asyncio.Event())
        if me % self.turns == 0:
            turns[me].set()  # the first seat of each table moves first
        if self.stats.streams >= self.expected:
            self.started = time.perf_counter()
            self._all_here.set()
        await self._all_here.wait()
        table = me - me % self.turns
        seats = min(self.turns, len(turns) - table)
        after = table + (me - table + 1) % seats
        rounds = self.rounds
        if not isinstance(rounds, int):  # the table's rounds, dealt round the table
            total = rounds[(table // self.turns) % len(rounds)]
            rounds = total // seats + (me - table < total % seats)
        rtts, spans = self.stats.rtts, self.stats.spans
        clock = time.perf_counter
        n = len(self.decisions)
        if self.frames is not None:
            await context.write(self.frames[0])
        mine, next_turn = (turns[me], turns[after]) if self.turns > 1 else (None, None)
        for i in range(rounds):
            msg = self.decisions[i % n]
            if mine is not None:
                await mine.wait()
                mine.clear()
            start = clock()
            await context.write(msg)
            answer = await context.read()
            end = clock()
            rtts.append(end - start)
            if spans is not None:
                spans.append((me, start, end))
            if next_turn is not None:
                next_turn.set()
            if answer is EOF:
                return
        self.stats.finished = max(self.stats.finished, clock())
        if self.frames is not None:
            await context.write(self.frames[1])


async def start_raw_server(servicer: RawPingPong, streams: int) -> tuple[grpc.aio.Server, str]:
    """Start the raw server on a free loopback port; ``(server, "127.0.0.1:PORT")``."""
    server = grpc.aio.server(
        options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", 64 * 1024)],
        maximum_concurrent_rpcs=streams + 8,
    )
    # The messages are bytes already: no response serializer.
    play = grpc.stream_stream_rpc_method_handler(
        servicer.Play, request_deserializer=pb.BotMessage.FromString
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("cardarena.v1.Arena", {"Play": play}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


# --- the client process -----------------------------------------------------------------------


@dataclass(slots=True)
class ClientStats:
    """What one client process saw (printed as JSON at the end)."""

    decisions: int = 0
    matches: int = 0
    messages: int = 0
    connected: int = 0
    errors: list[str] = field(default_factory=list)
    #: Per connection: seconds from sending an answer to the next DecisionRequest arriving.
    gaps: list[float] = field(default_factory=list)


async def _connection(
    address: str,
    token: str,
    matches: int,
    stats: ClientStats,
    rng: random.Random,
    think_s: float = 0.0,
) -> None:
    async with grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS) as channel:
        stub: Any = pb_grpc.ArenaStub(channel)
        call = stub.Play()  # no request iterator: the aio read()/write() API
        hello = messages.Hello(
            "bench", "1", token, 1, batch_events=True, omit_text=True, omit_json=True
        )
        await call.write(bot_codec.hello_to_proto(hello))
        ended = 0
        sent_at = 0.0
        clock = time.perf_counter
        try:
            while True:
                read = await call.read()
                if read is EOF:
                    break
                msg = cast(pb.ServerMessage, read)
                stats.messages += 1
                kind = msg.WhichOneof("kind")
                if kind == "decision":
                    d = msg.decision
                    if sent_at:
                        stats.gaps.append(clock() - sent_at)
                    index = rng.randrange(len(d.legal_actions))
                    if think_s:  # a bot that computes its move: the CPU is busy, not asleep
                        until = clock() + think_s
                        while clock() < until:
                            pass
                    await call.write(
                        pb.BotMessage(action=pb.Action(request_id=d.request_id, index=index))
                    )
                    sent_at = clock()
                    stats.decisions += 1
                elif kind == "welcome":
                    stats.connected += 1
                elif kind == "match_end":
                    ended += 1
                    sent_at = 0.0
                    if matches and ended >= matches:
                        break
                elif kind == "rejected":
                    stats.errors.append(f"rejected: {msg.rejected.reason}")
                    break
                elif kind == "error":
                    stats.errors.append(f"error: {msg.error.message}")
            stats.matches += ended
            await call.done_writing()
        except grpc.aio.AioRpcError as err:
            stats.errors.append(f"{err.code()}: {err.details()}")


async def run_client(
    address: str, tokens: Sequence[str], matches: int, seed: int, think_s: float = 0.0
) -> ClientStats:
    """Open one connection per token and play until done, thinking ``think_s`` per decision."""
    stats = ClientStats()
    rng = random.Random(seed)
    await asyncio.gather(
        *(
            _connection(address, t, matches, stats, random.Random(rng.random()), think_s)
            for t in tokens
        )
    )
    return stats


def client_main(argv: Sequence[str]) -> int:
    """``python -m benchmarks.wire client ADDRESS --tokens FILE --matches K``."""
    parser = argparse.ArgumentParser(prog="benchmarks.wire client")
    parser.add_argument("address")
    parser.add_argument("--tokens", required=True, help="file with one token per line")
    parser.add_argument("--matches", type=int, default=0, help="matches per connection (0: raw)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--think-ms", type=float, default=0.0, help="busy per decision")
    args = parser.parse_args(argv)
    with open(args.tokens) as f:
        tokens = [line.strip() for line in f if line.strip()]
    c0, w0 = time.process_time(), time.perf_counter()
    stats = asyncio.run(
        run_client(args.address, tokens, args.matches, args.seed, args.think_ms / 1000)
    )
    gaps = sorted(stats.gaps)
    print(
        json.dumps(
            {
                "decisions": stats.decisions,
                "matches": stats.matches,
                "messages": stats.messages,
                "connected": stats.connected,
                "errors": stats.errors[:10],
                "error_count": len(stats.errors),
                "cpu_s": round(time.process_time() - c0, 3),
                "wall_s": round(time.perf_counter() - w0, 3),
                "gap_median_ms": round(gaps[len(gaps) // 2] * 1000, 3) if gaps else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["client"]:
        sys.exit(client_main(sys.argv[2:]))
    sys.exit("usage: python -m benchmarks.wire client ADDRESS --tokens FILE [--matches K]")
