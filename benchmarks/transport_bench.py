"""Section: transports — the same 4-bot whist round robin of random bots over stdio, over gRPC
(long-lived processes both: ``restart = "on_failure"``) and in process (:mod:`engine.local`),
in matches per minute; and the in-process decision rate against the engine's own random-playout
rate (:func:`benchmarks.engine_bench.our_slice`, the engine section's one definition).

The three runs play the same schedule: the tournament config's matches, each with the seed the
tournament deals it from (:func:`arena.tournament.runner.plan_tournament`), records written by
all three. The runs alternate (gRPC, stdio, in process, then again) so that a change in the
machine's load hits each alike; each ratio is taken per round and the median reported.

Targets (issue 43): stdio at least 2× gRPC; in process at least 25 % of the engine's rate.

``python -m benchmarks.transport_bench [--quick]`` runs this section alone and prints its JSON.
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, DescendantCpu, descends, proc_table
from benchmarks.engine_bench import Tally, our_slice
from benchmarks.tournament_bench import BOTS, OPTIONS, tournament_run

#: The stdio reference bot (standard library only), four copies as BOTS has four.
STDIO_COMMAND = shlex.join(
    [sys.executable, str(ROOT / "reference_bots" / "stdio" / "random_bot.py")]
)
STDIO_BOTS = [{"name": b["name"], "protocol": "stdio", "command": STDIO_COMMAND} for b in BOTS]
#: Targets from issue 43.
TARGET_STDIO_OVER_GRPC = 2.0
TARGET_IN_PROCESS_SHARE = 0.25
#: The tournament's seed (tournament_bench's).
SEED = 7
#: Matches per pairing of the unmeasured warm-up runs (the fewest a schedule takes).
WARM_UP_MATCHES_PER_PAIRING = 4


def _config(matches_per_pairing: int, concurrency: int, out: Path) -> Any:
    from arena.tournament.config import load_config

    return load_config(
        None,
        {
            "name": "bench-transport",
            "game": "whist",
            "options": OPTIONS,
            "bots": BOTS,
            "matches_per_pairing": matches_per_pairing,
            "concurrency": concurrency,
            "restart": "on_failure",
            "seed": SEED,
            "output": str(out),
        },
    )


def schedule(matches_per_pairing: int) -> list[tuple[str, int, tuple[str, ...]]]:
    """The tournament's matches: (match id, engine seed, bot per seat), in order."""
    from arena.tournament.runner import plan_tournament

    with tempfile.TemporaryDirectory(prefix="arena-bench-x-") as tmp:
        plans = plan_tournament(_config(matches_per_pairing, 1, Path(tmp)))
    return [(p.match_id, p.seed, p.seats) for p in plans]


def _random_bots() -> dict[str, Any]:
    """An SDK RandomBot per tournament bot, named as the tournament names them."""
    from cardarena.bot import RandomBot

    bots: dict[str, Any] = {}
    for b in BOTS:
        bot = bots[b["name"]] = RandomBot()
        bot.name = b["name"]
    return bots


class _Reading:
    """Random bots whose ``choose`` is their own (it reads nothing more than RandomBot's), so
    in-process play builds their observations: the price a bot that reads them pays."""

    @staticmethod
    def bots() -> list[Any]:
        from cardarena.bot import RandomBot

        class ReadingRandomBot(RandomBot):
            def choose(self, game: str, observation: Any, legal: Any) -> int:
                return self.rng.randrange(len(legal))

        return [ReadingRandomBot() for _ in BOTS]


def in_process_run(matches_per_pairing: int, records: bool = True) -> dict[str, Any]:
    """The round robin's matches played by :func:`engine.local.play` in this process, one SDK
    RandomBot per tournament bot, each match on its tournament seed; records written (as the
    tournaments write theirs) unless ``records`` is false."""
    from engine.local import play

    plan = schedule(matches_per_pairing)
    bots = _random_bots()
    decisions = 0
    with tempfile.TemporaryDirectory(prefix="arena-bench-l-") as tmp:
        c0, w0 = time.process_time(), time.perf_counter()
        for match_id, seed, seats in plan:
            table = [bots[name] for name in seats]
            out = Path(tmp) if records else None
            played = play("whist", table, seed=seed, options=OPTIONS, out=out, match_id=match_id)
            decisions += played[0].decisions
        wall = time.perf_counter() - w0
        cpu = time.process_time() - c0
    return {
        "matches": len(plan),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "matches_per_min": round(len(plan) / wall * 60, 1),
        "decisions_per_match": round(decisions / len(plan), 1),
    }


