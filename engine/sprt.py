"""The statistics of a sequential probability ratio test: is the candidate better than the baseline?

The test plays *units* one after another and stops as soon as the evidence is strong enough. A
unit is one duplicate deal played in every rotation of the table's places between the candidate
and the baseline (arena/host/matchmaking.py ``unit_matches``); its score is the candidate's mean
match score over the unit's matches (arena/ratings.py: 1 for first, 0 for last, linear in
between, ties shared). Rotations of one deal share its luck, so the unit, not the match, is the
independent trial: for two rotations of a two-sided game the unit score is the pentanomial pair
score in {0, 1/4, 1/2, 3/4, 1}; other table shapes give other finite sets, and the tally keeps
the empirical distribution of whatever values occur ("multinomial").

The log-likelihood ratio is the generalized SPRT of Michel Van den Bergh, in the normal
approximation fishtest uses (its ``LLR_drift_variance_alt2``)::

    LLR = N (s1 − s0) (2 x̄ − s0 − s1) / (2 σ²)

with N units of mean score x̄ and (population) variance σ², and s0, s1 the expected unit scores
under H0 and H1. Logistic Elo: s = 1 / (1 + 10^(−elo/400)). Normalized Elo, as in fishtest and
fastchess: s = 1/2 + elo / (800/ln 10) × σ_match, where σ_match = sqrt(m × σ²) is the per-match
standard deviation that m independent matches per unit would need to give the unit's variance
(for pentanomial pairs, fishtest's sqrt(2 σ²_pair)). The test accepts H1 once LLR ≥ ln((1−β)/α)
and H0 once LLR ≤ ln(β/(1−α)).

Pure: no I/O, no clock, no randomness. docs/sprt.md has the formulas, the simulated error rates
and sample sizes; benchmarks/sprt_simulation.py regenerates them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

Model = Literal["logistic", "normalized"]
Verdict = Literal["H0", "H1"]
MODELS: tuple[str, ...] = get_args(Model)

#: Normalized Elo per unit of t-value per match (fishtest's ``nelo_divided_by_nt``).
NELO_PER_T = 800.0 / math.log(10.0)
#: Two-sided 95 % quantile of the standard normal.
Z95 = 1.959963984540054
#: Unit scores are keyed rounded to this many decimals, so that one value reached by different
#: float sums (thirds, sixths) counts as one point of the distribution.
_KEY_DIGITS = 12


@dataclass(frozen=True, slots=True)
class SprtParams:
    """H0: the candidate is ``elo0`` better than the baseline; H1: it is ``elo1`` better.

    ``alpha`` is the chance of accepting H1 when H0 is true (a false pass), ``beta`` that of
    accepting H0 when H1 is true (a false fail). ``model`` says what ``elo0``/``elo1`` mean:
    logistic Elo, or normalized Elo (per-match standard deviations, scaled like fishtest's).
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "logistic"

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"SPRT {name} must be a number, not {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"SPRT {name} must be finite, not {value}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT elo0 must be below elo1, got elo0={self.elo0} elo1={self.elo1}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"SPRT {name} must be in (0, 0.5), got {value}")
        if self.model not in MODELS:
            raise ValueError(f"SPRT model must be one of {', '.join(MODELS)}, not {self.model!r}")


def bounds(params: SprtParams) -> tuple[float, float]:
    """Wald's stopping bounds on the LLR: (accept H0 at or below, accept H1 at or above)."""
    return (
        math.log(params.beta / (1.0 - params.alpha)),
        math.log((1.0 - params.beta) / params.alpha),
    )


def score_of_elo(elo: float) -> float:
    """Expected score of a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of_score(score: float) -> float:
    """Logistic Elo difference of an expected score; ±inf at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(slots=True)
