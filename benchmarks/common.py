"""Helpers shared by the benchmark sections: clocks, percentiles, memory, the machine."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.protocol import wireformat

#: Where results go (``out/`` is not versioned; docs/performance.md holds a curated run).
OUT_DIR = Path("out/bench")
#: The repository root, for subprocesses (``python -m benchmarks.…`` needs it on sys.path).
ROOT = Path(__file__).resolve().parents[1]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) of ``values``, nearest-rank; ``nan`` when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def median(values: Sequence[float]) -> float:
    """The median, ``nan`` when empty."""
    return statistics.median(values) if values else float("nan")


def rss_bytes(pid: int | None = None) -> int:
    """Resident set size of a process (this one by default), from /proc."""
    path = f"/proc/{pid or 'self'}/status"
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def thread_count(pid: int | None = None) -> int:
    """Threads of a process (this one by default), from /proc."""
    try:
        return len(os.listdir(f"/proc/{pid or 'self'}/task"))
    except OSError:
        return 0


def machine() -> dict[str, Any]:
    """The machine the figures come from: they mean nothing without it."""
    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "nproc": os.cpu_count() or 0,
        "cpu": model,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "load_avg_1m_at_start": round(load[0], 2),
        # Which wire encoder the arena ran with (arena/protocol/_wire.c, or the codec's Python
        # encoders).
        "encoder": wireformat.encoder_name(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def load_now() -> float:
    """The 1-minute load average (how shared the machine was)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else 0.0


def python_module(module: str, *args: str) -> list[str]:
    """Argv to run ``python -m module args`` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def child_env() -> dict[str, str]:
    """Environment for benchmark subprocesses: the repository importable, output unbuffered."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_json(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> Any:
    """Run a benchmark subprocess that prints one JSON object as its last stdout line."""
    import json

    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**child_env(), **(env or {})},
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv[2:])} failed ({proc.returncode}): {proc.stderr[-2000:]}"
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


class DescendantCpu:
    """CPU seconds used by this process's descendants, sampled from /proc while they run.

    ``getrusage(RUSAGE_CHILDREN)`` misses bot processes: ``/bin/sh -c`` forks them (dash does
    not exec), so they are grandchildren, killed with their session and never waited for by us.
    A thread reads ``/proc/*/stat`` every ``interval`` seconds and keeps each descendant's
    latest utime + stime; CPU spent in a process's last interval is missed (bots are idle then).
    """

    def __init__(self, interval: float = 0.1) -> None:
        import threading

        self.interval = interval
        self._seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="descendant-cpu", daemon=True)

    def __enter__(self) -> DescendantCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def seconds(self) -> float:
        """CPU seconds seen so far, over every descendant."""
        return sum(self._seen.values())

    @property
    def processes(self) -> int:
        """Descendant processes seen."""
        return len(self._seen)

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(self.interval):
            self.sample(me)

    def sample(self, root: int) -> None:
        """One pass over /proc."""
        parents, cpu = proc_table()
        for pid, used in cpu.items():
            if descends(pid, root, parents):
                self._seen[pid] = max(self._seen.get(pid, 0.0), used)


def descends(pid: int, root: int, parents: dict[int, int]) -> bool:
    """Whether ``pid`` is a descendant of ``root`` (at most 8 generations down)."""
    p, hops = parents.get(pid, 0), 0
    while p not in (0, 1, root) and hops < 8:
        p, hops = parents.get(p, 0), hops + 1
    return p == root and pid != root


#: Clock ticks a second, the unit of /proc's CPU times.
CLOCK_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_table() -> tuple[dict[int, int], dict[int, float]]:
    """Every process's parent and CPU seconds (utime + stime), from /proc."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICK
    return parents, cpu


def duel_parser(description: str | None) -> argparse.ArgumentParser:
    """The arguments every duplicate-deal duel takes: the game, how many seeds from which one,
    the table's size and the game's options (``--option NAME=VALUE``, repeatable)."""
    import engine

    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("game", choices=sorted(engine.game_ids()))
    parser.add_argument("seeds", type=int)
    parser.add_argument("--players", type=int)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--start", type=int, default=0, help="the first seed")
    return parser


def game_options(items: Sequence[str]) -> dict[str, int | str]:
    """``NAME=VALUE`` pairs as a game's options; whole numbers become ints."""
    options: dict[str, int | str] = {}
    for item in items:
        name, _, value = item.partition("=")
        options[name] = int(value) if value.lstrip("-").isdigit() else value
    return options
