"""Ratings on the Elo scale from one maximum-likelihood fit over all results of a game.

Each bot has a strength ``r`` on the natural-log scale (Elo = 400/ln 10 × r); a side's strength
is the mean of its bots' strengths, so partnerships rate individuals. A match of two sides is a
Davidson (1970) Bradley–Terry comparison with an explicit draw outcome; a match of three or more
sides is a Plackett–Luce ranking, where a group of tied sides counts as all of its orderings in
equal shares. A weak Gaussian prior keeps perfect records finite. The fit is a damped Newton
ascent of the log posterior with an analytic gradient and a sparse-assembled Hessian; the 95 %
intervals come from the inverse of that Hessian at the optimum (or, given clusters of correlated
matches such as the rotations of a duplicate deal, from the cluster-robust sandwich), projected
onto ratings centred on the mean of each group of bots that met, weighted by rated matches.
docs/ratings.md has the model in full, the choices, the coverage and the timings.

Internally every match becomes a few weighted *choice events*, and the fit is over them:
arena/rating_model.py. Here: the leaderboard, its groups, intervals and superiority.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg  # type: ignore[import-untyped]
import scipy.sparse  # type: ignore[import-untyped]
import scipy.sparse.csgraph  # type: ignore[import-untyped]
import scipy.special  # type: ignore[import-untyped]
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

from arena.rating_model import (
    Z95,
    Design,
    FloatArray,
    IntArray,
    Tally,
    cluster_quantile,
    cluster_robust,
    fit_posterior,
)

#: Elo points per unit of natural-log strength.
ELO_PER_NAT = 400.0 / math.log(10.0)
#: Default prior sd of each rating, in Elo: weak, it matters only for perfect records.
DEFAULT_PRIOR_SD = 1000.0
#: Prior sd of the log of Davidson's draw parameter ν (centred on ν = 1: 1/3 draws at parity).
TIE_PRIOR_SD = 3.0
#: Fields up to this size get the whole superiority matrix; larger ones the leaderboard pairs.
DEFAULT_SUPERIORITY_LIMIT = 200

# Groups of bots, each sorted by name.
_Groups = tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Entry:
    """One side of one match: the bots that formed it (one bot, or partners) and its rank.

    Rank 1 is best; equal ranks within a match are ties, and only the order of ranks matters.
    """

    bots: tuple[str, ...]
    rank: int

    def __post_init__(self) -> None:
        if not self.bots:
            raise ValueError("an Entry needs at least one bot")


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's line of the leaderboard."""

    bot: str
    #: Elo: the anchor (1500 unless asked otherwise) + the rating centred on the field mean.
    elo: float
    #: Half-width of the 95 % interval of ``elo`` (relative to the field mean weighted by rated
    #: matches: a newcomer's uncertainty stays out of the others'), in Elo.
    plus_minus: float
    #: Rated matches played (matches of two or more sides).
    matches: int
    #: Mean match score: 1 for first, 0 for last, linear in between, ties shared.
    score: float
    #: Leaderboard position, 1 = best; bots with equal Elo share it and the next rank skips
    #: the places they fill (1, 1, 3: standard competition ranking).
    rank: int


