"""The benchmark harness's own pieces (``make bench`` itself is not a test: it takes minutes)."""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trio
from cardarena.client import run_bot

from arena.protocol import codec, wireformat
from arena.server import service
from benchmarks import __main__ as bench_main
from benchmarks import ceiling as ceiling_bench
from benchmarks import probe as probe_bench
from benchmarks.common import ROOT, DescendantCpu, percentile
from benchmarks.engine_bench import OUR_GAMES, clone_costs, openspiel_available, our_slice
from benchmarks.profiling import summarize
from benchmarks.protocol_bench import arena_run, raw_run, wakeup_cost
from benchmarks.report import ceiling_rows, engine_rows, protocol_rows, render, scale_rows
from benchmarks.scale_bench import scale_once
from benchmarks.wire import RawPingPong, match_frames, sample_decisions, start_raw_server
from reference_bots.catalog import make_bot


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) in (50.0, 51.0)
    assert percentile(values, 0.99) == 99.0
    assert percentile([3.0], 0.99) == 3.0


def test_our_slice_counts_decisions_of_whole_matches() -> None:
    decisions, games = our_slice("whist", 4, {"games_per_rubber": 1})(0.05)
    assert games >= 1 and decisions >= 52 * games


def test_summarize_py_spy_raw_output(tmp_path: Path) -> None:
    raw = tmp_path / "raw.txt"
    raw.write_text(
        "main (x.py);send (arena/server/connections.py) 6\n"
        "main (x.py);_apply (engine/games/whist.py) 3\n"
        "main (x.py);wait (threading.py) 1\n"
        # Inside a handler's frame: grpc.aio's native write; below it, our own work.
        "_run (asyncio/events.py);Play (arena/server/service.py) 4\n"
        "_run (asyncio/events.py);Play (arena/server/service.py);on_open (arena/server/hub.py) 2\n"
        "_run (asyncio/events.py) 4\n"
    )
    summary = summarize(raw, expected_samples=40)
    assert summary["samples"] == 20 and summary["interpreter_busy"] == 0.5
    assert summary["by_part"] == {
        "arena server (referee, hub, service)": 0.4,
        "engine": 0.15,
        "grpc.aio write/read (under the handlers)": 0.2,
        "asyncio loop": 0.2,
        "threading/queue": 0.05,
    }
    assert summary["top_self"][0] == {
        "function": "send (arena/server/connections.py)",
        "share": 0.3,
    }


@pytest.mark.slow
def test_descendant_cpu_sees_grandchildren() -> None:
    # /bin/sh -c forks the command (a grandchild), as the arena's launcher does with bots. It
    # idles on purpose once it has burnt its CPU: a sample sees what it spent before it exits.
    busy = f"{sys.executable} -c 'import time; sum(range(3_000_000)); time.sleep(0.4)'"
    with DescendantCpu(interval=0.05) as cpu:
        subprocess.run(["/bin/sh", "-c", busy], check=True)
    assert cpu.processes >= 1 and cpu.seconds > 0.0


def test_render_prints_every_section_with_its_reference() -> None:
    results = {
        "machine": {
            "date": "today",
            "nproc": 2,
            "cpu": "cpu",
            "python": "3.11",
            "load_avg_1m_at_start": 1.0,
        },
        "seconds": 1.0,
        "sections": {
            "engine": {
                "subjects": {
                    "whist": {"decisions_per_cpu_s": 300},
                    "openspiel oh_hell": {"decisions_per_cpu_s": 400},
                },
                "ratios": {
                    "whist / oh_hell": {
                        "cpu_median": 0.75,
                        "cpu_min": 0.7,
                        "cpu_max": 0.8,
                        "wall": 0.7,
                    }
                },
            },
            "tournament": {
                "bot_start": {"cpu_s_median": 0.13, "wall_s_median": 0.14},
                "runs": [
                    {
                        "concurrency": 1,
                        "matches_per_min": 170.0,
                        "ratio_to_concurrency_1": 1.0,
                        "bot_share_of_cpu": 0.9,
                        "startup_share_of_machine": 0.74,
                    }
                ],
            },
            "ratings": {
                "bots": 10,
                "results": 100,
                "fit_s_median": 0.2,
                "baseline_s_median": 0.1,
                "baseline_with_intervals_s_median": 0.1,
                "ratio_to_baseline": 2.0,
                "ratio_to_baseline_with_intervals": 2.0,
                "blas_thread_per_core": {
                    "threads": 2,
                    "fit_s_median": 0.3,
                    "fit_s_best": 0.3,
                    "baseline_s_median": 0.1,
                    "ratio_to_baseline": 3.0,
                },
            },
        },
    }
    table = render(results)
    assert "engine whist: decisions/s" in table and "oh_hell 400" in table and "0.75×" in table
    assert "ratings fit 10 bots / 100 results" in table and "2.00×" in table
    (threads,) = [line for line in table.splitlines() if "with 2 BLAS threads" in line]
    assert "as shipped (one thread) 0.200" in threads and threads.endswith("1.50×")
    assert "tournament concurrency 1: matches/min" in table and "170.0" in table
    assert "their start-ups alone take 74% of the machine's capacity" in table


