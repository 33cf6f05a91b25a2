"""The benchmark harness's own pieces (``make bench`` itself is not a test: it takes minutes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.common import DescendantCpu, percentile
from benchmarks.engine_bench import our_slice
from benchmarks.profiling import summarize
from benchmarks.report import render


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


def test_descendant_cpu_sees_grandchildren() -> None:
    # /bin/sh -c forks the command (a grandchild), as the arena's launcher does with bots.
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
            "ratings": {
                "bots": 10,
                "results": 100,
                "fit_s_median": 0.2,
                "baseline_s_median": 0.1,
                "baseline_with_intervals_s_median": 0.1,
                "ratio_to_baseline": 2.0,
                "ratio_to_baseline_with_intervals": 2.0,
            },
        },
    }
    table = render(results)
    assert "engine whist: decisions/s" in table and "oh_hell 400" in table and "0.75×" in table
    assert "ratings fit 10 bots / 100 results" in table and "2.00×" in table
