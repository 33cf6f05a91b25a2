"""The referee's critical path, C encoder against Python encoders (docs/performance.md).

``python -m benchmarks.probe [--pairs N] [--connections K]`` plays the protocol section's arena
runs, alternating ``arena/protocol/_wire.c`` and the codec's Python encoders in one process, and
prints per encoder the medians over the runs of:

* ``critical_us``: from the moment the server reads an answer (``codec.bot_bytes_to_plain``) to the
  start of the next request's write (``_StreamWriter.kick``), the referee's whole work on the
  path a bot waits on;
* ``cpu_us``: the server process's CPU time per decision;
* ``rate``: the arena's decisions per second;
* ``ratio``: that over a raw run's, as in the protocol section.

The stamps are two wrappers around those functions, set for the probe only: they add a little
to every figure, alike for both encoders. Not part of ``make bench`` (it takes about a minute and
moves nothing the table shows); the table's header names the encoder a bench ran with.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Sequence
from typing import Any

import trio
from cardarena import messages

from arena.cli.main import POSITIVE
from arena.protocol import codec, wireformat
from arena.server import service
from benchmarks.protocol_bench import arena_run, raw_run


def _critical_path(stamps: Sequence[tuple[float, str]]) -> list[float]:
    """Seconds from each answer read to the next write started (answers with no request after
    them, the last of a match, are skipped)."""
    out: list[float] = []
    answered: float | None = None
    for t, kind in stamps:
        if kind == "answer":
            answered = t
        elif answered is not None:
            out.append(t - answered)
            answered = None
    return out


def probe(pairs: int = 4, connections: int = 1) -> dict[str, dict[str, Any]]:
    """Alternate the two encoders ``pairs`` times; medians per encoder."""
    built = wireformat.BUILT
    if built is None:
        raise SystemExit("arena/protocol/_wire.c is not built: nothing to compare")
    stamps: list[tuple[float, str]] = []
    clock = time.perf_counter
    read, kick = codec.bot_bytes_to_plain, service._StreamWriter.kick

    def read_stamped(data: bytes) -> messages.BotMessage:
        stamps.append((clock(), "answer"))
        return read(data)

    def kick_stamped(writer: service._StreamWriter) -> None:
        stamps.append((clock(), "write"))
        kick(writer)

    runs: dict[str, list[dict[str, float]]] = {"c": [], "python": []}
    matches = 3 if connections == 1 else 2
    saved = wireformat.ACCEL
    codec.bot_bytes_to_plain = read_stamped  # type: ignore[assignment]
    service._StreamWriter.kick = kick_stamped  # type: ignore[method-assign]
    try:
        for _ in range(pairs):
            for name in runs:
                wireformat.ACCEL = built if name == "c" else None
                stamps.clear()
                arena = trio.run(functools.partial(arena_run, connections, matches))
                raw = raw_run(connections, max(1, 2 * arena["decisions"] // connections))
                runs[name].append(
                    {
                        "critical_us": statistics.median(_critical_path(stamps)) * 1e6,
                        "cpu_us": arena["server_cpu_s"] / arena["decisions"] * 1e6,
                        "rate": arena["decisions_per_s"],
                        "ratio": arena["decisions_per_s"] / raw["decisions_per_s"],
                    }
                )
    finally:
        wireformat.ACCEL = saved
        codec.bot_bytes_to_plain = read
        service._StreamWriter.kick = kick  # type: ignore[method-assign]
    return {
        name: {k: round(statistics.median(r[k] for r in rs), 3) for k in rs[0]}
        | {"runs": [{k: round(v, 3) for k, v in r.items()} for r in rs]}
        for name, rs in runs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.probe", description=__doc__)
    parser.add_argument("--pairs", type=POSITIVE, default=4, help="runs per encoder (default 4)")
    parser.add_argument("--connections", type=POSITIVE, default=1, help="1 or 8, as the bench")
    args = parser.parse_args()
    for name, r in probe(args.pairs, args.connections).items():
        print(
            f"{name:7s} critical path {r['critical_us']:6.1f} µs   server CPU "
            f"{r['cpu_us']:6.1f} µs/decision   {r['rate']:7.0f} decisions/s   "
            f"ratio to raw {r['ratio']:.3f}"
        )


if __name__ == "__main__":
    main()
