"""Section 2: protocol overhead — the arena beside a raw grpc.aio ping-pong, same client, same
message sizes, measured in the same run (arena and raw runs alternate).

The arena plays whist matches in which one bot connection holds all four seats (one token), so
every decision is one request/answer round trip on that connection, like the raw ping-pong's.
``connections`` such connections play at once, each its own series of matches. Latency is the
referee's own per-decision timing (request sent → answer received, on the server's clock); the
raw server times its round trips the same way.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio
from cardarena.messages import TimeControl

from arena.server import (
    ArenaServer,
    MatchOutcome,
    MatchSpec,
    SeatSpec,
    new_token,
    open_arena_server,
)
from benchmarks.common import ROOT, child_env, percentile, rss_bytes, thread_count
from benchmarks.wire import (
    RawPingPong,
    lean_whist_request,
    match_frames,
    sample_decisions,
    start_raw_server,
)
from engine import get_game


def client_argv(
    address: str, tokens_file: Path, matches: int, seed: int = 1, think_ms: float = 0.0
) -> list[str]:
    """The bench client process (benchmarks/wire.py), thinking ``think_ms`` per decision."""
    return [
        sys.executable,
        "-m",
        "benchmarks.wire",
        "client",
        address,
        "--tokens",
        str(tokens_file),
        "--matches",
        str(matches),
        "--seed",
        str(seed),
        "--think-ms",
        str(think_ms),
    ]


def sdk_argv(address: str, token: str, seed: int, matches: int) -> list[str]:
    """The Python SDK's random bot (``arena bot random``), playing ``matches`` matches."""
    return [
        str(Path(sys.executable).parent / "arena"), "bot", "random",
        "--server", address, "--token", token, "--seed", str(seed), "--matches", str(matches),
    ]  # fmt: skip


def _summary(
    label: str,
    connections: int,
    decisions: int,
    wall: float,
    latencies_ms: Sequence[float],
    server_cpu: float,
    client: dict[str, Any] | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "label": label,
        "decisions": decisions,
        "wall_s": round(wall, 3),
        "decisions_per_s": round(decisions / wall, 1) if wall > 0 else 0.0,
        # Per connection, one decision every cycle_ms: the round trip (latency, on the
        # server's clock) plus the server's own work between an answer and the next request.
        "cycle_ms": round(wall * 1000 / decisions * connections, 3) if decisions else None,
        "latency_median_ms": round(percentile(latencies_ms, 0.5), 3),
        "latency_p99_ms": round(percentile(latencies_ms, 0.99), 3),
        "server_cpu_s": round(server_cpu, 3),
        "server_cpu_share": round(server_cpu / wall, 2) if wall > 0 else 0.0,
        "client": client,
        **(extra or {}),
    }


# --- the arena ------------------------------------------------------------------------------


async def _arena_series(
    server: ArenaServer, specs: Sequence[MatchSpec], outcomes: list[MatchOutcome]
) -> None:
    for spec in specs:
        outcomes.append(await server.run_match(spec))


