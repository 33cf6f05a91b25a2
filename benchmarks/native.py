"""Where the arena's CPU goes beside the raw ping-pong's, natively: per decision, by thread and
by library (docs/performance.md, "Where the gap to raw is").

``python -m benchmarks.native [--connections K] [--pairs N]`` runs the protocol section's arena
and raw runs, alternating, each in its own process under ``perf record`` (software clock
sampling, every thread, the bench client included), and prints the medians over the pairs of
the CPU microseconds per decision spent in each thread role and library during the play
(from every connection's Hello to the last answer):

* thread roles: the server's **loop thread** (grpc.aio's handlers, and for the arena the hub and
  the referees), its **other threads** (grpc's event engine and completion-queue poller, trio's
  thread for the arena), and the **client** process;
* libraries: the **interpreter** (libpython: Python code running), **grpc native** (cygrpc),
  the **kernel**, and everything else (libc, protobuf, the arena's C encoder, …).

Needs ``perf`` (linux-perf) and the right to use it (root, or ``perf_event_paranoid`` ≤ 1);
``make bench`` runs it where it can and notes why where it cannot. py-spy (the bench's other
profiles) says which Python functions run; this says how much of the server's time is Python at
all, against the same stack doing nothing but ping-pong.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cli.main import POSITIVE
from benchmarks.common import ROOT

#: Thread roles, in print order.
ROLES = ("loop thread", "other server threads", "client")
#: Library groups, in print order.
LIBRARIES = ("interpreter", "grpc native", "kernel", "other")
#: Samples per second.
RATE = 4000


def library(dso: str) -> str:
    """The group of a shared object as ``perf script`` names it."""
    name = dso.rsplit("/", 1)[-1]
    if name.startswith("libpython") or name == "python" or name.startswith("python3"):
        return "interpreter"
    if name.startswith("cygrpc"):
        return "grpc native"
    if name.startswith("[kernel"):
        return "kernel"
    return "other"


@dataclass(frozen=True, slots=True)
class Window:
    """What a worker reports: its play's window on CLOCK_MONOTONIC (``time.perf_counter``
    there), decisions played, and which thread ran the server's loop."""

    start: float
    end: float
    decisions: int
    server_pid: int
    loop_tid: int


def attribute(perf_script: Iterable[str], window: Window) -> dict[str, dict[str, float]]:
    """CPU µs per decision by role and library from ``perf script -F pid,tid,time,ip,sym,dso``
    lines, counting only samples inside ``window``."""
    counts: Counter[tuple[str, str]] = Counter()
    for line in perf_script:
        parts = line.split()
        if len(parts) < 4 or "/" not in parts[0]:
            continue
        pid_text, _, tid_text = parts[0].partition("/")
        try:
            pid, tid, t = int(pid_text), int(tid_text), float(parts[1].rstrip(":"))
        except ValueError:
            continue
        if not window.start <= t <= window.end:
            continue
        if pid == window.server_pid:
            role = "loop thread" if tid == window.loop_tid else "other server threads"
        else:
            role = "client"
        counts[(role, library(parts[-1].strip("()")))] += 1
    per_decision = 1e6 / RATE / max(1, window.decisions)
    return {
        role: {lib: round(counts[(role, lib)] * per_decision, 1) for lib in LIBRARIES}
        for role in ROLES
    }


# --- the worker: one run, inside perf ---------------------------------------------------------


def _worker(kind: str, connections: int) -> Window:
    import trio

    from arena.server import service
    from benchmarks import protocol_bench

    loop_tids: list[int] = []
    run = service.GrpcHost._run

    def noted(host: service.GrpcHost) -> None:
        loop_tids.append(threading.get_native_id())
        run(host)

    service.GrpcHost._run = noted  # type: ignore[method-assign]
    if kind == "arena":
        result = trio.run(functools.partial(protocol_bench.arena_run, connections, 3))
        loop_tid = loop_tids[-1]
    else:
        result = protocol_bench.raw_run(connections, 2000 if connections == 1 else 1000)
        loop_tid = threading.get_native_id()  # asyncio.run: this thread
    start, end = result["window"]
    return Window(start, end, result["decisions"], os.getpid(), loop_tid)


# --- the driver ------------------------------------------------------------------------------


class PerfUnavailable(RuntimeError):
    """perf is missing, or may not sample here; the message says which."""


def measure(kind: str, connections: int) -> dict[str, dict[str, float]]:
    """One run of ``kind`` (``arena`` or ``raw``) under perf; µs per decision by role/library.
    Raises :class:`PerfUnavailable`."""
    perf = shutil.which("perf")
    if perf is None:
        raise PerfUnavailable("perf is not installed (Debian: apt-get install linux-perf)")
    with tempfile.TemporaryDirectory(prefix="native-") as tmp:
        data = Path(tmp) / "perf.data"
        worker = [sys.executable, "-m", "benchmarks.native", "--worker", kind]
        record = [perf, "record", "-q", "-k", "CLOCK_MONOTONIC", "-e", "cpu-clock"]
        record += ["-F", str(RATE), "-o", str(data), "--"]
        proc = subprocess.run(
            [*record, *worker, "--connections", str(connections)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        if proc.returncode != 0 or not lines:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise PerfUnavailable(f"perf record failed: {tail}")
        window = Window(**json.loads(lines[-1]))
        script = subprocess.run(
            [perf, "script", "-i", str(data), "-F", "pid,tid,time,ip,sym,dso"],
            capture_output=True,
            text=True,
            check=True,
        )
        return attribute(script.stdout.splitlines(), window)


def native(pairs: int = 3, connections: int = 1) -> dict[str, Any]:
    """Arena and raw, alternating ``pairs`` times; medians per role and library."""
    runs: dict[str, list[dict[str, dict[str, float]]]] = {"arena": [], "raw": []}
    for _ in range(pairs):
        for kind in runs:
            runs[kind].append(measure(kind, connections))
    return {
        kind: {
            role: {lib: round(statistics.median(r[role][lib] for r in rs), 1) for lib in LIBRARIES}
            for role in ROLES
        }
        for kind, rs in runs.items()
    }


def cpu(by_role: dict[str, dict[str, float]], role: str, lib: str | None = None) -> float:
    """µs per decision of ``role`` in library ``lib`` (``None``: in all of them), from what
    :func:`attribute` or :func:`native` gives for one server."""
    spent = by_role[role]
    return sum(spent.values()) if lib is None else spent[lib]


def render(result: dict[str, Any]) -> str:
    """The table: arena, raw and the difference, µs of CPU per decision."""
    lines = [f"{'µs of CPU per decision':42s} {'arena':>7s} {'raw':>7s} {'arena−raw':>10s}"]
    for role in ROLES:
        for lib in (*LIBRARIES, None):
            a, r = cpu(result["arena"], role, lib), cpu(result["raw"], role, lib)
            lines.append(f"{role + ': ' + (lib or 'all'):42s} {a:7.1f} {r:7.1f} {a - r:+10.1f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.native", description=__doc__)
    parser.add_argument("--pairs", type=POSITIVE, default=3, help="arena/raw pairs (default 3)")
    parser.add_argument("--connections", type=POSITIVE, default=1, help="1 or 8, as the bench")
    parser.add_argument("--worker", choices=("arena", "raw"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        w = _worker(args.worker, args.connections)
        print(json.dumps(dataclasses.asdict(w)))
        return
    print(f"{args.connections} connection(s), medians of {args.pairs} pairs")
    try:
        print(render(native(args.pairs, args.connections)))
    except PerfUnavailable as err:
        raise SystemExit(f"benchmarks.native: {err}") from None


if __name__ == "__main__":
    main()