class SprtTally:
    """Units played so far: how many of each unit score, and how many matches they held.

    Mutable and cheap: :meth:`add` per finished unit, :meth:`merge` to pool tallies.
    """

    _counts: dict[float, int] = field(default_factory=dict, init=False)
    units: int = field(default=0, init=False)
    matches: int = field(default=0, init=False)

    @classmethod
    def from_counts(cls, counts: Mapping[float, int], matches_per_unit: int = 1) -> SprtTally:
        """A tally of ``counts[score]`` units of each score, ``matches_per_unit`` matches each.

        ``from_counts({0: LL, 0.25: LD, 0.5: DD + WL, 0.75: WD, 1: WW}, 2)`` is a pentanomial;
        ``from_counts({0: L, 0.5: D, 1: W})`` a trinomial of single matches.
        """
        tally = cls()
        for score, count in counts.items():
            tally.add(score, matches_per_unit, count=count)
        return tally

    def add(self, unit_score: float, matches: int = 1, *, count: int = 1) -> None:
        """Record ``count`` units (default one) of score ``unit_score`` and ``matches`` matches
        each; ``matches`` is the unit's number of rotations (1: a unit is a single match)."""
        if isinstance(unit_score, bool) or not isinstance(unit_score, int | float):
            raise ValueError(f"a unit score must be a number, not {unit_score!r}")
        if not 0.0 <= unit_score <= 1.0:
            raise ValueError(f"a unit score must be in [0, 1], got {unit_score}")
        if isinstance(matches, bool) or not isinstance(matches, int) or matches < 1:
            raise ValueError(f"a unit holds at least one match, got matches={matches!r}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"a unit count must be a non-negative integer, got {count!r}")
        if count == 0:
            return
        key = round(float(unit_score), _KEY_DIGITS)
        self._counts[key] = self._counts.get(key, 0) + count
        self.units += count
        self.matches += matches * count

    def merge(self, other: SprtTally) -> None:
        """Add every unit of ``other`` to this tally (e.g. from another worker)."""
        for key, count in other._counts.items():
            self._counts[key] = self._counts.get(key, 0) + count
        self.units += other.units
        self.matches += other.matches

    @property
    def counts(self) -> dict[float, int]:
        """The empirical distribution: units per distinct score, scores ascending."""
        return dict(sorted(self._counts.items()))

    @property
    def mean(self) -> float:
        """Mean unit score x̄; 0.5 (parity) before any unit."""
        if not self.units:
            return 0.5
        return sum(score * n for score, n in self._counts.items()) / self.units

    @property
    def variance(self) -> float:
        """Population variance σ² of the unit scores (divided by N, as the GSPRT's MLE is);
        exactly 0 while every unit has the same score."""
        if len(self._counts) < 2:
            return 0.0
        mean = self.mean
        return sum(n * (score - mean) ** 2 for score, n in self._counts.items()) / self.units

    @property
    def matches_per_unit(self) -> float:
        """Mean number of matches per unit (the m of normalized Elo); 1 before any unit."""
        return self.matches / self.units if self.units else 1.0


def _spread(tally: SprtTally) -> tuple[float, float]:
    """The mean and variance the LLR uses: the tally's; or, when every unit scored the same (no
    spread at all, as two copies of one deterministic bot give: duplicate deals mirror their
    results exactly), those with one pseudo-unit split between the extremes 0 and 1 added. That
    keeps the approximation defined (it divides by σ²) and lets identical results count as
    evidence, slowly: a few units decide nothing, a few dozen do."""
    mean, variance = tally.mean, tally.variance
    if variance > 0.0 or not tally.units:
        return mean, variance
    n = tally.units
    m = (n * mean + 0.5) / (n + 1)
    return m, (n * (mean - m) ** 2 + 0.5 * m**2 + 0.5 * (1.0 - m) ** 2) / (n + 1)


def expected_scores(tally: SprtTally, params: SprtParams) -> tuple[float, float]:
    """The expected unit scores (s0, s1) under H0 and H1.

    Normalized Elo is relative to the spread (:func:`_spread`), so its scores move with the
    tally; with no units yet both are 0.5.
    """
    if params.model == "logistic":
        return score_of_elo(params.elo0), score_of_elo(params.elo1)
    sigma_match = math.sqrt(tally.matches_per_unit * _spread(tally)[1])
    return (
        0.5 + params.elo0 / NELO_PER_T * sigma_match,
        0.5 + params.elo1 / NELO_PER_T * sigma_match,
    )


def llr(tally: SprtTally, params: SprtParams) -> float:
    """The GSPRT log-likelihood ratio of H1 over H0, normal approximation; 0 with no units."""
    mean, variance = _spread(tally)
    if variance <= 0.0:
        return 0.0
    s0, s1 = expected_scores(tally, params)
    return tally.units * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@dataclass(frozen=True, slots=True)
class SprtStatus:
    """Where the test stands after the tally's units.

    ``verdict`` is "H1" (the candidate is better by about ``elo1`` or more: pass), "H0" (it is
    not better than about ``elo0``: fail) or None (keep playing). ``elo`` is the logistic Elo of
    the mean unit score, with ``elo_low``..``elo_high`` its 95 % interval (the normal interval
    of x̄ mapped through the Elo curve; ±inf where it reaches 0 or 1); ``nelo`` the same in
    normalized Elo. ``los`` is the likelihood of superiority, P(true score > 1/2). Until there
    is variance the intervals are unbounded and ``los`` is 0.5. The estimates are those of a
    fixed sample: a stopped SPRT's estimate leans towards the hypothesis it accepted.
    """

    llr: float
    lower: float
    upper: float
    verdict: Verdict | None
    elo: float
    elo_low: float
    elo_high: float
    nelo: float
    nelo_low: float
    nelo_high: float
    los: float
    units: int
    matches: int

    def summary(self) -> str:
        """One line, e.g. ``Elo 11.8 [1.7, 21.9] nElo 18.2 [2.6, 33.7] LOS 98.9% LLR 2.57
        [-2.94, 2.94] continue, 960 units, 1920 matches``."""
        verdict = {"H0": "H0 accepted", "H1": "H1 accepted", None: "continue"}[self.verdict]
        return (
            f"Elo {self.elo:.1f} [{self.elo_low:.1f}, {self.elo_high:.1f}] "
            f"nElo {self.nelo:.1f} [{self.nelo_low:.1f}, {self.nelo_high:.1f}] "
            f"LOS {100.0 * self.los:.1f}% "
            f"LLR {self.llr:.2f} [{self.lower:.2f}, {self.upper:.2f}] {verdict}, "
            f"{self.units} units, {self.matches} matches"
        )


def verdict_of(value: float, params: SprtParams) -> Verdict | None:
    """The SPRT's decision for an LLR: "H1" at or above the upper bound, "H0" at or below the
    lower one, else None."""
    lower, upper = bounds(params)
    if value >= upper:
        return "H1"
    if value <= lower:
        return "H0"
    return None


def status(tally: SprtTally, params: SprtParams) -> SprtStatus:
    """The LLR, the bounds, the verdict and the Elo estimates for ``tally``."""
    value = llr(tally, params)
    lower, upper = bounds(params)
    mean = tally.mean
    elo = elo_of_score(mean)
    n = tally.units
    variance = tally.variance
    if variance > 0.0:
        # The interval uses the unbiased variance (n ≥ 2 here: two distinct scores).
        se = math.sqrt(variance / (n - 1))
        elo_low = elo_of_score(max(0.0, mean - Z95 * se))
        elo_high = elo_of_score(min(1.0, mean + Z95 * se))
        sigma_match = math.sqrt(tally.matches_per_unit * variance)
        nelo = (mean - 0.5) / sigma_match * NELO_PER_T
        half = Z95 * se / sigma_match * NELO_PER_T
        nelo_low, nelo_high = nelo - half, nelo + half
        los = _normal_cdf((mean - 0.5) / se)
    else:
        elo_low, elo_high = -math.inf, math.inf
        nelo = 0.0 if mean == 0.5 else math.copysign(math.inf, mean - 0.5)
        nelo_low, nelo_high = -math.inf, math.inf
        los = 0.5
    return SprtStatus(
        llr=value,
        lower=lower,
        upper=upper,
        verdict=verdict_of(value, params),
        elo=elo,
        elo_low=elo_low,
        elo_high=elo_high,
        nelo=nelo,
        nelo_low=nelo_low,
        nelo_high=nelo_high,
        los=los,
        units=n,
        matches=tally.matches,
    )
