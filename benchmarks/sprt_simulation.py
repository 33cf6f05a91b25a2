"""Simulated SPRTs (engine/sprt.py): error rates and mean matches, paired units vs single matches.

``python -m benchmarks.sprt_simulation`` prints the table in docs/sprt.md (``--runs`` for more or
fewer runs, ``--seed`` for another stream). Deterministic for a given seed.

The simulated game: a duplicate deal gives one place an advantage (the deal's *luck*, normal with
sd ``luck_sd``) and each match adds its own noise (sd ``noise_sd``); the candidate's strength is
``d``. Two places: in rotation r the candidate sits in place r, its performance margin is
``d ± luck + noise``, a win above ``draw_margin``, a loss below ``−draw_margin``, else a draw; the
unit's two matches share the luck with opposite signs, which is what makes duplicate deals pay.
Three places: every place has a luck, the candidate meets two baselines in each of the three
rotations and scores the share of them it outperforms (1, 1/2 or 0). The true expected scores and
variances are exact (closed forms, Gauss–Hermite quadrature over the luck), so the true Elo of a
run is exactly the one asked for.

The *paired* SPRT counts units (engine.sprt's model); the *unpaired* one treats every match of the
same runs as an independent trial and looks after every match. Both stop at the first crossing of
Wald's bounds; a run still undecided after ``max_units`` units counts as undecided.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.optimize  # type: ignore[import-untyped]
import scipy.special  # type: ignore[import-untyped]

from engine.sprt import NELO_PER_T, SprtParams, bounds, score_of_elo

FloatArray = npt.NDArray[np.float64]
#: Below this a variance computed from running sums is rounding, not spread (a real one is at
#: least (1/6)² / N, far above it for any N simulated here).
_ZERO_VARIANCE = 1e-12


@dataclass(frozen=True, slots=True)
class Table:
    """The simulated game: places at the table (2 or 3) and the sizes of luck and noise."""

    places: int = 2
    luck_sd: float = 1.0
    noise_sd: float = 1.0
    draw_margin: float = 0.3

    @property
    def matches_per_unit(self) -> int:
        return self.places


@dataclass(frozen=True, slots=True)
class Outcome:
    """Rates over the runs of one true strength, for the paired and the unpaired test."""

    runs: int
    #: Runs of either test still undecided at ``max_units`` (their matches count as played).
    undecided: int
    paired_h1: float
    paired_h0: float
    paired_matches: float
    unpaired_h1: float
    unpaired_h0: float
    unpaired_matches: float

    @property
    def saving(self) -> float:
        """Fraction of the unpaired test's matches the paired one does not need."""
        return 1.0 - self.paired_matches / self.unpaired_matches


def _gauss_normal(points: int = 96) -> tuple[FloatArray, FloatArray]:
    """Nodes and weights for E[f(X)], X standard normal."""
    x, w = np.polynomial.hermite_e.hermegauss(points)
    return x, w / math.sqrt(2.0 * math.pi)


def _match_probabilities(d: float, luck: FloatArray, table: Table) -> FloatArray:
    """P(loss), P(draw), P(win) of a two-place match given the candidate's luck (rows)."""
    margin = d + luck
    win = scipy.special.ndtr((margin - table.draw_margin) / table.noise_sd)
    loss = scipy.special.ndtr((-table.draw_margin - margin) / table.noise_sd)
    return np.stack([loss, 1.0 - win - loss, win], axis=-1)


def unit_moments(d: float, table: Table) -> tuple[float, float]:
    """Exact mean and variance of the unit score at strength ``d`` (two places: quadrature)."""
    if table.places == 3:
        # Mean: by linearity, P(beat one baseline) = Φ(d / sd of the difference).
        total_sd = math.sqrt(2.0 * (table.luck_sd**2 + table.noise_sd**2))
        mean = float(scipy.special.ndtr(d / total_sd))
        return mean, math.nan  # the variance is not needed for the logistic rows
    x, w = _gauss_normal()
    luck = table.luck_sd * x
    first = _match_probabilities(d, luck, table)  # candidate in the lucky place
    second = _match_probabilities(d, -luck, table)
    values = np.array([0.0, 0.5, 1.0])
    pair = (values[:, None] + values[None, :]) / 2.0
    joint = np.einsum("n,ni,nj->ij", w, first, second)
    mean = float((joint * pair).sum())
    return mean, float((joint * (pair - mean) ** 2).sum())


def strength_for(true_elo: float, params: SprtParams, table: Table) -> float:
    """The ``d`` at which the candidate's true Elo (in ``params.model``) is ``true_elo``."""
    if params.model == "logistic":
        target = score_of_elo(true_elo)

        def gap(d: float) -> float:
            return unit_moments(d, table)[0] - target

    else:
        if table.places != 2:
            raise ValueError("normalized-Elo rows are simulated for two places only")
        m = table.matches_per_unit

        def gap(d: float) -> float:
            mean, var = unit_moments(d, table)
            return (mean - 0.5) / math.sqrt(m * var) * NELO_PER_T - true_elo

    return float(scipy.optimize.brentq(gap, -5.0, 5.0, xtol=1e-13))


