"""Section 5: ratings fit — time to fit 1,000 bots from 100,000 results with
``arena.ratings.fit_ratings`` (Elo and 95 % intervals), beside a baseline measured in the same
run on the same data: a plain Bradley–Terry maximum-likelihood fit (vectorised numpy gradient,
``scipy.optimize.minimize`` L-BFGS-B, same Gaussian prior, point estimates only), which is what a
competent quick implementation would do. The ratio is ours over the baseline's time.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.optimize  # type: ignore[import-untyped]

from arena.ratings import DEFAULT_PRIOR_SD, ELO_PER_NAT, Entry, fit_ratings


def simulated_duels(
    n_bots: int, n_results: int, seed: int = 0
) -> tuple[list[tuple[Entry, Entry]], list[str], np.ndarray[Any, Any]]:
    """Two-sided results of bots with normal true strengths (sd 1 nat ≈ 174 Elo)."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 1.0, n_bots)
    first = rng.integers(0, n_bots, n_results)
    second = (first + rng.integers(1, n_bots, n_results)) % n_bots
    wins = rng.random(n_results) < 1.0 / (1.0 + np.exp(truth[second] - truth[first]))
    names = [f"bot{i:04d}" for i in range(n_bots)]
    matches = [
        (Entry((names[x],), 1 if won else 2), Entry((names[y],), 2 if won else 1))
        for x, y, won in zip(first.tolist(), second.tolist(), wins.tolist(), strict=True)
    ]
    return matches, names, truth


def baseline_fit(
    matches: Sequence[Sequence[Entry]],
    prior_sd: float = DEFAULT_PRIOR_SD,
    intervals: bool = False,
) -> dict[str, float]:
    """Bradley–Terry by L-BFGS-B: Elo per bot (field mean 1500), no draws; with ``intervals``
    also the covariance (inverse of the dense Hessian at the optimum) that 95 % intervals need."""
    index: dict[str, int] = {}
    winners: list[int] = []
    losers: list[int] = []
    for a, b in matches:
        wa = index.setdefault(a.bots[0], len(index))
        wb = index.setdefault(b.bots[0], len(index))
        if a.rank < b.rank:
            winners.append(wa)
            losers.append(wb)
        elif b.rank < a.rank:
            winners.append(wb)
            losers.append(wa)
    n = len(index)
    w, lo = np.array(winners), np.array(losers)
    precision = (ELO_PER_NAT / prior_sd) ** 2

    def objective(theta: np.ndarray[Any, Any]) -> tuple[float, np.ndarray[Any, Any]]:
        d = theta[lo] - theta[w]
        value = float(np.logaddexp(0.0, d).sum() + 0.5 * precision * theta @ theta)
        p = 0.5 * (1.0 + np.tanh(0.5 * d))  # sigmoid(d): the chance the loser would have won
        grad = np.bincount(lo, p, n) - np.bincount(w, p, n) + precision * theta
        return value, grad

    fit = scipy.optimize.minimize(objective, np.zeros(n), jac=True, method="L-BFGS-B")
    theta = fit.x - fit.x.mean()
    if intervals:  # the work a fit with intervals adds: the Hessian and its inverse
        d = fit.x[lo] - fit.x[w]
        p = 0.5 * (1.0 + np.tanh(0.5 * d))
        q = p * (1.0 - p)
        hessian = np.diag(np.bincount(w, q, n) + np.bincount(lo, q, n) + precision)
        np.add.at(hessian, (w, lo), -q)
        np.add.at(hessian, (lo, w), -q)
        np.linalg.inv(hessian)
    return {bot: 1500.0 + ELO_PER_NAT * float(theta[i]) for bot, i in index.items()}