async def _bench_client_plays(servicer: RawPingPong, streams: int, tmp_path: Path) -> float:
    """Serve ``servicer`` to a bench client process of ``streams`` connections until the client
    exits; when it exited (``time.perf_counter``)."""
    server, address = await start_raw_server(servicer, streams)
    tokens = tmp_path / "tokens"
    tokens.write_text("".join(f"t{i}\n" for i in range(streams)))
    try:
        client = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchmarks.wire", "client", address,
            "--tokens", str(tokens), "--matches", "0",
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        await asyncio.wait_for(client.wait(), 60)
        return time.perf_counter()
    finally:
        await server.stop(0.5)


def test_a_failing_section_is_reported_in_one_line_and_loses_no_other_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(quick: bool, out: Path) -> dict[str, Any]:
        raise RuntimeError("the raw run did not finish\nsecond line")

    def tournament(quick: bool, out: Path) -> dict[str, Any]:
        run = {
            "concurrency": 1,
            "matches_per_min": 170.0,
            "ratio_to_concurrency_1": 1.0,
            "bot_share_of_cpu": 0.9,
            "startup_share_of_machine": 0.7,
        }
        return {"bot_start": {"cpu_s_median": 0.13}, "runs": [run]}

    monkeypatch.setitem(bench_main.RUNNERS, "engine", broken)
    monkeypatch.setitem(bench_main.RUNNERS, "tournament", tournament)
    code = bench_main.main(["--only", "engine,tournament", "--out", str(tmp_path)])
    assert code == 1
    err = capsys.readouterr().err
    assert "[bench] engine failed: RuntimeError: the raw run did not finish\n" in err
    assert "Traceback" not in err
    saved = json.loads((tmp_path / "latest.json").read_text())
    assert saved["sections"]["engine"]["error"] == "RuntimeError: the raw run did not finish"
    assert saved["sections"]["tournament"]["runs"][0]["matches_per_min"] == 170.0
    table = (tmp_path / "latest.txt").read_text()
    assert "engine: failed" in table and "tournament concurrency 1: matches/min" in table


@pytest.mark.slow
def test_raw_clock_stops_at_the_servers_last_answer(tmp_path: Path) -> None:
    """The reference's run ends when its last answer is read, not when the client process has
    exited (about 30 ms later), as the arena's run ends with its last match."""

    servicer = RawPingPong(sample_decisions(40), rounds=30, expected=2)
    exited = asyncio.run(_bench_client_plays(servicer, 2, tmp_path))
    assert len(servicer.stats.rtts) == 60  # both streams played all their rounds
    assert servicer.started < servicer.stats.finished < exited


@pytest.mark.slow
def test_the_raw_server_frames_its_decisions_as_a_match_the_sdk_bot_plays_to_its_end() -> None:
    """The SDK row's reference: the SDK's random bot plays the raw server's decisions as one
    match (MatchStart first, MatchEnd last) and stops because the match ended."""

    async def run() -> tuple[RawPingPong, Any]:
        servicer = RawPingPong(sample_decisions(40), rounds=25, expected=1, frames=match_frames())
        server, address = await start_raw_server(servicer, 1)
        bot = make_bot("random", 1)
        playing = asyncio.ensure_future(
            asyncio.to_thread(run_bot, bot, address, "t", matches=1, give_up_s=2)
        )
        # A bot that never sees its match end reconnects and plays on: stop the server, and it
        # gives up two seconds later.
        await asyncio.wait({playing}, timeout=20)
        await server.stop(0.5)
        return servicer, await playing

    servicer, played = asyncio.run(run())
    assert (played.matches, played.decisions, played.stopped) == (1, 25, "matches")
    assert len(servicer.stats.rtts) == 25
    # And the bench's own run of it: a process of `arena bot random` per connection.
    result = raw_run(1, 20, sdk_bot=True)
    assert result["decisions"] == 20 and result["decisions_per_s"] > 0
    rows = protocol_rows(
        {
            "summary": {
                "1": _PROTO,
                "8": _PROTO,
                "sdk_1": {
                    "arena_decisions_per_s": 1800.0,
                    "raw_decisions_per_s": 2000.0,
                    "ratio_median": 0.9,
                    "ratio_range": [0.85, 0.95],
                    "ratio_to_bench_client_raw": 0.6,
                },
            }
        }
    )
    (sdk,) = [r for r in rows if r[0] == "arena 1 connection, SDK bot: decisions/s"]
    assert sdk[1:] == ("1,800", "raw, same SDK bot 2,000", "0.90× (0.85–0.95)")
    (vs,) = [r for r in rows if r[0] == "arena 1 connection, SDK bot vs the bench client's raw"]
    assert vs[1:] == ("1,800", "raw grpc.aio 3", "0.60×")