def simulate_matches(
    rng: np.random.Generator, d: float, table: Table, runs: int, units: int
) -> FloatArray:
    """Match scores, shape (runs, units, rotations): the rotations of a unit share its deal."""
    if table.places == 2:
        luck = rng.normal(0.0, table.luck_sd, (runs, units, 1)) * np.array([1.0, -1.0])
        margin = d + luck + rng.normal(0.0, table.noise_sd, (runs, units, 2))
        return np.where(
            margin > table.draw_margin, 1.0, np.where(margin < -table.draw_margin, 0.0, 0.5)
        )
    luck = rng.normal(0.0, table.luck_sd, (runs, units, 1, 3))
    perf = luck + rng.normal(0.0, table.noise_sd, (runs, units, 3, 3))
    # Rotation r: the candidate (strength d) in place r, baselines in the other two.
    seat = np.eye(3, dtype=bool)
    perf = perf + d * seat
    cand = perf[..., seat].reshape(runs, units, 3)
    # The candidate never outperforms itself, so this counts the two baselines beaten.
    beaten: FloatArray = (cand[..., None] > perf).sum(axis=-1) / 2.0
    return beaten


def llr_paths(
    n: FloatArray, s1: FloatArray, s2: FloatArray, params: SprtParams, m: int
) -> FloatArray:
    """engine.sprt.llr from running sums (count, Σx, Σx²), vectorised; 0 with no units."""
    mean = s1 / n
    var = s2 / n - mean**2
    # No spread at all: one pseudo-unit split between 0 and 1, as engine.sprt._spread does.
    flat = var <= _ZERO_VARIANCE
    m_reg = (n * mean + 0.5) / (n + 1)
    var_reg = (n * (mean - m_reg) ** 2 + 0.5 * m_reg**2 + 0.5 * (1.0 - m_reg) ** 2) / (n + 1)
    mean = np.where(flat, m_reg, mean)
    var = np.where(flat, var_reg, var)
    ok = n > 0
    safe = np.where(ok, var, 1.0)
    if params.model == "logistic":
        lo, hi = score_of_elo(params.elo0), score_of_elo(params.elo1)
        value = n * (hi - lo) * (2.0 * mean - lo - hi) / (2.0 * safe)
    else:
        # With s = 1/2 + nt·σ_match the GSPRT LLR is matches × (nt1−nt0)(2t − nt0 − nt1)/2.
        nt0, nt1 = params.elo0 / NELO_PER_T, params.elo1 / NELO_PER_T
        t = (mean - 0.5) / np.sqrt(m * safe)
        value = n * m * (nt1 - nt0) * (2.0 * t - nt0 - nt1) / 2.0
    return np.where(ok, value, 0.0)


class _Sequential:
    """One SPRT per run, fed observations (unit scores) chunk by chunk."""

    def __init__(self, runs: int, params: SprtParams, m: int) -> None:
        self.params, self.m = params, m
        self.lower, self.upper = bounds(params)
        self.n: FloatArray = np.zeros(runs)
        self.s1: FloatArray = np.zeros(runs)
        self.s2: FloatArray = np.zeros(runs)
        #: Observations when it stopped, 0 while running.
        self.stopped_at: FloatArray = np.zeros(runs)
        #: +1 accepted H1, −1 accepted H0, 0 undecided.
        self.verdict: npt.NDArray[np.int8] = np.zeros(runs, dtype=np.int8)

    @property
    def active(self) -> npt.NDArray[np.bool_]:
        running: npt.NDArray[np.bool_] = self.verdict == 0
        return running

    @property
    def observations(self) -> FloatArray:
        """Observations each run used: until it stopped, or all fed so far."""
        return np.where(self.active, self.n, self.stopped_at)

    def feed(self, rows: npt.NDArray[np.intp], obs: FloatArray) -> None:
        """Observations ``obs`` (len(rows), k) for the runs ``rows``, in order."""
        live = self.verdict[rows] == 0
        rows, obs = rows[live], obs[live]
        if rows.size == 0:
            return
        k = obs.shape[1]
        n = self.n[rows, None] + np.arange(1, k + 1)
        s1 = self.s1[rows, None] + np.cumsum(obs, axis=1)
        s2 = self.s2[rows, None] + np.cumsum(obs * obs, axis=1)
        value = llr_paths(n, s1, s2, self.params, self.m)
        crossed = (value >= self.upper) | (value <= self.lower)
        hit = crossed.any(axis=1)
        first = np.argmax(crossed, axis=1)
        done = rows[hit]
        self.stopped_at[done] = n[hit, first[hit]]
        self.verdict[done] = np.where(value[hit, first[hit]] >= self.upper, 1, -1)
        self.n[rows], self.s1[rows], self.s2[rows] = n[:, -1], s1[:, -1], s2[:, -1]


