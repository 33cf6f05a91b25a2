"""What the arena's design can reach against the raw ping-pong (docs/performance.md).

``python -m benchmarks.ceiling [--runs N] [--connections K]`` drives four variants of the raw
server with the protocol section's client, alternating them ``N`` times, and prints each one's
median decisions per second and its ratio to the plain server:

* ``raw``: the protocol section's reference (write, then read, in one coroutine per stream);
* ``structured``: the arena's structure around the same bytes (a reader always reading; each
  request's write started by hand from inside the reader, as arena/server/service.py does);
* ``engine``: that, plus per answer the engine's part of a decision on a whist match (apply a
  move, the next seat's legal actions and observation), as the referee does it;
* ``engine+encode``: that, plus the request's encoding (the event bodies and
  ``codec.decision_to_bytes``, in C when arena/protocol/_wire.c is built).

All four send the same pre-built bytes; only the work between an answer and the next request
differs. ``engine+encode`` is the arena without its routing and bookkeeping: a ceiling for the
referee as designed.

With ``--bare`` two more variants weigh a protocol whose requests carry no observation (the bot
rebuilding its view from the events, which every request carries anyway): ``raw-bare`` sends
the same requests without their observations, and ``engine+encode-bare`` applies a move, lists
the legal actions and encodes such a request, with no observation to build. Its ratio is taken
against ``raw-bare``, as the protocol section compares messages of the same size.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import grpc

from arena.cli.main import POSITIVE
from arena.protocol import wireformat
from benchmarks.common import ROOT, child_env
from benchmarks.protocol_bench import client_argv
from benchmarks.wire import EOF, RawPingPong, lean_whist_request, sample_decisions, start_raw_server
from engine import get_game

VARIANTS = ("raw", "structured", "engine", "engine+encode")
#: ``--bare``: the same ceiling for requests without observations, and its own reference.
BARE_VARIANTS = ("raw-bare", "engine+encode-bare")


def reference(variant: str) -> str:
    """The variant a ratio is taken against: raw sending requests of the same kind."""
    return "raw-bare" if variant.endswith("-bare") else "raw"


#: A run takes a few seconds; one that has not finished in this long is stuck.
RUN_TIMEOUT_S = 120


class Structured(RawPingPong):
    """The raw ping-pong with the arena's stream structure, and optional work per answer."""

    def __init__(self, decisions: list[bytes], rounds: int, expected: int, work: str) -> None:
        super().__init__(decisions, rounds, expected)
        self.work = work
        self.game = get_game("whist")
        self.rng = random.Random(5)
        self.state = self.game.new_match(self.game.configure(), 0)
        self.sent, self.matches = 0, 0

    def referee(self) -> None:
        """The engine's part of one decision (and the request's encoding, if asked)."""
        state = self.state
        if state.to_move is None:
            self.matches += 1
            state = self.state = self.game.new_match(self.game.configure(), self.matches)
            self.sent = 0
        state.apply(self.rng.choice(state.legal_actions()))
        if state.to_move is None:
            return
        if self.work == "engine+encode":
            _, self.sent = lean_whist_request(state, 1, "m", self.sent)
        elif self.work == "engine+encode-bare":
            _, self.sent = lean_whist_request(state, 1, "m", self.sent, observation=False)
        else:
            state.legal_actions()
            state.observation(state.to_move)

    async def Play(  # type: ignore[override]
        self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        if await context.read() is EOF:
            return
        await context.write(self.welcome)
        self.stats.streams += 1
        if self.stats.streams >= self.expected:
            self.started = time.perf_counter()
        clock, rtts, n = time.perf_counter, self.stats.rtts, len(self.decisions)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        sent_at = clock()

        # Writes stepped by hand, as service._StreamWriter does, and like it one at a time:
        # an answer can be read before the loop has seen its request's write complete, and
        # gRPC refuses a second write in flight (the stream would hang).
        queued: list[bytes] = []
        coro: Coroutine[Any, Any, None] | None = None

        def step(_: object = None) -> None:
            nonlocal coro
            assert coro is not None
            try:
                waiting = coro.send(None)
            except StopIteration:
                coro = None
                if queued:
                    write(queued.pop(0))
                return
            waiting._asyncio_future_blocking = False
            waiting.add_done_callback(step)

        def write(msg: bytes) -> None:
            nonlocal coro
            if coro is not None:
                queued.append(msg)
                return
            coro = context.write(msg)
            step()

        async def reader() -> None:
            nonlocal sent_at
            for i in range(1, self.rounds + 1):
                if await context.read() is EOF:
                    break
                rtts.append(clock() - sent_at)
                if i == self.rounds:
                    self.stats.finished = max(self.stats.finished, clock())
                    break
                if self.work != "structured":
                    self.referee()
                sent_at = clock()
                write(self.decisions[i % n])
            if not done.done():
                done.set_result(None)

        write(self.decisions[0])
        task = asyncio.ensure_future(reader())
        try:
            await done
        finally:
            task.cancel()


async def _run(variant: str, connections: int, rounds: int) -> float:
    decisions = sample_decisions(observation=not variant.endswith("-bare"))
    servicer = (
        RawPingPong(decisions, rounds, connections)
        if variant.startswith("raw")
        else Structured(decisions, rounds, connections, variant)
    )
    server, address = await start_raw_server(servicer, connections)
    try:
        with tempfile.TemporaryDirectory(prefix="ceiling-") as tmp:
            tokens = Path(tmp) / "tokens"
            tokens.write_text("".join(f"c{i}\n" for i in range(connections)))
            proc = await asyncio.create_subprocess_exec(
                *client_argv(address, tokens, 0),
                env=child_env(),
                cwd=ROOT,
                stdout=asyncio.subprocess.DEVNULL,
            )
            try:
                await asyncio.wait_for(proc.wait(), RUN_TIMEOUT_S)
            except TimeoutError:
                proc.kill()
                raise RuntimeError(
                    f"the {variant} run with {connections} connection(s) did not finish "
                    f"in {RUN_TIMEOUT_S} s"
                ) from None
    finally:
        await server.stop(0.5)
    wall = servicer.stats.finished - servicer.started
    return len(servicer.stats.rtts) / wall


def ceiling(
    runs: int = 4, connections: int = 1, rounds: int = 3000, *, bare: bool = False
) -> dict[str, Any]:
    """Each variant ``runs`` times, alternating; medians and ratios to ``raw`` (to ``raw-bare``
    for the ``bare`` variants)."""
    variants = VARIANTS + BARE_VARIANTS if bare else VARIANTS
    rates: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(runs):
        for variant in variants:
            per_stream = rounds if connections == 1 else max(1, 2 * rounds // connections)
            rates[variant].append(asyncio.run(_run(variant, connections, per_stream)))
    medians = {v: statistics.median(r) for v, r in rates.items()}
    return {
        "encoder": wireformat.encoder_name(),
        "connections": connections,
        "variants": {
            v: {
                "decisions_per_s": round(medians[v]),
                "ratio_to_raw": round(medians[v] / medians[reference(v)], 3),
                "runs": [round(x) for x in r],
            }
            for v, r in rates.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ceiling", description=__doc__)
    parser.add_argument("--runs", type=POSITIVE, default=4, help="runs per variant (default 4)")
    parser.add_argument("--connections", type=POSITIVE, default=1, help="1 or 8, as the bench")
    parser.add_argument(
        "--bare", action="store_true", help="also requests without observations (see above)"
    )
    args = parser.parse_args()
    result = ceiling(args.runs, args.connections, bare=args.bare)
    print(f"encoder: {result['encoder']}; {args.connections} connection(s)")
    for v, r in result["variants"].items():
        rate, ratio = r["decisions_per_s"], r["ratio_to_raw"]
        print(f"{v:18s} {rate:7,} decisions/s   {ratio:.2f}× {reference(v)}")


if __name__ == "__main__":
    main()
