"""The transport section (benchmarks/transport_bench.py): the in-process run plays the
tournament's own schedule, the decision rates stand beside the engine's loop, the rows name the
targets, and (slow) a whole small run over stdio, gRPC and in process."""

from __future__ import annotations

import pytest

from arena.tournament.schedule import build_schedule
from benchmarks import transport_bench as tb
from benchmarks.report import render
from engine import get_game


def test_in_process_plays_the_tournaments_matches_on_their_seeds() -> None:
    plan = tb.schedule(4)
    game = get_game("whist")
    names = [b["name"] for b in tb.BOTS]
    # A tournament's defaults: a round robin of duplicate deals (each deal in every rotation).
    built = build_schedule(
        game, game.configure(4, tb.OPTIONS), names, "round_robin", 4, True, tb.SEED
    )
    assert [(p.match_id, p.seed, p.seats) for p in built] == plan
    assert len(plan) > len({seed for _, seed, _ in plan}) > 0
    run = tb.in_process_run(4)
    assert run["matches"] == len(plan) and run["decisions_per_match"] > 50
    assert run["matches_per_min"] > 0 and run["cpu_s"] > 0


def test_decision_rates_put_in_process_play_beside_the_engines_playouts() -> None:
    rates = tb.decision_rates(rounds=1, slice_s=0.05)
    for key in ("in_process", "in_process_reading", "engine"):
        assert rates[key]["decisions"] > 0 and rates[key]["decisions_per_cpu_s"] > 0
    blind, reading = rates["in_process_share"], rates["in_process_reading_share"]
    assert 0 < reading["median"] < blind["median"] < 1  # the observation is what it costs
    assert blind["target"] == 0.25 and blind["met"] == (blind["median"] >= 0.25)


def test_cpu_per_match_splits_arena_and_bots() -> None:
    runs = [
        {"matches": 10, "wall_s": 2.0, "server_cpu_s": 1.0, "bot_processes_cpu_s": 0.5},
        {"matches": 10, "wall_s": 4.0, "server_cpu_s": 1.2, "bot_processes_cpu_s": 0.7},
    ]
    assert tb.cpu_per_match(runs) == {
        "arena": 110.0,
        "bots": 60.0,
        "total": 170.0,
        "arena_busy": 0.4,
    }
    assert tb.cpu_per_match([{"matches": 4, "wall_s": 1.0, "cpu_s": 0.2}])["arena"] == 50.0


SECTION = {
    "config": {"matches": 144, "concurrency": 2},
    "matches_per_min": {"grpc": 500.0, "stdio": 600.0, "in_process": 6000.0},
    "stdio_over_grpc": {"median": 1.2, "target": 2.0, "met": False},
    "in_process_over_grpc": 12.0,
    "cpu_ms_per_match": {
        "grpc": {"arena": 48.0, "bots": 100.0, "total": 148.0},
        "stdio": {"arena": 35.0, "bots": 20.0, "total": 55.0},
    },
    "grpc_cpu_over_stdio_cpu": 2.69,
    "decision_rate": {
        "engine": {"decisions_per_cpu_s": 400_000},
        "in_process": {"decisions_per_cpu_s": 170_000},
        "in_process_reading": {"decisions_per_cpu_s": 50_000},
        "in_process_share": {"median": 0.425, "target": 0.25, "met": True},
        "in_process_reading_share": {"median": 0.125, "target": 0.25, "met": False},
    },
    "profile": {
        "arena": {"interpreter_busy": 0.4, "by_part": {"arena protocol (message encoding)": 0.2}},
        "bots": {
            "top_self": [{"function": "JSONDecoder.raw_decode (json/decoder.py:1)", "share": 0.1}]
        },
    },
}


def test_the_rows_name_each_target_and_whether_it_was_met() -> None:
    results = {
        "machine": {"date": "d", "nproc": 2, "cpu": "c", "python": "3", "load_avg_1m_at_start": 1},
        "seconds": 1.0,
        "sections": {"transport": SECTION},
    }
    table = render(results)
    (stdio,) = [line for line in table.splitlines() if "transport stdio" in line]
    assert "gRPC 500.0" in stdio and "1.20× (target 2×: missed)" in stdio
    (blind,) = [line for line in table.splitlines() if "RandomBot: decisions/s" in line]
    assert "engine random playouts 400,000" in blind and "42% (target 25%: met)" in blind
    assert "35.0 + 20.0" in table and "2.69×" in table
    assert "stdio round robin, arena process" in table and "JSONDecoder.raw_decode 10%" in table


@pytest.mark.slow
def test_a_small_run_plays_every_transport_without_a_fault() -> None:
    result = tb.run_transports(4, repeats=1, rounds=1, slice_s=0.05)
    assert result["faults_and_forfeits"] == 0
    per_min = result["matches_per_min"]
    assert per_min["grpc"] > 0 and per_min["stdio"] > 0 and per_min["in_process"] > 0
    stdio, grpc = result["runs"]["stdio"][0], result["runs"]["grpc"][0]
    assert stdio["matches"] == grpc["matches"] == result["config"]["matches"]
    assert result["stdio_over_grpc"]["per_round"] == [
        round(stdio["matches_per_min"] / grpc["matches_per_min"], 3)
    ]
    assert result["cpu_ms_per_match"]["stdio"]["arena"] > 0
