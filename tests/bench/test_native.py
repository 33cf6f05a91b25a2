"""benchmarks/native.py: perf's samples attributed by thread role and library, and the worker
that reports where and when a run played."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from benchmarks.common import ROOT
from benchmarks.native import LIBRARIES, RATE, ROLES, Window, attribute, library, render
from benchmarks.report import limits

# What `perf script -F pid,tid,time,ip,sym,dso` prints: server 100 (loop thread 101), client 200.
SCRIPT = """\
100/101 10.000100:      7f00 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)
100/101 10.000200:      7f01 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)
100/101 10.000300:  ffffffff finish_task_switch.isra.0 ([kernel.kallsyms])
100/102 10.000400:      7f02 [unknown] (/venv/grpc/_cython/cygrpc.cpython-311-x86_64-linux-gnu.so)
100/102 10.000500:      7f03 grpc_core::Foo(int, char) (/venv/grpc/_cython/cygrpc.cpython-311.so)
100/100 10.000600:      7f04 memcpy (/usr/lib/x86_64-linux-gnu/libc.so.6)
200/200 10.000700:      7f05 _upb_Decoder_DecodeMessage (/venv/google/_upb/_message.abi3.so)
100/101 9.999000:      7f06 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)
100/101 12.000000:      7f07 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)
not a sample line
"""


def test_libraries_are_grouped_by_their_shared_object() -> None:
    assert library("/usr/lib/libpython3.11.so.1.0") == "interpreter"
    assert library("/x/cygrpc.cpython-311-x86_64-linux-gnu.so") == "grpc native"
    assert library("[kernel.kallsyms]") == "kernel"
    assert library("/x/_wire.cpython-311-x86_64-linux-gnu.so") == "other"


def test_samples_inside_the_window_are_counted_per_decision_by_role_and_library() -> None:
    window = Window(start=10.0, end=11.0, decisions=2, server_pid=100, loop_tid=101)
    got = attribute(SCRIPT.splitlines(), window)
    one = 1e6 / RATE / 2  # one sample, over two decisions, in µs
    assert set(got) == set(ROLES) and all(set(v) == set(LIBRARIES) for v in got.values())
    assert got["loop thread"]["interpreter"] == pytest.approx(2 * one, abs=0.1)
    assert got["loop thread"]["kernel"] == pytest.approx(one, abs=0.1)
    # grpc's threads and the main (trio) thread are the server's other threads.
    assert got["other server threads"]["grpc native"] == pytest.approx(2 * one, abs=0.1)
    assert got["other server threads"]["other"] == pytest.approx(one, abs=0.1)
    assert got["client"]["other"] == pytest.approx(one, abs=0.1)
    # The samples before and after the window are not counted.
    assert sum(sum(v.values()) for v in got.values()) == pytest.approx(7 * one, abs=0.5)
    table = render({"arena": got, "raw": attribute([], window)})
    assert "loop thread: interpreter" in table and f"{2 * one:+10.1f}" in table


@pytest.mark.parametrize("kind", ["raw", "arena"])
@pytest.mark.slow
def test_the_worker_reports_its_play_s_window_and_the_loop_thread(kind: str) -> None:
    before = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.native", "--worker", kind],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    w = Window(**json.loads(out.stdout.strip().splitlines()[-1]))
    # time.perf_counter is CLOCK_MONOTONIC, system-wide: perf stamps its samples on it.
    assert before < w.start < w.end < time.perf_counter()
    assert w.decisions >= 2000 if kind == "raw" else w.decisions > 500
    # The raw server runs on the worker's main thread; the arena's on a thread of its own.
    assert (w.loop_tid == w.server_pid) is (kind == "raw")


def test_without_perf_the_bench_says_why_instead_of_failing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchmarks import __main__ as bench
    from benchmarks import native as native_bench

    monkeypatch.setattr(native_bench.shutil, "which", lambda name: None)
    result = bench._native(quick=True)
    assert result == {"missing": "perf is not installed (Debian: apt-get install linux-perf)"}
    notes = limits({"sections": {"protocol": {"native": result}}})
    assert notes == [
        "arena against raw by thread and library (perf): missing: perf is not installed "
        "(Debian: apt-get install linux-perf)"
    ]


def test_the_bench_notes_hold_arena_against_raw_per_connection_count() -> None:
    window = Window(start=10.0, end=11.0, decisions=2, server_pid=100, loop_tid=101)
    got = attribute(SCRIPT.splitlines(), window)
    one = 1e6 / RATE / 2
    notes = limits(
        {"sections": {"protocol": {"native": {"8": {"arena": got, "raw": attribute([], window)}}}}}
    )
    assert notes == [
        "arena 8 connections against raw (perf, µs of CPU per decision): loop thread "
        f"interpreter {2 * one:.0f} vs 0, grpc native 0 vs 0, kernel {one:.0f} vs 0; "
        f"other server threads {3 * one:.0f} vs 0; client {one:.0f} vs 0"
    ]
