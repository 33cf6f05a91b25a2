"""Section 3: tournament throughput — matches per minute of a 4-bot whist round-robin of random
bots over gRPC (``arena.tournament``'s own API: config, schedule, store, one process per seat),
at concurrency 1, 2, 4 and 8.

The reference, measured in the same run, is concurrency 1: the ratio is the speed-up. Beside it,
where the CPU went (this process — server, referee, store — versus the bot processes), and what
starting one bot process costs, timed here: with one process per seat that is what bounds it.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, DescendantCpu, child_env

#: The bots: four copies of the random reference bot under different names.
BOTS = [{"name": f"random{i}", "command": "arena bot random"} for i in range(1, 5)]
#: A short rubber keeps the matches small: one game to 5 points (a deal or two).
OPTIONS = {"games_per_rubber": 1, "points_to_win": 5}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tournament_run(
    concurrency: int,
    matches_per_pairing: int = 2,
    restart: str = "per_match",
    bots: list[dict[str, str]] | None = None,
    cpu_interval: float = 0.1,
    count_decisions: bool = True,
) -> dict[str, Any]:
    """One full round-robin at ``concurrency``; matches per minute and where the CPU went.
    ``restart``: ``per_match`` (a process per seat of every match, the reference) or
    ``on_failure`` (long-lived processes, arena/pool.py); ``bots``: the entries (BOTS);
    ``cpu_interval``: seconds between samples of the bots' CPU (each reads all of /proc, in
    this process, which runs the arena); ``count_decisions``: read every record afterwards for
    ``decisions_per_match`` (a profiled run leaves it out)."""
    from arena.tournament.config import load_config
    from arena.tournament.progress import Feedback
    from arena.tournament.runner import run_tournament

    with tempfile.TemporaryDirectory(prefix="arena-bench-t-") as tmp:
        config = load_config(
            None,
            {
                "name": f"bench-c{concurrency}",
                "game": "whist",
                "options": OPTIONS,
                "bots": BOTS if bots is None else bots,
                "matches_per_pairing": matches_per_pairing,
                "concurrency": concurrency,
                "restart": restart,
                "seed": 7,
                "output": str(Path(tmp) / "out"),
            },
        )
        c0, w0 = time.process_time(), time.perf_counter()
        with DescendantCpu(cpu_interval) as bots:
            standings = run_tournament(config, Feedback())
        wall = time.perf_counter() - w0
        own_cpu = time.process_time() - c0
        bots_cpu = bots.seconds
        decisions = _decisions(Path(tmp) / "out" / "records") if count_decisions else 0
        logs = len(list((Path(tmp) / "out" / "logs").iterdir()))
    return {
        "concurrency": concurrency,
        "restart": restart,
        "decisions_per_match": round(decisions / standings.done, 1)
        if standings.done and count_decisions
        else None,
        "matches": standings.done,
        "wall_s": round(wall, 2),
        "matches_per_min": round(standings.done / wall * 60, 1),
        "faults": sum(standings.faults.values()),
        "forfeits": sum(standings.forfeits.values()),
        "server_cpu_s": round(own_cpu, 2),
        "bot_processes_cpu_s": round(bots_cpu, 2),
        # One log per process started.
        "bot_processes": logs,
        "processes_seen": bots.processes,
    }


def _decisions(records: Path) -> int:
    """Decisions asked in every record of a run."""
    from arena.records.format import read_record

    return sum(
        sum(1 for e in read_record(p).entries if e.get("type") == "decision")
        for p in records.glob("*.jsonl.gz")
    )


def persistent_runs(matches_per_pairing: int, concurrency: int) -> dict[str, Any]:
    """The same round-robin with a process per seat of every match, then on long-lived
    processes: the speed-up of keeping bots alive, measured side by side."""
    fresh = tournament_run(concurrency, matches_per_pairing, "per_match")
    kept = tournament_run(concurrency, matches_per_pairing, "on_failure")
    base = fresh["matches_per_min"]
    return {
        "matches_per_pairing": matches_per_pairing,
        "per_match": fresh,
        "persistent": kept,
        "ratio": round(kept["matches_per_min"] / base, 2) if base else None,
    }


def bot_start_cost(samples: int = 4) -> dict[str, Any]:
    """Wall and CPU seconds for one bot process of the tournament (``arena bot random``, as
    BOTS launch it) from start to exit, with no server to find (``--give-up 0``): the fixed cost
    of every seat of every match."""
    arena = str(Path(sys.executable).parent / "arena")
    walls, cpus = [], []
    with tempfile.TemporaryDirectory(prefix="bot-start-") as tmp:
        argv = [arena, "bot", "random", "--server", f"unix:{tmp}/none.sock", "--token", "t"]
        argv += ["--give-up", "0"]
        for _ in range(samples):
            k0, w0 = _children_cpu(), time.perf_counter()
            done = subprocess.run(
                argv, env=child_env(), cwd=ROOT, stderr=subprocess.PIPE, text=True, check=False
            )
            if "no arena server answered" not in done.stderr:  # the one outcome expected
                raise RuntimeError(f"bot start-up run failed: {done.stderr.strip()[-300:]}")
            walls.append(time.perf_counter() - w0)
            cpus.append(_children_cpu() - k0)
    return {
        "wall_s_median": round(statistics.median(walls), 3),
        "cpu_s_median": round(statistics.median(cpus), 3),
    }


def run_tournaments(
    levels: tuple[int, ...] = (1, 2, 4, 8), persistent_matches: int = 30
) -> dict[str, Any]:
    """Every concurrency level; the ratio is matches per minute over concurrency 1's. Then the
    persistent-process comparison at one match per core."""
    start = bot_start_cost()
    runs = [tournament_run(c) for c in levels]
    base = runs[0]["matches_per_min"]
    for r in runs:
        r["ratio_to_concurrency_1"] = round(r["matches_per_min"] / base, 2) if base else None
        cpu = r["server_cpu_s"] + r["bot_processes_cpu_s"]
        r["bot_share_of_cpu"] = round(r["bot_processes_cpu_s"] / cpu, 2) if cpu else None
        # Start-ups against the machine's whole capacity over the run: the sampled bot CPU
        # misses what a process spends after its last sample, which is much of a short life.
        capacity = r["wall_s"] * (os.cpu_count() or 1)
        r["startup_share_of_machine"] = (
            round(r["bot_processes"] * start["cpu_s_median"] / capacity, 2) if capacity else None
        )
    return {
        "config": {"game": "whist", "options": OPTIONS, "bots": len(BOTS), "sandbox": False},
        "bot_start": start,
        "runs": runs,
        "persistent": persistent_runs(persistent_matches, os.cpu_count() or 2),
    }


def server_ceiling(results: dict[str, Any]) -> dict[str, Any] | None:
    """What the server's own decision rate (the protocol section, 8 connections: two whist
    tables) allows for matches of the persistent run's length, and the share of it reached;
    ``None`` unless both sections ran."""
    sections = results.get("sections", {})
    kept = sections.get("tournament", {}).get("persistent", {}).get("persistent")
    rate = sections.get("protocol", {}).get("summary", {}).get("8", {}).get("arena_decisions_per_s")
    if not kept or not rate or not kept.get("decisions_per_match"):
        return None
    ceiling = rate / kept["decisions_per_match"] * 60
    return {
        "decisions_per_s": rate,
        "decisions_per_match": kept["decisions_per_match"],
        "ceiling_matches_per_min": round(ceiling, 1),
        "share": round(kept["matches_per_min"] / ceiling, 3),
    }
