"""``python -m benchmarks`` (``make bench``): every section, one table, ``out/bench/latest.json``.

python -m benchmarks                      # everything (a few minutes)
python -m benchmarks --only engine,ratings
python -m benchmarks --quick              # fewer rounds and levels: a smoke run
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from arena.logging import configure
from benchmarks.common import OUT_DIR, load_now, machine

SECTIONS = (
    "engine",
    "search",
    "solver",
    "protocol",
    "tournament",
    "transport",
    "cluster",
    "scale",
    "ratings",
)


def _engine(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.engine_bench import clone_costs, profile_whist, run_engine

    result = run_engine(rounds=2 if quick else 6, slice_s=0.15 if quick else 0.25)
    result["clone"] = clone_costs(clones=100 if quick else 300, rounds=2 if quick else 5)
    profile = profile_whist(1.0 if quick else 3.0)
    text = profile.pop("text", "")
    if text:
        (out / "profile-engine-whist.txt").write_text(text)
        profile["file"] = str(out / "profile-engine-whist.txt")
    result["profile"] = profile
    return result


def _search(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.search_bench import run_search

    return run_search(
        seeds=2 if quick else 4, iterations=50 if quick else 200, rounds=1 if quick else 3
    )


def _solver(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.solver_bench import run_solver

    # A full whist deal takes the C search from a few to over a hundred million nodes (about a
    # million a second): the budget keeps the section to a minute or two.
    return run_solver(deals=2 if quick else 4, max_nodes=2_000_000 if quick else 20_000_000)


def _protocol(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.profiling import profiled
    from benchmarks.protocol_bench import arena_run, run_protocol

    # Five alternating pairs: on this shared 2-core machine single ratios move by ±0.05.
    result = run_protocol(repeats=1 if quick else 5, matches_1=2 if quick else 3)
    # Profiles come from separate runs: sampling must not disturb the measured ones.
    profiles = {}
    for n, k in ((1, 2 if quick else 6), (8, 1 if quick else 2)):
        with profiled(out / f"profile-arena-{n}.txt") as prof:
            trio.run(functools.partial(arena_run, n, k))
        profiles[f"{n}"] = prof
    result["profile"] = profiles
    result["native"] = _native(quick)
    result["ceiling"] = _ceiling(quick)
    return result


def _ceiling(quick: bool) -> dict[str, Any]:
    """What the referee as designed can reach: the raw server plus the engine's part of each
    decision (and its encoding), against the plain raw server (benchmarks/ceiling.py)."""
    from benchmarks.ceiling import ceiling

    # Five runs each: with three, one slow reference run moved a row by 0.1.
    return {f"{n}": ceiling(1 if quick else 5, n) for n in (1, 8)}


def _native(quick: bool) -> dict[str, Any]:
    """The server's CPU per decision by thread and library (perf), arena against raw."""
    from benchmarks.native import PerfUnavailable, native

    try:
        return {f"{n}": native(1 if quick else 3, n) for n in (1, 8)}
    except PerfUnavailable as err:
        return {"missing": str(err)}


def _tournament(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.tournament_bench import run_tournaments

    return run_tournaments((1, 4) if quick else (1, 2, 4, 8), 10 if quick else 30)


def _transport(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.transport_bench import profile_stdio, run_transports

    result = run_transports(8, repeats=1, rounds=2, slice_s=0.15) if quick else run_transports()
    # Profiles from a separate run: sampling must not disturb the measured ones.
    result["profile"] = profile_stdio(out.resolve(), 4 if quick else 24)
    return result


def _cluster(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.cluster_bench import run_cluster

    # 32 matches: the steady window (from the 8th record on) then holds about 24.
    return run_cluster(12 if quick else 32, profile=out.resolve() / "profile-coordinator.txt")


def _scale(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.scale_bench import run_scale

    if quick:
        return run_scale((40, 100), profile_at=40, out=out.resolve(), pairs=1)
    # Three alternating pairs per level: a level's runs last 0.5-3 s, and one pair's ratio
    # moved by 0.2 from run to run.
    return run_scale((100, 200, 500), profile_at=200, out=out.resolve(), pairs=3)


def _ratings(quick: bool, out: Path) -> dict[str, Any]:
    from benchmarks.ratings_bench import run_ratings_both

    return run_ratings_both(n_results=20_000 if quick else 100_000, repeats=1 if quick else 3)


RUNNERS: dict[str, Callable[[bool, Path], dict[str, Any]]] = {
    "engine": _engine,
    "search": _search,
    "solver": _solver,
    "protocol": _protocol,
    "tournament": _tournament,
    "transport": _transport,
    "cluster": _cluster,
    "scale": _scale,
    "ratings": _ratings,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--only", default="", help=f"comma-separated sections ({', '.join(SECTIONS)})"
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a smoke run")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output directory")
    args = parser.parse_args(argv)
    chosen = [s for s in args.only.split(",") if s] or list(SECTIONS)
    unknown = [s for s in chosen if s not in RUNNERS]
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")
    configure("error")
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"machine": machine(), "quick": args.quick, "sections": {}}
    start = time.perf_counter()
    failed: list[str] = []
    for name in chosen:
        print(f"[bench] {name} …", file=sys.stderr, flush=True)
        t0, load0 = time.perf_counter(), load_now()
        try:
            section = RUNNERS[name](args.quick, args.out)
        except Exception as err:  # the other sections' figures must not be lost with it
            why = f"{type(err).__name__}: {err}".splitlines()[0]
            print(f"[bench] {name} failed: {why}", file=sys.stderr, flush=True)
            failed.append(name)
            section = {"error": why}
        section["seconds"] = round(time.perf_counter() - t0, 1)
        section["load_avg_1m"] = [load0, load_now()]
        results["sections"][name] = section
    results["seconds"] = round(time.perf_counter() - start, 1)
    from benchmarks.tournament_bench import server_ceiling

    if (ceiling := server_ceiling(results)) is not None:
        results["sections"]["tournament"]["server_ceiling"] = ceiling
    from benchmarks.report import render

    table = render(results)
    print(table)
    path = args.out / "latest.json"
    path.write_text(json.dumps(results, indent=1) + "\n")
    (args.out / "latest.txt").write_text(table + "\n")
    print(f"\nwritten: {path} (and latest.txt, profiles in {args.out})")
    if failed:
        print(f"[bench] failed: {', '.join(failed)} (see above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