def local_slice(reading: bool = False, seed0: int = 0) -> Any:
    """Slices of in-process play (:func:`engine.local.play`, four SDK random bots, no records):
    the same shape as :func:`~benchmarks.engine_bench.our_slice`, (decisions, matches).
    ``reading``: bots whose ``choose`` is their own, so each is given its observation."""
    from engine.local import play

    table = _Reading.bots() if reading else list(_random_bots().values())
    state = {"seed": seed0}

    def run(budget: float) -> tuple[int, int]:
        start, decisions, games = time.process_time(), 0, 0
        while time.process_time() - start < budget:
            for match in play("whist", table, seed=state["seed"], deals=4, options=OPTIONS):
                decisions += match.decisions
            state["seed"] += 1
            games += 4
        return decisions, games

    return run


def decision_rates(rounds: int, slice_s: float) -> dict[str, Any]:
    """In-process play against the engine's random playouts (engine_bench's loop), same game
    and options, slices interleaved; decisions per CPU second and the per-round ratio. Two
    in-process subjects: the SDK's RandomBot (given no observation: it reads none) and the same
    draw in a ``choose`` of the bot's own (given its observation, as any other bot)."""
    subjects = {
        "in_process": (Tally("in process, RandomBot"), local_slice()),
        "in_process_reading": (Tally("in process, a bot given observations"), local_slice(True)),
        "engine": (Tally("engine random playouts"), our_slice("whist", 4, dict(OPTIONS))),
    }
    for _tally, run in subjects.values():  # warm-up
        run(0.05)
    for _ in range(rounds):
        for tally, run in subjects.values():
            c0, w0 = time.process_time(), time.perf_counter()
            decisions, games = run(slice_s)
            tally.add(decisions, games, time.process_time() - c0, time.perf_counter() - w0)
    engine = subjects["engine"][0]
    out: dict[str, Any] = {key: tally.to_dict() for key, (tally, _run) in subjects.items()}
    for key in ("in_process", "in_process_reading"):
        per_round = [
            a / b for a, b in zip(subjects[key][0].rounds, engine.rounds, strict=True) if b > 0
        ]
        share = statistics.median(per_round)
        out[f"{key}_share"] = {
            "median": round(share, 3),
            "range": [round(min(per_round), 3), round(max(per_round), 3)],
            "target": TARGET_IN_PROCESS_SHARE,
            "met": share >= TARGET_IN_PROCESS_SHARE,
        }
    return out


def _tournament(
    bots: list[dict[str, str]], matches_per_pairing: int, concurrency: int, count: bool = True
) -> Any:
    # The bots' CPU sampled four times a second, not ten: each pass over /proc holds the GIL of
    # the arena's process, which the stdio run waits on (long-lived bots lose little to it).
    return tournament_run(
        concurrency,
        matches_per_pairing,
        "on_failure",
        bots=bots,
        cpu_interval=0.25,
        count_decisions=count,
    )


def run_transports(
    matches_per_pairing: int = 24,
    concurrency: int = 2,
    repeats: int = 2,
    rounds: int = 4,
    slice_s: float = 0.3,
) -> dict[str, Any]:
    """``repeats`` alternating rounds of the three runs, then the decision rates."""
    runs: dict[str, list[dict[str, Any]]] = {"grpc": [], "stdio": [], "in_process": []}
    # Warm-up, not measured: the first tournament of a process imports what its standings need
    # (the ratings fit: numpy, scipy), a second or more that must not count against whichever
    # transport runs first.
    _tournament(BOTS, WARM_UP_MATCHES_PER_PAIRING, concurrency, count=False)
    _tournament(STDIO_BOTS, WARM_UP_MATCHES_PER_PAIRING, concurrency, count=False)
    in_process_run(WARM_UP_MATCHES_PER_PAIRING)
    for _ in range(repeats):
        runs["grpc"].append(_tournament(BOTS, matches_per_pairing, concurrency))
        runs["stdio"].append(_tournament(STDIO_BOTS, matches_per_pairing, concurrency))
        runs["in_process"].append(in_process_run(matches_per_pairing))
    per_round = [
        s["matches_per_min"] / g["matches_per_min"]
        for g, s in zip(runs["grpc"], runs["stdio"], strict=True)
        if g["matches_per_min"]
    ]
    ratio = statistics.median(per_round) if per_round else 0.0

    def best(name: str) -> float:
        return float(statistics.median(r["matches_per_min"] for r in runs[name]))

    faults = sum(r["faults"] + r["forfeits"] for name in ("grpc", "stdio") for r in runs[name])
    cpu = {name: cpu_per_match(runs[name]) for name in runs}
    return {
        "config": {
            "game": "whist",
            "options": OPTIONS,
            "bots": len(BOTS),
            "matches": runs["in_process"][0]["matches"],
            "concurrency": concurrency,
            "restart": "on_failure",
            "sandbox": False,
            "stdio_bot": "reference_bots/stdio/random_bot.py",
            "grpc_bot": "arena bot random (the SDK's RandomBot)",
            "in_process_bot": "cardarena.RandomBot via engine.local.play",
        },
        "matches_per_min": {name: best(name) for name in runs},
        "stdio_over_grpc": {
            "median": round(ratio, 3),
            "per_round": [round(x, 3) for x in per_round],
            "target": TARGET_STDIO_OVER_GRPC,
            "met": ratio >= TARGET_STDIO_OVER_GRPC,
        },
        "in_process_over_grpc": round(best("in_process") / best("grpc"), 2)
        if best("grpc")
        else None,
        "faults_and_forfeits": faults,
        # CPU per match (medians): what the machine's load moves much less than the rates.
        "cpu_ms_per_match": cpu,
        "grpc_cpu_over_stdio_cpu": round(cpu["grpc"]["total"] / cpu["stdio"]["total"], 2)
        if cpu["stdio"]["total"]
        else None,
        "runs": runs,
        "decision_rate": decision_rates(rounds, slice_s),
    }