@dataclass(frozen=True, slots=True)
class RatingTable:
    """The fitted leaderboard of one game."""

    #: Best first.
    ratings: tuple[Rating, ...]
    #: Likelihood of superiority, P(a is stronger than b), for ordered pairs of distinct bots
    #: (every pair up to ``superiority_limit`` bots, else neighbours on the leaderboard).
    superiority: dict[tuple[str, str], float]
    #: Rated matches the fit used.
    matches: int = 0
    #: Fitted nuisance parameters: ``davidson_nu`` (draw propensity of two-sided matches) when
    #: two-sided draws occurred.
    parameters: dict[str, float] = field(default_factory=dict)
    #: The groups of bots connected by matches, largest first, each sorted by name. More than
    #: one: groups that never met are not comparable; each is centred on the anchor and ranked
    #: on its own (the leaderboard lists them one after another).
    components: tuple[tuple[str, ...], ...] = ()
    #: For the same pairs: the standard error of Elo(a) − Elo(b), which no choice of anchor
    #: changes (a bot's own ± also holds the uncertainty of the field mean it is centred on).
    difference_sd: dict[tuple[str, str], float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form; superiority as ``{a: {b: P(a > b)}}``, difference_sd alike."""
        los: dict[str, dict[str, float]] = {}
        for (a, b), p in self.superiority.items():
            los.setdefault(a, {})[b] = p
        sds: dict[str, dict[str, float]] = {}
        for (a, b), sd in self.difference_sd.items():
            sds.setdefault(a, {})[b] = sd
        return {
            "matches": self.matches,
            "ratings": [
                {
                    "rank": r.rank,
                    "bot": r.bot,
                    "elo": r.elo,
                    "plus_minus": r.plus_minus,
                    "matches": r.matches,
                    "score": r.score,
                }
                for r in self.ratings
            ],
            "superiority": los,
            "difference_sd": sds,
            "parameters": dict(self.parameters),
            "components": [list(group) for group in self.components],
        }

    def render(self) -> str:
        """A plain-text leaderboard: rank, bot, Elo, ±, matches, score."""
        header = ("rank", "bot", "Elo", "±", "matches", "score")
        rows = [
            (
                str(r.rank),
                r.bot,
                f"{r.elo:.0f}",
                f"{r.plus_minus:.0f}",
                str(r.matches),
                f"{r.score:.3f}",
            )
            for r in self.ratings
        ]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        lines = []
        for row in [header, *rows]:
            cells = [
                cell.ljust(widths[i]) if i == 1 else cell.rjust(widths[i])
                for i, cell in enumerate(row)
            ]
            lines.append("  ".join(cells).rstrip())
        if not rows:
            lines.append("(no bots)")
        lines.append(f"{self.matches} rated matches; ± is the 95 % interval.")
        warning = self.disconnected_warning()
        if warning:
            lines.append(warning)
        return "\n".join(lines)

    def disconnected_warning(self) -> str:
        """One line naming the groups when some bots never met (directly or through others);
        ``""`` when they all did."""
        if len(self.components) < 2:
            return ""

        def named(group: tuple[str, ...]) -> str:
            shown = ", ".join(group[:5])
            return "{" + shown + (f", … {len(group) - 5} more" if len(group) > 5 else "") + "}"

        groups = "; ".join(named(g) for g in self.components)
        return (
            f"Warning: {len(self.components)} groups never met and are not comparable (each is"
            f" centred on the anchor and ranked on its own): {groups}."
        )

    def render_superiority(self) -> str:
        """The likelihood-of-superiority matrix as text, leaderboard order: the cell in row a,
        column b is P(a is stronger than b) in percent; ``""`` when a pair is not tabled."""
        bots = [r.bot for r in self.ratings]
        if len(bots) < 2 or any(
            (a, b) not in self.superiority for a in bots for b in bots if a != b
        ):
            return ""
        width = max(4, *(len(b) for b in bots))
        lines = [" " * width + "".join(f"  {b:>{width}}" for b in bots)]
        for a in bots:
            cells = (
                f"  {'-':>{width}}" if a == b else f"  {100 * self.superiority[a, b]:>{width}.0f}"
                for b in bots
            )
            lines.append(f"{a:<{width}}" + "".join(cells))
        return "\n".join(lines)


def fit_ratings(
    matches: Sequence[Sequence[Entry]],
    prior_sd: float = DEFAULT_PRIOR_SD,
    *,
    anchor: float = 1500.0,
    superiority_limit: int = DEFAULT_SUPERIORITY_LIMIT,
    clusters: Sequence[Hashable] | None = None,
) -> RatingTable:
    """Fit Elo ratings to ``matches`` (each a sequence of its sides) and build the leaderboard.

    ``prior_sd`` is the sd of the Gaussian prior on each rating, in Elo. Matches with fewer
    than two sides carry no information; their bots are listed with zero rated matches.
    ``anchor`` is the Elo of the field mean (of each group's mean when some bots never met:
    :attr:`RatingTable.components`). ``clusters``, one id per match, groups the matches whose
    results are not independent (the rotations of one duplicate deal): the intervals and the
    likelihood of superiority then come from the cluster-robust covariance; the ratings are
    the same.
    """
    if not prior_sd > 0:
        raise ValueError("prior_sd must be positive")
    if clusters is not None and len(clusters) != len(matches):
        raise ValueError(f"{len(clusters)} cluster ids for {len(matches)} matches")
    tally = Tally()
    if clusters is None:
        for match in matches:
            tally.add(match)
    else:
        ids: dict[Hashable, int] = {}
        for match, key in zip(matches, clusters, strict=True):
            tally.add(match, ids.setdefault(key, len(ids)))
    n = len(tally.bots)
    if n == 0:
        return RatingTable(ratings=(), superiority={}, matches=0)
    played, score_sum = tally.totals()
    design = Design.build(tally)
    precision = np.full(design.n_params, (ELO_PER_NAT / prior_sd) ** 2)
    precision[n:] = 1.0 / TIE_PRIOR_SD**2
    group, groups, seen_in = _components(design, n, tally.bots)
    quantile = np.full(n, Z95)
    with _one_blas_thread():
        theta, cov = fit_posterior(design, precision)
        if clusters is not None:
            robust = cluster_robust(design, theta, cov, precision)
            # A bot's variance is measured by the spread of its own clusters' scores: with
            # G of them, Student's t on G − 1 degrees of freedom. A bot in one cluster only
            # has no spread to measure; its variance stays the model's.
            quantile = cluster_quantile(seen_in)
            if (seen_in < 2).any():
                keep = np.append(seen_in < 2, np.zeros(design.n_params - n, dtype=bool))
                robust[keep, :] = cov[keep, :]
                robust[:, keep] = cov[:, keep]
            cov = robust
    # Each group is centred on its own mean: between groups only the prior speaks, so their
    # offset is no estimate (the prior puts every group's mean at 0 anyway).
    sizes = np.bincount(group).astype(np.float64)
    r = theta[:n] - (np.bincount(group, theta[:n]) / sizes)[group]
    c = cov[:n, :n]
    sd = _relative_sd(group, played, c, len(sizes))
    elo = anchor + ELO_PER_NAT * r
    rounded = [round(float(x), 6) for x in elo]
    # Group by group (largest first), each ranked from 1: ranks across groups mean nothing.
    order = sorted(range(n), key=lambda i: (int(group[i]), -rounded[i], tally.bots[i]))

    ratings: list[Rating] = []
    start = 0  # position of the group's first bot
    for pos, i in enumerate(order):
        first = pos == 0 or group[i] != group[order[pos - 1]]
        start = pos if first else start
        shares = not first and rounded[i] == rounded[order[pos - 1]]
        ratings.append(
            Rating(
                bot=tally.bots[i],
                # Rounded as the order is: ratings equal by symmetry then also read equal.
                elo=rounded[i],
                plus_minus=float(quantile[i] * ELO_PER_NAT * sd[i]),
                matches=int(played[i]),
                score=float(score_sum[i] / played[i]) if played[i] else 0.0,
                # Standard competition ranking (1, 1, 3): a tie takes the places it fills.
                rank=ratings[-1].rank if shares else pos - start + 1,
            )
        )
    every_pair = n <= superiority_limit
    superiority, difference_sd = _superiority(tally.bots, order, group, r, c, every_pair)
    return RatingTable(
        ratings=tuple(ratings),
        superiority=superiority,
        difference_sd=difference_sd,
        matches=tally.rated,
        parameters={"davidson_nu": math.exp(theta[n])} if design.has_draw_param else {},
        components=groups,
    )


def _relative_sd(group: IntArray, played: FloatArray, c: FloatArray, n_groups: int) -> FloatArray:
    """Each rating's sd relative to its group's mean weighted by rated matches."""
    n = len(group)
    # The interval of each rating relative to its group's mean weighted by rated matches: the
    # diagonal of P C Pᵀ with P = I - (block-diagonal weighted averaging). Uncentred, the
    # prior's freedom along each group's mean would inflate every interval; centred on the
    # plain mean, a newcomer with two matches, known to ± several hundred Elo, would put a
    # share of its uncertainty into every settled bot's interval (docs/ratings.md,
    # "Intervals"). The two means differ by one offset common to the group: no comparison
    # between its bots depends on it.
    weight = _centring_weights(group, played)
    member = scipy.sparse.csr_matrix((weight, (np.arange(n), group)), (n, n_groups))
    row_means = np.asarray(member.T @ c).T[np.arange(n), group]  # Σ_j w_j C_ij, j in i's group
    block_means = np.bincount(group, weight * row_means)  # Σ_jk w_j w_k C_jk per group
    var = np.diag(c) - 2.0 * row_means + block_means[group]
    sd: FloatArray = np.sqrt(np.clip(var, 0.0, None))
    return sd


def _centring_weights(group: IntArray, played: FloatArray) -> FloatArray:
    """Each bot's weight in its group's mean: its share of the group's rated matches (a group
    without any: equal shares). Summing to 1 in each group."""
    totals = np.bincount(group, played)
    sizes = np.bincount(group).astype(np.float64)
    empty = (totals == 0.0)[group]
    share = np.where(empty, 1.0, played) / np.where(empty, sizes[group], totals[group])
    weights: FloatArray = share
    return weights


def _components(design: Design, n: int, bots: list[str]) -> tuple[IntArray, _Groups, IntArray]:
    """The groups of bots connected by matches: each bot's group number and the groups' bots,
    largest group first (then by name), each group's bots by name; and the number of
    clusters each bot played in."""
    event_of_row = np.repeat(np.arange(len(design.sizes), dtype=np.int64), design.sizes)
    a = design.a
    if isinstance(a, np.ndarray):
        rows, cols = np.nonzero(a[:, :n])
    else:
        coo = a.tocoo()
        keep = (coo.col < n) & (coo.data != 0.0)
        rows, cols = coo.row[keep], coo.col[keep]
    # Bots 0…n-1 and events n…: a bot is linked to every event it takes part in.
    links = scipy.sparse.coo_matrix(
        (np.ones(len(rows)), (cols, n + event_of_row[rows])),
        shape=(n + len(design.sizes),) * 2,
    )
    _, label = scipy.sparse.csgraph.connected_components(links, directed=False)
    members: dict[int, list[str]] = {}
    for i, lab in enumerate(label[:n].tolist()):
        members.setdefault(lab, []).append(bots[i])
    ordered = sorted(members.items(), key=lambda kv: (-len(kv[1]), min(kv[1])))
    renumber = {lab: k for k, (lab, _) in enumerate(ordered)}
    group = np.array([renumber[lab] for lab in label[:n].tolist()], dtype=np.int64)
    pairs = np.unique(design.cluster[event_of_row[rows]] * n + cols)
    seen_in = np.bincount(pairs % n, minlength=n)
    return group, tuple(tuple(sorted(names)) for _, names in ordered), seen_in


#: Environment variables by which a user chooses BLAS's threads; when one is set it is obeyed.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_blas: ThreadpoolController | None = None
# Limits are process-wide: concurrent fits take turns, so each restores what it found.
_blas_lock = threading.Lock()


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS on one thread for the fit, unless the user chose a number (docs/ratings.md).

    OpenBLAS starts a thread per core; for the Hessians and Cholesky factors of a fit (up to
    a few thousand rows) they cost more than they bring, and on a machine busy with bots they
    spin against them. So the fit runs on one thread, the better choice on a quiet machine and
    more so under load (docs/performance.md, "Ratings", has the figures).
    """
    global _blas
    if any(name in os.environ for name in BLAS_THREAD_VARIABLES):
        yield
        return
    with _blas_lock:
        if _blas is None:
            _blas = ThreadpoolController()  # scans the loaded libraries for BLAS, once
        with _blas.limit(limits=1, user_api="blas"):
            yield


