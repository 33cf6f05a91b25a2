"""Section 4: scale — N concurrent bot connections (one per seat: N/4 whist matches at once)
with a 1 s deadline per decision and no bank: decisions per second, timeouts (the target is 0),
decision latency, and the server's resident memory per connected bot; beside the raw grpc.aio
ping-pong with as many connections in the same run (the ratio).

Each N runs in a fresh process (``python -m benchmarks.scale_bench N``) so that its memory
figures start from a clean heap; the bots are one client process on loopback, every match is a
short rubber, so the run is bounded and stops by itself.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
from pathlib import Path
from typing import Any

import trio
from cardarena.messages import TimeControl

from arena.cli.main import POSITIVE
from arena.logging import configure
from benchmarks.common import python_module, run_json
from benchmarks.profiling import profiled
from benchmarks.protocol_bench import arena_run, median_of, raw_run

#: One game to 5 points: a deal or two per match.
OPTIONS = {"games_per_rubber": 1, "points_to_win": 5}
DEADLINE = TimeControl(move_ms=1000, bank_ms=0)


def _arena(n: int) -> dict[str, Any]:
    return trio.run(
        functools.partial(
            arena_run,
            n,
            1,
            options=OPTIONS,
            time_control=DEADLINE,
            seats_per_connection=1,
            max_connections=n + 16,
            label=f"arena, {n} connections",
        )
    )


def scale_once(n: int, pairs: int = 3) -> dict[str, Any]:
    """N connections (N/4 matches of one connection per seat) against the arena, alternating
    ``pairs`` times with the raw ping-pong at tables of four taking turns, as the seats of a
    match do, each table for as many rounds as its match had decisions (the reference of the
    ratio); then once with all N streams asking at once. The memory figures are the first arena
    run's (a clean heap); rates and latencies are medians over the pairs, timeouts their sum."""
    arenas: list[dict[str, Any]] = []
    tables: list[dict[str, Any]] = []
    for _ in range(pairs):
        arena = _arena(n)
        arenas.append(arena)
        tables.append(raw_run(n, arena["decisions_per_table"], turns=4))
    result = dict(arenas[0])
    per_connection = max(1, result["decisions"] // n)
    # Twice the arena's round trips per connection, so the faster raw run is not a blip.
    at_once = raw_run(n, 2 * per_connection)
    ratios = [
        a["decisions_per_s"] / t["decisions_per_s"] for a, t in zip(arenas, tables, strict=True)
    ]
    for key in ("decisions_per_s", "latency_median_ms", "latency_p99_ms"):
        result[key] = median_of(arenas, key)
    for key in ("faults", "timeouts"):
        result[key] = sum(a[key] for a in arenas)
    result["pairs"] = [
        {"arena": a["decisions_per_s"], "raw_tables": t["decisions_per_s"]}
        for a, t in zip(arenas, tables, strict=True)
    ]
    result["raw_tables"] = {
        key: median_of(tables, key)
        for key in ("decisions_per_s", "latency_median_ms", "latency_p99_ms")
    }
    result["ratio_to_raw_tables"] = round(statistics.median(ratios), 3)
    result["ratio_range"] = [round(min(ratios), 3), round(max(ratios), 3)]
    result["raw"] = at_once
    rate = at_once["decisions_per_s"]
    result["ratio_to_raw"] = round(result["decisions_per_s"] / rate, 3) if rate else None
    return result


def profile_once(n: int, out: Path) -> dict[str, Any]:
    """The arena at N connections again, under py-spy (a separate run: sampling disturbs)."""
    with profiled(out) as prof:
        _arena(n)
    return prof


def run_scale(
    levels: tuple[int, ...] = (100, 200, 500),
    profile_at: int | None = 200,
    out: Path | None = None,
    timeout: float = 240,
    pairs: int = 3,
) -> dict[str, Any]:
    """Every level in its own process (``pairs`` alternating pairs), then a profiled run at
    ``profile_at`` connections."""
    result: dict[str, Any] = {
        "deadline_ms": DEADLINE.move_ms,
        "options": OPTIONS,
        "levels": [
            run_json(
                python_module("benchmarks.scale_bench", str(n), "--pairs", str(pairs)), timeout
            )
            for n in levels
        ],
    }
    if profile_at is not None and out is not None:
        path = out / f"profile-arena-scale-{profile_at}.txt"
        argv = python_module("benchmarks.scale_bench", str(profile_at), "--profile", str(path))
        result["profile"] = {"connections": profile_at, **run_json(argv, timeout)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scale_bench",
        description="One scale level: prints its figures as JSON (make bench runs 100, 200, 500).",
    )
    parser.add_argument("connections", type=POSITIVE, help="bot connections (N/4 matches)")
    parser.add_argument("--pairs", type=POSITIVE, default=3, help="arena/raw pairs (default 3)")
    parser.add_argument("--profile", type=Path, help="instead, one arena run under py-spy")
    args = parser.parse_args()
    configure("error")
    if args.profile is not None:
        print(json.dumps(profile_once(args.connections, args.profile.resolve())))
    else:
        print(json.dumps(scale_once(args.connections, args.pairs)))


if __name__ == "__main__":
    main()