def cpu_per_match(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Milliseconds of CPU per match, medians over ``runs``: the arena's process (server,
    referee, store, records; all of the in-process run), the bot processes, both; and the share
    of the wall time the arena's process was busy."""

    def median_of(values: list[float]) -> float:
        return round(statistics.median(values), 2)

    arena = [r.get("server_cpu_s", r.get("cpu_s", 0.0)) / r["matches"] * 1000 for r in runs]
    bots = [r.get("bot_processes_cpu_s", 0.0) / r["matches"] * 1000 for r in runs]
    busy = [r.get("server_cpu_s", r.get("cpu_s", 0.0)) / r["wall_s"] for r in runs]
    return {
        "arena": median_of(arena),
        "bots": median_of(bots),
        "total": median_of([a + b for a, b in zip(arena, bots, strict=True)]),
        "arena_busy": median_of(busy),
    }


class _BotSpies(DescendantCpu):
    """py-spy attached to each stdio bot process this process starts, as each appears (found in
    /proc by its command line; a wrapper would not do: py-spy writes to the bot's stdout)."""

    def __init__(self, exe: str, out_dir: Path, interval: float = 0.05) -> None:
        super().__init__(interval)
        self._exe, self._dir = exe, out_dir
        self._spies: dict[int, subprocess.Popen[bytes]] = {}

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        for proc in self._spies.values():
            proc.send_signal(signal.SIGINT)
        for proc in self._spies.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()

    def sample(self, root: int) -> None:
        from benchmarks.profiling import RATE

        parents, _cpu = proc_table()
        for pid in parents:
            if pid in self._spies or not descends(pid, root, parents):
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if not any(arg.endswith(b"random_bot.py") for arg in argv[1:2]):
                continue
            cmd = [self._exe, "record", "--pid", str(pid), "--format", "raw", "--gil"]
            cmd += ["--output", str(self._dir / f"bot-{pid}.txt"), "--rate", str(RATE)]
            cmd += ["--nonblocking", "--function"]
            self._spies[pid] = subprocess.Popen(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )


def profile_stdio(out: Path, matches_per_pairing: int = 8) -> dict[str, Any]:
    """py-spy profiles of a stdio round robin run for them alone (sampling must not disturb
    the measured runs): the arena process (every thread, the GIL holder) and, separately, the
    bot processes (py-spy attached to each as it starts; one raw file per process, merged)."""
    from benchmarks.profiling import profiled, py_spy_path, summarize

    exe = py_spy_path()
    if exe is None:
        return {"missing": "py-spy not installed; `make bench` installs it"}
    bot_dir = out / "profile-stdio-bots"
    bot_dir.mkdir(parents=True, exist_ok=True)
    for old in bot_dir.glob("*.txt"):
        old.unlink()
    with profiled(out / "profile-stdio-arena.txt") as arena, _BotSpies(exe, bot_dir):
        run = _tournament(STDIO_BOTS, matches_per_pairing, 2, count=False)
    merged = out / "profile-stdio-bots.txt"
    files = sorted(bot_dir.glob("bot-*.txt"))
    merged.write_text("".join(f.read_text(errors="replace") for f in files))
    # A bot's expected samples: its processes' lifetimes are not known here, so none.
    bots_summary = summarize(merged, 0) if files else {"missing": "py-spy wrote no bot profile"}
    bots_summary.update(processes=len(files), file=str(merged))
    kept = ("matches", "wall_s", "faults", "forfeits", "bot_processes")
    return {**{k: run[k] for k in kept}, "arena": arena, "bots": bots_summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer matches and rounds")
    args = parser.parse_args(argv)
    from arena.logging import configure

    configure("error")
    if args.quick:
        result = run_transports(8, repeats=1, rounds=2, slice_s=0.15)
    else:
        result = run_transports()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