def _superiority(
    bots: list[str],
    order: list[int],
    group: IntArray,
    r: FloatArray,
    cov: FloatArray,
    every_pair: bool,
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """P(a stronger than b) from the normal approximation of the estimated difference; 1/2
    between groups that never met (nothing but the symmetric prior compares them). And the
    difference's standard error in Elo (none between groups: their offset is no estimate)."""
    n = len(order)
    if every_pair:
        first, second = np.triu_indices(n, 1)
    else:
        first = np.arange(n - 1)
        second = first + 1
    ranked = np.array(order, dtype=np.int64)
    a, b = ranked[first], ranked[second]
    diff = r[a] - r[b]
    var = cov[a, a] + cov[b, b] - 2.0 * cov[a, b]
    positive = var > 0.0
    z = np.where(positive, diff / np.sqrt(np.where(positive, var, 1.0)), 0.0)
    p = np.where(positive, scipy.special.ndtr(z), np.where(diff == 0.0, 0.5, diff > 0.0))
    p = np.where(group[a] == group[b], p, 0.5)
    sd = ELO_PER_NAT * np.sqrt(np.clip(var, 0.0, None))
    result: dict[tuple[str, str], float] = {}
    spread: dict[tuple[str, str], float] = {}
    met = (group[a] == group[b]).tolist()
    for k, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        pij, sij = float(p[k]), float(sd[k])
        result[bots[i], bots[j]] = pij
        result[bots[j], bots[i]] = 1.0 - pij
        if met[k]:
            spread[bots[i], bots[j]] = spread[bots[j], bots[i]] = sij
    return result, spread


def _benchmark(argv: Sequence[str]) -> None:
    """``python -m arena.ratings BOTS RESULTS [PLAYERS [SEED]]``: time fits of simulated results.

    Each result seats PLAYERS (default 2) distinct random bots, strengths N(0, 174 Elo), and
    ranks them by strength plus Gumbel noise: exactly Bradley–Terry / Plackett–Luce.
    """
    import time

    n_bots, n_results = int(argv[0]), int(argv[1])
    players = int(argv[2]) if len(argv) > 2 else 2
    rng = np.random.default_rng(int(argv[3]) if len(argv) > 3 else 0)
    truth = rng.normal(0.0, 1.0, n_bots)  # sd 1 nat ≈ 174 Elo
    seats = rng.integers(0, n_bots, (n_results, players))
    while True:  # redraw the tables that seat a bot twice
        ordered = np.sort(seats, axis=1)
        clash = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        if not clash.any():
            break
        seats[clash] = rng.integers(0, n_bots, (int(clash.sum()), players))
    noisy = truth[seats] + rng.gumbel(size=seats.shape)
    ranks = 1 + (noisy[:, None, :] > noisy[:, :, None]).sum(axis=2)
    names = [f"bot{i:04d}" for i in range(n_bots)]
    matches = [
        [Entry((names[i],), rank) for i, rank in zip(table, ranked, strict=True)]
        for table, ranked in zip(seats.tolist(), ranks.tolist(), strict=True)
    ]
    fit_ratings(matches[:10])  # warm-up: imports and first-call costs
    wall, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        table = fit_ratings(matches)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    elo = {r.bot: r.elo for r in table.ratings}
    corr = np.corrcoef(truth, [elo[name] for name in names])[0, 1]
    print(
        f"{n_bots} bots, {n_results} results of {players}: wall best {min(wall) * 1000:.1f} ms,"
        f" median {sorted(wall)[1] * 1000:.1f} ms; CPU best {min(cpu) * 1000:.1f} ms;"
        f" correlation with truth {corr:.4f}"
    )


if __name__ == "__main__":
    import sys

    _benchmark(sys.argv[1:])