async def arena_run(
    connections: int,
    matches_per_connection: int,
    *,
    options: dict[str, Any] | None = None,
    time_control: TimeControl | None = None,
    sdk_bot: bool = False,
    seats_per_connection: int = 4,
    max_connections: int = 256,
    label: str = "",
    think_ms: float = 0.0,
) -> dict[str, Any]:
    """Whist matches over the arena: ``connections`` bot connections, each playing
    ``matches_per_connection`` matches in turn (all four seats on one connection by default;
    ``seats_per_connection=1`` gives each seat its own connection), the bench client thinking
    ``think_ms`` per decision. Runs on trio."""
    tc = time_control or TimeControl()
    per_match = 4 // seats_per_connection
    tables = connections // per_match
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        async with open_arena_server("127.0.0.1:0", max_connections=max_connections) as server:
            tokens = [new_token() for _ in range(tables * per_match)]
            series: list[list[MatchSpec]] = []
            for table in range(tables):
                seat_tokens = tokens[table * per_match : (table + 1) * per_match]
                seats = tuple(SeatSpec(seat_tokens[s // seats_per_connection]) for s in range(4))
                series.append(
                    [
                        MatchSpec(
                            match_id=f"bench-{table}-{j}",
                            game="whist",
                            seats=seats,
                            seed=1000 * table + j,
                            options=dict(options or {}),
                            time_control=tc,
                            connect_timeout_s=120.0,
                        )
                        for j in range(matches_per_connection)
                    ]
                )
            for s in series:
                server.register(s[0])
            idle_rss, idle_threads = rss_bytes(), thread_count()
            procs = []
            if sdk_bot:
                for i, token in enumerate(tokens):
                    argv = sdk_argv(server.address, token, i, matches_per_connection)
                    procs.append(
                        await trio.lowlevel.open_process(
                            argv, env=child_env(), cwd=ROOT, stdout=subprocess.DEVNULL
                        )
                    )
            else:
                tokens_file = Path(tmp) / "tokens"
                tokens_file.write_text("\n".join(tokens) + "\n")
                out_file = (Path(tmp) / "client.json").open("wb")
                procs.append(
                    await trio.lowlevel.open_process(
                        client_argv(
                            server.address, tokens_file, matches_per_connection, think_ms=think_ms
                        ),
                        env=child_env(),
                        cwd=ROOT,
                        stdout=out_file,
                    )
                )
            connect_start = time.perf_counter()
            with trio.fail_after(120):
                for specs in series:
                    await server.wait_ready(specs[0].match_id)
            connect_s = time.perf_counter() - connect_start
            connected_rss, connected_threads = rss_bytes(), thread_count()
            # Per table, its series' outcomes: the raw run copies each table's decisions.
            per_table: list[list[MatchOutcome]] = [[] for _ in series]
            c0, w0 = time.process_time(), time.perf_counter()
            async with trio.open_nursery() as nursery:
                for specs, table_outcomes in zip(series, per_table, strict=True):
                    nursery.start_soon(_arena_series, server, specs, table_outcomes)
            wall = time.perf_counter() - w0
            server_cpu = time.process_time() - c0
            with trio.fail_after(60):
                for p in procs:
                    await p.wait()
            client = None
            if not sdk_bot:
                out_file.close()
                text = (Path(tmp) / "client.json").read_text().strip()
                client = json.loads(text.splitlines()[-1]) if text else None
    outcomes = [o for table_outcomes in per_table for o in table_outcomes]
    timings = [t for o in outcomes for t in o.timings]
    faults = [f for o in outcomes for f in o.faults]
    answered = [t.ms for t in timings if not t.fallback]
    return _summary(
        label or f"arena, {connections} connection{'s' if connections > 1 else ''}",
        len(tokens),
        len(timings),
        wall,
        answered,
        server_cpu,
        client,
        {
            "connections": len(tokens),
            "matches": len(outcomes),
            # Per table (its connections' series of matches), for a raw run of the same shape.
            "decisions_per_table": [sum(len(o.timings) for o in t) for t in per_table],
            "faults": len(faults),
            "timeouts": sum(1 for f in faults if f.kind == "timeout"),
            "fault_kinds": sorted({f.kind for f in faults}),
            "connect_s": round(connect_s, 2),
            "server_rss_idle_mb": round(idle_rss / 2**20, 1),
            "server_rss_connected_mb": round(connected_rss / 2**20, 1),
            "server_rss_per_connection_kb": round((connected_rss - idle_rss) / len(tokens) / 1024),
            "server_threads_idle": idle_threads,
            "server_threads_connected": connected_threads,
            # The play on time.perf_counter's clock (CLOCK_MONOTONIC: benchmarks/native.py).
            "window": [w0, w0 + wall],
        },
    )


# --- the raw reference --------------------------------------------------------------------


async def _raw_async(
    connections: int, rounds: int | Sequence[int], think_ms: float, sdk_bot: bool, turns: int
) -> dict[str, Any]:
    # The SDK bot needs a MatchStart before the decisions and a MatchEnd to stop.
    frames = match_frames() if sdk_bot else None
    # Streams at tables stand for one seat each: their requests carry what one seat sees.
    decisions = sample_decisions(seat_per_connection=turns > 1)
    servicer = RawPingPong(decisions, rounds, connections, frames, turns)
    server, address = await start_raw_server(servicer, connections)
    try:
        with tempfile.TemporaryDirectory(prefix="raw-bench-") as tmp:
            tokens_file = Path(tmp) / "tokens"
            tokens_file.write_text("".join(f"raw{i}\n" for i in range(connections)))
            if sdk_bot:
                argv = sdk_argv(address, "raw0", 0, 1)
            else:
                argv = client_argv(address, tokens_file, 0, think_ms=think_ms)
            c0 = time.process_time()
            procs = [
                await asyncio.create_subprocess_exec(
                    *argv, env=child_env(), cwd=ROOT, stdout=asyncio.subprocess.PIPE
                )
                for _ in range(connections if sdk_bot else 1)
            ]
            outs = [(await asyncio.wait_for(p.communicate(), 300))[0] for p in procs]
            end = time.perf_counter()
            server_cpu = time.process_time() - c0
    finally:
        await server.stop(0.5)
    if any(p.returncode for p in procs):
        raise RuntimeError(f"a raw run's bot process failed: {argv[:4]}")
    client = None if sdk_bot else json.loads(outs[0].decode().strip().splitlines()[-1])
    rtts = [x * 1000 for x in servicer.stats.rtts]
    # The server's last answer, not the client process's exit (about 30 ms later, which
    # would count against the reference).
    finished = servicer.stats.finished or end
    wall = finished - servicer.started if servicer.started else float("nan")
    return _summary(
        f"raw grpc.aio, {connections} connection{'s' if connections > 1 else ''}",
        connections,
        len(rtts),
        wall,
        rtts,
        server_cpu,
        client,
        {
            "connections": connections,
            "rounds_per_connection": rounds,
            "window": [servicer.started, finished],
        },
    )


def raw_run(
    connections: int,
    rounds: int | Sequence[int],
    think_ms: float = 0.0,
    sdk_bot: bool = False,
    turns: int = 1,
) -> dict[str, Any]:
    """The raw ping-pong: ``connections`` streams of ``rounds`` round trips each, the client
    thinking ``think_ms`` per decision; with ``sdk_bot``, each stream the SDK's random bot (a
    process each) instead of the bench client; with ``turns``, the streams at tables of that
    many, taking turns (:class:`~benchmarks.wire.RawPingPong`), each stream one seat: its
    requests carry the events one seat may see (``sample_decisions(seat_per_connection=True)``),
    as the arena's do with a connection per seat."""
    return asyncio.run(_raw_async(connections, rounds, think_ms, sdk_bot, turns))


# --- why the referee costs more live than in a loop ------------------------------------------


WAKEUP_MODES = ("back_to_back", "busy_wait", "asleep")


def wakeup_cost(decisions: int = 1000, rounds: int = 5, pause_s: float = 0.0002) -> dict[str, Any]:
    """The referee's own work per decision (apply the move, then the events, legal actions,
    observation and wire bytes of the next request, as referee.py does for a lean bot), timed
    back to back, after ``pause_s`` of busy waiting, and after ``pause_s`` asleep, as the
    server's loop thread sleeps while a bot thinks. The three modes alternate, ``decisions``
    at a time, for ``rounds`` rounds after one of warm-up; each figure is the median over the
    rounds of each round's median, in microseconds, so a burst of load on the machine moves one
    round, not the result.

    The sleep makes it slower (docs/performance.md): the work is the same, what it costs after
    the thread wakes is not.
    """
    game = get_game("whist")
    clock = time.perf_counter
    per_round: dict[str, list[float]] = {mode: [] for mode in WAKEUP_MODES}
    matches = 0
    for round_ in range(rounds + 1):
        for mode in WAKEUP_MODES:
            rng = random.Random(3)
            times: list[float] = []
            state = game.new_match(game.configure(), 0)
            sent, rid, seed = 0, 1, 0
            for _ in range(decisions):
                if state.to_move is None:
                    seed += 1
                    state, sent = game.new_match(game.configure(), seed), 0
                move = rng.choice(state.legal_actions())
                if mode == "asleep":
                    time.sleep(pause_s)
                elif mode == "busy_wait":
                    until = clock() + pause_s
                    while clock() < until:
                        pass
                start = clock()
                state.apply(move)
                if state.to_move is not None:
                    _, sent = lean_whist_request(state, rid, "m", sent)
                times.append(clock() - start)
                rid += 1
            matches = seed + 1
            if round_:  # round 0 warms the caches and tables the work fills
                per_round[mode].append(statistics.median(times))
    result: dict[str, Any] = {
        mode: round(statistics.median(values) * 1e6, 2) for mode, values in per_round.items()
    }
    result["pause_ms"] = pause_s * 1000
    result["matches"] = matches  # per mode and round
    return result


#: Per decision, for the "bot that thinks" pairs: busy, as a bot computing its move.
THINK_MS = 1.0


def run_protocol(repeats: int = 3, matches_1: int = 3, matches_8: int = 2) -> dict[str, Any]:
    """Raw and arena, 1 and 8 connections, alternating, ``repeats`` times; medians and ratios.
    Then, for scale, a few pairs with one connection whose bot thinks :data:`THINK_MS`."""
    runs: dict[str, list[dict[str, Any]]] = {
        "raw1": [], "arena1": [], "raw8": [], "arena8": [], "raw_think": [], "arena_think": [],
        "raw_sdk": [], "arena_sdk": [],
    }  # fmt: skip
    for _ in range(repeats):
        for n, k in ((1, matches_1), (8, matches_8)):
            played = trio.run(functools.partial(arena_run, n, k))
            # Per connection, twice the round trips its matches had: the raw run has the
            # arena run's shape (a connection whose matches were longer plays on alone at the
            # end), and, being faster, lasts about as long, so both see the machine's load
            # for a similar stretch.
            rounds = [2 * d for d in played["decisions_per_table"]]
            runs[f"raw{n}"].append(raw_run(n, rounds))
            runs[f"arena{n}"].append(played)
    for _ in range(min(repeats, 3)):
        played = trio.run(functools.partial(arena_run, 1, 2, think_ms=THINK_MS))
        runs["raw_think"].append(raw_run(1, played["decisions"], think_ms=THINK_MS))
        runs["arena_think"].append(played)
    # The SDK's random bot, one match a run, against the raw server driving the same bot: the
    # server's overhead as a Python bot sees it (the SDK decodes every observation for its Bot).
    for _ in range(min(repeats, 3)):
        played = trio.run(
            functools.partial(
                arena_run,
                1,
                1,
                sdk_bot=True,
                label="arena, 1 connection, SDK bot (arena bot random)",
            )
        )
        runs["raw_sdk"].append(raw_run(1, played["decisions"], sdk_bot=True))
        runs["arena_sdk"].append(played)
    summary: dict[str, Any] = {}
    for n in (1, 8):
        raw, arena = runs[f"raw{n}"], runs[f"arena{n}"]
        summary[f"{n}"] = {
            "raw_decisions_per_s": median_of(raw, "decisions_per_s"),
            "arena_decisions_per_s": median_of(arena, "decisions_per_s"),
            **_ratios(arena, raw),
            "raw_cycle_ms": median_of(raw, "cycle_ms"),
            "arena_cycle_ms": median_of(arena, "cycle_ms"),
            "raw_latency_median_ms": median_of(raw, "latency_median_ms"),
            "raw_latency_p99_ms": median_of(raw, "latency_p99_ms"),
            "arena_latency_median_ms": median_of(arena, "latency_median_ms"),
            "arena_latency_p99_ms": median_of(arena, "latency_p99_ms"),
            "arena_server_cpu_share": median_of(arena, "server_cpu_share"),
            "raw_server_cpu_share": median_of(raw, "server_cpu_share"),
            "arena_messages_per_decision": round(
                statistics.median(
                    a["client"]["messages"] / a["decisions"] for a in arena if a["client"]
                ),
                2,
            ),
        }
    summary["think"] = {
        "think_ms": THINK_MS,
        "raw_decisions_per_s": median_of(runs["raw_think"], "decisions_per_s"),
        "arena_decisions_per_s": median_of(runs["arena_think"], "decisions_per_s"),
        **_ratios(runs["arena_think"], runs["raw_think"]),
    }
    raw1 = summary["1"]["raw_decisions_per_s"]
    arena_sdk = median_of(runs["arena_sdk"], "decisions_per_s")
    summary["sdk_1"] = {
        "arena_decisions_per_s": arena_sdk,
        "raw_decisions_per_s": median_of(runs["raw_sdk"], "decisions_per_s"),
        **_ratios(runs["arena_sdk"], runs["raw_sdk"]),
        # Against the bench client's raw run: what the SDK's own work costs on top.
        "ratio_to_bench_client_raw": round(arena_sdk / raw1, 3) if raw1 else None,
        "arena_latency_median_ms": median_of(runs["arena_sdk"], "latency_median_ms"),
        "raw_latency_median_ms": median_of(runs["raw_sdk"], "latency_median_ms"),
    }
    summary["wakeup"] = wakeup_cost()
    return {"runs": runs, "summary": summary}


def _ratios(arena: Sequence[dict[str, Any]], raw: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Median and range of the arena/raw decisions-per-second ratios of alternating pairs."""
    ratios = [a["decisions_per_s"] / r["decisions_per_s"] for a, r in zip(arena, raw, strict=True)]
    return {
        "ratio_median": round(statistics.median(ratios), 3),
        "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
    }


def median_of(runs: Sequence[dict[str, Any]], key: str) -> float:
    """The median of ``key`` over ``runs``, rounded to three decimals."""
    return round(float(statistics.median(r[key] for r in runs)), 3)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    print(json.dumps(run_protocol(repeats=1), indent=1))
