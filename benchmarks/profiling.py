"""Sampling profiles of this process with py-spy (every thread, not just the main one).

The arena server is a grpc.aio loop thread (handlers, hub, referees), grpc's own threads and
the caller's trio thread, so a profiler that follows one thread would miss part of it. py-spy
samples the stacks of every thread from outside; with ``--gil`` only the thread holding the GIL
is sampled, which is what bounds a CPython server: the share of samples that found a GIL holder
is how busy the interpreter was, and the stacks say with what.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Samples per second.
RATE = 250


def py_spy_path() -> str | None:
    """The py-spy binary next to this interpreter, or on PATH."""
    local = Path(sys.executable).parent / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


@contextmanager
def profiled(out: Path, gil: bool = True, rate: int = RATE) -> Iterator[dict[str, Any]]:
    """Sample this process while the block runs; the yielded dict is filled in afterwards with
    the summary of :func:`summarize` (or ``{"missing": why}``)."""
    result: dict[str, Any] = {}
    exe = py_spy_path()
    if exe is None:
        result["missing"] = "py-spy not installed; `make bench` installs it"
        yield result
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = [exe, "record", "--pid", str(os.getpid()), "--format", "raw", "--output", str(out)]
    argv += ["--rate", str(rate), "--nonblocking", "--function"]
    if gil:
        argv.append("--gil")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(0.3)  # let it attach
    start = time.perf_counter()
    try:
        yield result
    finally:
        seconds = time.perf_counter() - start
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if out.exists():
            result.update(summarize(out, seconds * rate))
            result["file"] = str(out)
        else:
            result["missing"] = f"py-spy wrote nothing: {err.decode(errors='replace')[-300:]}"


def _category(frame: str) -> str:
    """Which part of the system a frame belongs to, from its file."""
    where = frame.rsplit("(", 1)[-1]
    for prefix, name in (
        # A handler frame with nothing inside it is time in grpc.aio's native write / read.
        ("arena/server/service.py", "grpc.aio write/read (under the handlers)"),
        ("engine/", "engine"),
        ("arena/server/stdio.py", "arena stdio link (lines, JSON mapping)"),
        ("arena/server/", "arena server (referee, hub, service)"),
        ("arena/protocol", "arena protocol (message encoding)"),
        ("arena/tournament/", "arena tournament (runner, store)"),
        ("arena/records/", "arena records"),
        ("arena/pool.py", "arena bot processes (pool, launch)"),
        ("arena/bots/", "arena bot processes (pool, launch)"),
        ("arena/", "arena other"),
        ("reference_bots/", "reference bot (its own code)"),
        ("json/", "json (standard library)"),
        ("grpc/", "grpcio (Python side)"),
        ("google/protobuf", "protobuf"),
        ("trio/", "trio"),
        ("asyncio/", "asyncio loop"),
        ("structlog/", "structlog"),
        ("threading", "threading/queue"),
        ("queue", "threading/queue"),
        ("benchmarks/", "benchmark harness"),
    ):
        if prefix in where:
            return name
    return "other"


def summarize(path: Path, expected_samples: float, top: int = 15) -> dict[str, Any]:
    """Leaf functions (self time) and categories (inclusive, by innermost known category)."""
    leaves: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        total += count
        leaves[frames[-1]] += count
        # Attribute each sample to the innermost frame of ours or of a library we name; only a
        # leaf counts as grpc.aio I/O (an inner frame under a handler is our own work).
        for depth, frame in enumerate(reversed(frames)):
            cat = _category(frame)
            if depth and cat.startswith("grpc.aio"):
                cat = "arena server (referee, hub, service)"
            if cat != "other":
                categories[cat] += count
                break
        else:
            categories["other"] += count
    share = {k: round(v / total, 3) for k, v in categories.most_common()} if total else {}
    return {
        "samples": total,
        "interpreter_busy": round(total / expected_samples, 3) if expected_samples else None,
        "by_part": share,
        "top_self": [
            {"function": f, "share": round(c / total, 3)} for f, c in leaves.most_common(top)
        ]
        if total
        else [],
    }