def run_ratings(n_bots: int = 1000, n_results: int = 100_000, repeats: int = 3) -> dict[str, Any]:
    """Time the fits, alternating (ours, baseline, baseline with intervals) ``repeats`` times;
    ratios per repeat (medians), and how well each recovers the true strengths."""
    matches, names, truth = simulated_duels(n_bots, n_results)
    fit_ratings(matches[:10])  # warm-up: imports, first-call costs
    baseline_fit(matches[:10], intervals=True)
    times: dict[str, list[float]] = {"ours": [], "baseline": [], "baseline_intervals": []}
    table, base = None, None
    for _ in range(repeats):
        start = time.perf_counter()
        table = fit_ratings(matches)
        times["ours"].append(time.perf_counter() - start)
        start = time.perf_counter()
        base = baseline_fit(matches)
        times["baseline"].append(time.perf_counter() - start)
        start = time.perf_counter()
        baseline_fit(matches, intervals=True)
        times["baseline_intervals"].append(time.perf_counter() - start)
    assert table is not None and base is not None
    elo = {r.bot: r.elo for r in table.ratings}
    ours = [elo[b] for b in names]
    theirs = [base[b] for b in names]

    def ratio(other: str) -> float:
        pairs = zip(times["ours"], times[other], strict=True)
        return round(statistics.median(a / b for a, b in pairs), 2)

    return {
        "bots": n_bots,
        "results": n_results,
        "fit_s_median": round(statistics.median(times["ours"]), 3),
        "fit_s_best": round(min(times["ours"]), 3),
        "baseline_s_median": round(statistics.median(times["baseline"]), 3),
        "baseline_with_intervals_s_median": round(
            statistics.median(times["baseline_intervals"]), 3
        ),
        "ratio_to_baseline": ratio("baseline"),
        "ratio_to_baseline_with_intervals": ratio("baseline_intervals"),
        "correlation_with_truth": round(float(np.corrcoef(truth, ours)[0, 1]), 4),
        "baseline_correlation_with_truth": round(float(np.corrcoef(truth, theirs)[0, 1]), 4),
        "max_elo_difference_to_baseline": round(
            max(abs(a - b) for a, b in zip(ours, theirs, strict=True)), 2
        ),
        "profile": _profile(matches),
    }


def _profile(matches: Sequence[Sequence[Entry]]) -> dict[str, Any]:
    """Where one fit spends its time (pyinstrument): the fit's steps and the Newton loop's,
    each with its share of the whole fit (callees included)."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        return {"missing": "pyinstrument not installed; `make bench` installs it"}
    profiler = Profiler(interval=0.001)
    profiler.start()
    fit_ratings(matches)
    session = profiler.stop()
    root = session.root_frame()
    if root is None:
        return {}
    whole = root.time or 1.0
    out: dict[str, Any] = {"seconds": round(whole, 3)}
    for name in ("fit_ratings", "_fit"):
        found = _find(root, name)
        if found is None:
            continue
        steps: dict[str, float] = {}
        for child in found.children:
            shown = child
            while shown.function == "wrapper" and shown.children:  # scipy's batching decorator
                shown = max(shown.children, key=lambda f: f.time)
            key = f"{shown.function} ({shown.file_path_short})"
            steps[key] = steps.get(key, 0.0) + child.time
        out[f"in {name}"] = [
            {"step": k, "share": round(v / whole, 3)}
            for k, v in sorted(steps.items(), key=lambda kv: -kv[1])
            if v / whole >= 0.02
        ]
    return out


def _find(frame: Any, name: str) -> Any:
    stack = [frame]
    while stack:
        f = stack.pop()
        if f.function == name:
            return f
        stack.extend(f.children)
    return None


def run_ratings_both(n_results: int = 100_000, repeats: int = 3) -> dict[str, Any]:
    """The fit as shipped (BLAS on one thread, arena/ratings.py) and with a BLAS thread per
    core (OpenBLAS's default, chosen through ``OPENBLAS_NUM_THREADS``, which the fit obeys), each
    in a fresh process (the thread count is read when numpy loads): what the one-thread default
    buys. The baseline keeps OpenBLAS's default threads in both."""
    from benchmarks.common import python_module, run_json

    argv = python_module("benchmarks.ratings_bench", str(n_results), str(repeats))
    shipped: dict[str, Any] = run_json(argv, 600)
    cores = str(os.cpu_count() or 1)
    per_core = run_json(argv, 600, {"OPENBLAS_NUM_THREADS": cores, "OMP_NUM_THREADS": cores})
    shipped["blas_thread_per_core"] = {
        k: per_core[k]
        for k in ("fit_s_median", "fit_s_best", "baseline_s_median", "ratio_to_baseline")
    }
    shipped["blas_thread_per_core"]["threads"] = int(cores)
    return shipped


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(run_ratings(n_results=int(sys.argv[1]), repeats=int(sys.argv[2]))))