def simulate(
    params: SprtParams,
    true_elo: float,
    *,
    table: Table | None = None,
    runs: int = 1000,
    seed: int = 0,
    chunk: int = 64,
    max_units: int = 1_000_000,
) -> Outcome:
    """``runs`` SPRTs at a true Elo of ``true_elo`` (in ``params.model``), paired and unpaired."""
    table = table or Table()
    m = table.matches_per_unit
    d = strength_for(true_elo, params, table)
    rng = np.random.default_rng(seed)
    paired = _Sequential(runs, params, m)
    # Unpaired nElo would be relative to the raw per-match sd, another hypothesis altogether:
    # the comparison is made in logistic Elo only.
    unpaired = _Sequential(runs, params, 1) if params.model == "logistic" else None
    played = 0
    while played < max_units:
        running = paired.active if unpaired is None else paired.active | unpaired.active
        rows = np.flatnonzero(running)
        if rows.size == 0:
            break
        scores = simulate_matches(rng, d, table, rows.size, chunk)
        paired.feed(rows, scores.mean(axis=2))
        if unpaired is not None:
            unpaired.feed(rows, scores.reshape(rows.size, chunk * m))
        played += chunk
    single = unpaired or paired  # stands in, unread, when there is no unpaired test
    blank = math.nan if unpaired is None else 1.0
    return Outcome(
        runs=runs,
        undecided=int(paired.active.sum() + (0 if unpaired is None else unpaired.active.sum())),
        paired_h1=float(np.mean(paired.verdict == 1)),
        paired_h0=float(np.mean(paired.verdict == -1)),
        paired_matches=float(np.mean(paired.observations) * m),
        unpaired_h1=blank * float(np.mean(single.verdict == 1)),
        unpaired_h0=blank * float(np.mean(single.verdict == -1)),
        unpaired_matches=blank * float(np.mean(single.observations)),
    )


#: The scenarios of docs/sprt.md's table: (label, hypotheses, table); each is simulated at
#: true Elo elo0 − gap/2, elo0, the midpoint, elo1 and elo1 + gap/2.
SCENARIOS: tuple[tuple[str, SprtParams, Table], ...] = (
    ("2 places, logistic [0, 10]", SprtParams(0.0, 10.0), Table()),
    ("2 places, logistic [0, 20]", SprtParams(0.0, 20.0), Table()),
    ("2 places, normalized [0, 20]", SprtParams(0.0, 20.0, model="normalized"), Table()),
    ("2 places, normalized [0, 40]", SprtParams(0.0, 40.0, model="normalized"), Table()),
    ("3 places, logistic [0, 10]", SprtParams(0.0, 10.0), Table(places=3)),
    ("3 places, logistic [0, 20]", SprtParams(0.0, 20.0), Table(places=3)),
)


def table_rows(runs: int, seed: int) -> list[tuple[str, float, Outcome]]:
    """(scenario, true Elo, outcome) for every row of the table; each row its own seed."""
    rows: list[tuple[str, float, Outcome]] = []
    for number, (label, params, table) in enumerate(SCENARIOS):
        gap = params.elo1 - params.elo0
        truths = (
            params.elo0 - gap / 2,
            params.elo0,
            (params.elo0 + params.elo1) / 2,
            params.elo1,
            params.elo1 + gap / 2,
        )
        for k, true_elo in enumerate(truths):
            out = simulate(params, true_elo, table=table, runs=runs, seed=seed + 100 * number + k)
            rows.append((label, true_elo, out))
    return rows


def _cell(value: float, spec: str) -> str:
    return "—" if math.isnan(value) else format(value, spec)


def render(rows: list[tuple[str, float, Outcome]]) -> str:
    """The Markdown table of docs/sprt.md."""
    lines = [
        "| scenario | true Elo | P(H1) paired | P(H1) unpaired | matches paired "
        "| matches unpaired | saved |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, true_elo, out in rows:
        cells = (
            label,
            f"{true_elo:g}",
            _cell(out.paired_h1, ".3f"),
            _cell(out.unpaired_h1, ".3f"),
            _cell(out.paired_matches, ",.0f"),
            _cell(out.unpaired_matches, ",.0f"),
            _cell(100.0 * out.saving, ".0f") + ("" if math.isnan(out.saving) else " %"),
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=4000, help="SPRT runs per row")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = table_rows(args.runs, args.seed)
    print(render(rows))
    print(
        f"\n{args.runs} runs per row, alpha = beta = 0.05, seed {args.seed}; "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