@pytest.mark.parametrize("turns", [4, 1])
@pytest.mark.slow
def test_raw_streams_at_tables_take_turns_like_the_seats_of_a_match(
    tmp_path: Path, turns: int
) -> None:
    """The scale section's reference: with ``turns=4`` each table of four streams has one
    request out at a time, seat after seat, for as many rounds as its match had decisions;
    with 1, every stream asks at once, for as many as its connection's matches had."""

    servicer = RawPingPong(sample_decisions(40), [24, 22], 8, turns=turns, spans=True)
    asyncio.run(_bench_client_plays(servicer, 8, tmp_path))
    spans = servicer.stats.spans
    assert spans is not None
    if turns == 4:  # tables 0 and 1 play 24 and 22 rounds, dealt round the table
        assert len(spans) == 46
    else:  # streams 0, 2, 4, 6 play 24 rounds; 1, 3, 5, 7 play 22
        assert sorted(Counter(s[0] for s in spans).items()) == [
            (i, 24 if i % 2 == 0 else 22) for i in range(8)
        ]
    overlaps = 0
    for table, seats in ((0, [0, 1, 2, 3] * 6), (1, [0, 1, 2, 3] * 5 + [0, 1])):
        mine = sorted((s for s in spans if s[0] // 4 == table), key=lambda s: s[1])
        overlaps += sum(1 for a, b in itertools.pairwise(mine) if b[1] < a[2])
        if turns == 4:
            assert [s[0] % 4 for s in mine] == seats
    assert (overlaps == 0) == (turns == 4)
    rows = scale_rows(
        {
            "levels": [
                {
                    "connections": 8,
                    "decisions_per_s": 900.0,
                    "raw_tables": {"decisions_per_s": 1000.0, **_LATENCY},
                    "raw": {"decisions_per_s": 1500.0, **_LATENCY},
                    "ratio_to_raw_tables": 0.9,
                    "ratio_range": [0.85, 0.95],
                    "ratio_to_raw": 0.6,
                    "timeouts": 0,
                    "latency_median_ms": 3.0,
                    "latency_p99_ms": 9.0,
                    "server_rss_per_connection_kb": 50,
                    "server_threads_connected": 10,
                }
            ]
        }
    )
    assert rows[0][1:] == ("900", "raw, tables of 4 1,000", "0.90× (0.85–0.95)")
    assert rows[1][1:] == ("900", "raw grpc.aio 1,500", "0.60×")


_LATENCY = {"latency_median_ms": 2.0, "latency_p99_ms": 5.0}


@pytest.mark.slow
def test_a_scale_level_alternates_arena_and_raw_tables_and_reports_their_medians() -> None:
    level = scale_once(8, pairs=2)
    pairs = level["pairs"]
    assert len(pairs) == 2 and level["timeouts"] == 0
    ratios = sorted(p["arena"] / p["raw_tables"] for p in pairs)
    assert level["ratio_to_raw_tables"] == round((ratios[0] + ratios[1]) / 2, 3)
    assert level["ratio_range"] == [round(ratios[0], 3), round(ratios[1], 3)]
    assert level["decisions_per_s"] == round((pairs[0]["arena"] + pairs[1]["arena"]) / 2, 3)
    assert level["raw"]["connections"] == 8 and level["ratio_to_raw"] > 0


@pytest.mark.slow
def test_an_arena_run_counts_each_tables_decisions_for_the_raw_run_to_copy() -> None:
    played = trio.run(
        functools.partial(
            arena_run, 8, 1, options={"games_per_rubber": 1, "points_to_win": 5},
            seats_per_connection=1,
        )
    )  # fmt: skip
    per_table = played["decisions_per_table"]
    assert len(per_table) == 2 and sum(per_table) == played["decisions"]
    assert all(d > 0 and d % 52 == 0 for d in per_table)  # whole whist deals of 52 plays


@pytest.mark.parametrize("seat_per_connection", [True, False])
def test_sampled_requests_carry_what_their_connection_may_see(seat_per_connection: bool) -> None:
    """The scale section's raw messages are the arena's for a connection per seat: each carries
    the events its seat may see since that seat's previous request, in order, so another
    seat's deal never rides in it; one connection holding every seat gets every event once."""
    seen: dict[int, list[int]] = {}
    foreign_deals = 0
    for data in sample_decisions(60, seat_per_connection=seat_per_connection):
        d = codec.bytes_to_proto(data).decision
        conn = d.seat if seat_per_connection else 0
        seen.setdefault(conn, []).extend(e.seq for e in d.events)
        foreign_deals += sum(
            1 for e in d.events if e.kind == "deal" and json.loads(e.json)["seat"] != d.seat
        )
    for seqs in seen.values():
        assert seqs == sorted(set(seqs))  # each event once, oldest first
    assert len(seen) == (4 if seat_per_connection else 1)
    assert (foreign_deals == 0) == seat_per_connection


@pytest.mark.parametrize("seat_per_connection", [True, False])
def test_bare_requests_are_the_arenas_without_their_observation(seat_per_connection: bool) -> None:
    """``ceiling --bare`` weighs requests without observations: they must be the referee's
    own requests minus that one field, byte for byte, and so shorter."""
    full = sample_decisions(60, seat_per_connection=seat_per_connection)
    bare = sample_decisions(60, seat_per_connection=seat_per_connection, observation=False)
    assert len(full) == len(bare) == 60
    for f, b in zip(full, bare, strict=True):
        expected = codec.bytes_to_proto(f)
        assert expected.decision.HasField("observation")
        expected.decision.ClearField("observation")
        got = codec.bytes_to_proto(b)
        assert not got.decision.HasField("observation")
        assert got == expected and len(got.decision.legal_actions) > 0
        assert b == expected.SerializeToString() and len(b) < len(f)


@pytest.mark.slow
def test_wakeup_cost_times_each_mode_over_match_boundaries() -> None:  # and the rows render
    result = wakeup_cost(decisions=700, rounds=2, pause_s=0.0001)
    assert set(result) == {"back_to_back", "busy_wait", "asleep", "pause_ms", "matches"}
    assert result["matches"] >= 2  # it went on past a match's end
    assert all(result[k] > 0 for k in ("back_to_back", "busy_wait", "asleep"))
    think = {
        "think_ms": 1.0,
        "arena_decisions_per_s": 630.0,
        "raw_decisions_per_s": 690.0,
        "ratio_median": 0.92,
        "ratio_range": [0.9, 0.93],
    }
    rows = protocol_rows({"summary": {"1": _PROTO, "8": _PROTO, "wakeup": result, "think": think}})
    assert any(r[0].startswith("referee work per decision") for r in rows)
    (busy,) = [r for r in rows if r[0] == "arena 1 connection, bot busy 1 ms: decisions/s"]
    assert busy[1:] == ("630", "raw grpc.aio 690", "0.92× (0.90–0.93)")


_PROTO = {
    "arena_decisions_per_s": 2.0,
    "raw_decisions_per_s": 3.0,
    "ratio_median": 0.66,
    "ratio_range": [0.6, 0.7],
    "arena_latency_median_ms": 0.3,
    "arena_latency_p99_ms": 0.4,
    "raw_latency_median_ms": 0.2,
    "raw_latency_p99_ms": 0.3,
    "arena_cycle_ms": 0.4,
    "raw_cycle_ms": 0.3,
}


@pytest.mark.slow
def test_a_thinking_client_spends_its_think_time_inside_every_round_trip() -> None:
    # A lower bound only: the client is busy at least 5 ms before each answer.
    result = raw_run(1, 20, think_ms=5.0)
    assert result["decisions"] == 20
    assert result["latency_median_ms"] >= 5.0 and result["client"]["decisions"] == 20


@pytest.mark.slow
def test_the_ceiling_variants_each_do_their_share_of_the_referees_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done: list[str] = []
    referee = ceiling_bench.Structured.referee

    def counted(self: ceiling_bench.Structured) -> None:
        done.append(self.work)
        referee(self)

    monkeypatch.setattr(ceiling_bench.Structured, "referee", counted)
    result = ceiling_bench.ceiling(runs=1, connections=1, rounds=50, bare=True)
    variants = result["variants"]
    assert list(variants) == [
        "raw", "structured", "engine", "engine+encode", "raw-bare", "engine+encode-bare"
    ]  # fmt: skip
    assert variants["raw"]["ratio_to_raw"] == variants["raw-bare"]["ratio_to_raw"] == 1.0
    assert all(v["decisions_per_s"] > 0 for v in variants.values())
    # Every answer but the last runs the work, only in the variants that do it.
    assert sorted(set(done)) == ["engine", "engine+encode", "engine+encode-bare"]
    assert done.count("engine") == done.count("engine+encode") == 49
    assert done.count("engine+encode-bare") == 49
    del variants["raw-bare"], variants["engine+encode-bare"]  # make bench runs the four
    # make bench prints every variant but the reference, each against the same raw run.
    rows = ceiling_rows({"1": result})
    raw = f"raw grpc.aio {result['variants']['raw']['decisions_per_s']:,}"
    assert [r[0] for r in rows] == [
        "ceiling 1 connection: raw in the arena's stream structure",
        "ceiling 1 connection: + the engine's part of a decision",
        "ceiling 1 connection: + the request's encoding",
    ]
    assert all(r[2] == raw for r in rows)
    assert rows[2][3] == f"{result['variants']['engine+encode']['ratio_to_raw']:.2f}×"
    section = {"summary": {"1": _PROTO, "8": _PROTO}, "ceiling": {"1": result}}
    assert protocol_rows(section)[-3:] == rows


def test_the_bare_ceiling_is_judged_against_raw_with_the_same_bare_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rates = {"raw": [1000.0, 1200.0, 1100.0], "raw-bare": [2000.0, 2200.0, 2100.0]}
    calls: list[tuple[str, int, int]] = []

    async def fake_run(variant: str, connections: int, rounds: int) -> float:
        calls.append((variant, connections, rounds))
        return rates.get(variant, [900.0] * 3)[sum(c[0] == variant for c in calls) - 1]

    monkeypatch.setattr(ceiling_bench, "_run", fake_run)
    result = ceiling_bench.ceiling(runs=3, connections=8, rounds=400, bare=True)["variants"]
    assert result["engine+encode"]["ratio_to_raw"] == round(900 / 1100, 3)
    assert result["engine+encode-bare"]["ratio_to_raw"] == round(900 / 2100, 3)
    assert result["raw-bare"]["runs"] == [2000, 2200, 2100]
    # Alternating: each round runs every variant once, each stream 2 × rounds / connections.
    assert [c[0] for c in calls[:6]] == list(ceiling_bench.VARIANTS + ceiling_bench.BARE_VARIANTS)
    assert len(calls) == 18 and {c[1:] for c in calls} == {(8, 100)}


@pytest.mark.slow
def test_the_probe_compares_both_encoders_and_puts_everything_back() -> None:
    read, kick, accel = codec.bot_bytes_to_plain, service._StreamWriter.kick, wireformat.ACCEL
    result = probe_bench.probe(pairs=1)
    assert set(result) == {"c", "python"}
    for r in result.values():
        assert r["critical_us"] > 0 and r["cpu_us"] > 0 and r["rate"] > 0 and r["ratio"] > 0
    assert codec.bot_bytes_to_plain is read and service._StreamWriter.kick is kick
    assert wireformat.ACCEL is accel


def test_clone_costs_time_every_game_and_the_rows_compare_with_oh_hell() -> None:
    result = clone_costs(clones=5, rounds=1)
    us = result["us_per_clone"]
    assert {label for label, *_ in OUR_GAMES} <= set(us)
    assert all(v > 0 for v in us.values())
    assert ("openspiel oh_hell" in us) is (openspiel_available() is None)
    rows = engine_rows(
        {"subjects": {}, "clone": {"us_per_clone": {"whist": 25.0, "openspiel oh_hell": 1.75}}}
    )
    assert rows == [("engine whist: µs per clone()", "25.0", "oh_hell 1.8", "0.07×")]


@pytest.mark.parametrize(
    ("module", "option"),
    [
        ("probe", "--pairs"),
        ("ceiling", "--runs"),
        ("native", "--pairs"),
        ("native", "--connections"),
        ("scale_bench", "--pairs"),
    ],
)
@pytest.mark.slow
def test_the_bench_tools_refuse_counts_below_one_in_one_line(module: str, option: str) -> None:
    # Zero runs used to end in a statistics error's traceback after the work was done.
    proc = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", option, "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1] == (
        f"python -m benchmarks.{module}: error: argument {option}: "
        "expected a whole number of at least 1; got '0'"
    )
