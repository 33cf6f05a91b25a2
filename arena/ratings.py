"""Ratings on the Elo scale from one maximum-likelihood fit over all results of a game.

Each bot has a strength ``r`` on the natural-log scale (Elo = 400/ln 10 × r); a side's strength
is the mean of its bots' strengths, so partnerships rate individuals. A match of two sides is a
Davidson (1970) Bradley–Terry comparison with an explicit draw outcome; a match of three or more
sides is a Plackett–Luce ranking, where a group of tied sides counts as all of its orderings in
equal shares. A weak Gaussian prior keeps perfect records finite. The fit is a damped Newton
ascent of the log posterior with an analytic gradient and a sparse-assembled Hessian; the 95 %
intervals come from the inverse of that Hessian at the optimum (or, given clusters of correlated
matches such as the rotations of a duplicate deal, from the cluster-robust sandwich), projected
onto ratings centred on the mean of each group of bots that met. docs/ratings.md has the model
in full, the choices, the coverage and the timings.

Internally every match becomes a few *choice events*: a weight, the linear form of what was
chosen, and the alternatives, each alternative ``t`` having the utility ``a_t · θ + b_t``. The
negative log posterior is ``Σ w (logsumexp(A θ + b) − c · θ) + prior``, convex in θ, for all
three models alike.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.linalg  # type: ignore[import-untyped]
import scipy.sparse  # type: ignore[import-untyped]
import scipy.sparse.csgraph  # type: ignore[import-untyped]
import scipy.special  # type: ignore[import-untyped]
import scipy.stats  # type: ignore[import-untyped]
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Elo points per unit of natural-log strength.
ELO_PER_NAT = 400.0 / math.log(10.0)
#: Two-sided 95 % quantile of the standard normal.
Z95 = 1.959963984540054
#: Default prior sd of each rating, in Elo: weak, it matters only for perfect records.
DEFAULT_PRIOR_SD = 1000.0
#: Prior sd of the log of Davidson's draw parameter ν (centred on ν = 1: 1/3 draws at parity).
TIE_PRIOR_SD = 3.0
#: A tied group's stage is averaged exactly over this many subsets at most, then mean-field.
EXACT_TIE_SUBSETS = 20
#: Fields up to this size get the whole superiority matrix; larger ones the leaderboard pairs.
DEFAULT_SUPERIORITY_LIMIT = 200
#: Design matrices up to this many cells are dense (fast for small fields), larger ones sparse.
DENSE_LIMIT = 200_000
#: Newton stops when the squared Newton decrement (twice the expected gain) falls below this.
NEWTON_TOLERANCE = 1e-12
MAX_NEWTON_STEPS = 100

# A sparse linear form over the parameters: ((column, coefficient), ...), sorted by column.
_Row = tuple[tuple[int, float], ...]
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
    #: Half-width of the 95 % interval of ``elo`` (relative to the field mean), in Elo.
    plus_minus: float
    #: Rated matches played (matches of two or more sides).
    matches: int
    #: Mean match score: 1 for first, 0 for last, linear in between, ties shared.
    score: float
    #: Leaderboard position, 1 = best; bots with equal Elo share it.
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
    tally = _Tally()
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
    design = _Design.build(tally)
    precision = np.full(design.n_params, (ELO_PER_NAT / prior_sd) ** 2)
    precision[n:] = 1.0 / TIE_PRIOR_SD**2
    group, groups, seen_in = _components(design, n, tally.bots)
    quantile = np.full(n, Z95)
    with _one_blas_thread():
        theta, cov = _fit(design, precision)
        if clusters is not None:
            robust = _cluster_robust(design, theta, cov, precision)
            # A bot's variance is measured by the spread of its own clusters' scores: with
            # G of them, Student's t on G − 1 degrees of freedom. A bot in one cluster only
            # has no spread to measure; its variance stays the model's.
            quantile = np.where(seen_in >= 2, scipy.stats.t.ppf(0.975, seen_in - 1.0), Z95)
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
    # The interval of each rating relative to its group's mean: the diagonal of P C P with
    # P = I - (block-diagonal averaging). Uncentred, the prior's freedom along each group's
    # mean would inflate every interval.
    member = scipy.sparse.csr_matrix((1.0 / sizes[group], (np.arange(n), group)), (n, len(sizes)))
    row_means = np.asarray(member.T @ c).T[np.arange(n), group]  # mean of C_ij, j in i's group
    block_means = np.bincount(group, row_means) / sizes
    var = np.diag(c) - 2.0 * row_means + block_means[group]
    sd = np.sqrt(np.clip(var, 0.0, None))
    elo = anchor + ELO_PER_NAT * r
    rounded = [round(float(x), 6) for x in elo]
    # Group by group (largest first), each ranked from 1: ranks across groups mean nothing.
    order = sorted(range(n), key=lambda i: (int(group[i]), -rounded[i], tally.bots[i]))

    ratings: list[Rating] = []
    for pos, i in enumerate(order):
        first = pos == 0 or group[i] != group[order[pos - 1]]
        shares = not first and rounded[i] == rounded[order[pos - 1]]
        ratings.append(
            Rating(
                bot=tally.bots[i],
                # Rounded as the order is: ratings equal by symmetry then also read equal.
                elo=rounded[i],
                plus_minus=float(quantile[i] * ELO_PER_NAT * sd[i]),
                matches=int(played[i]),
                score=float(score_sum[i] / played[i]) if played[i] else 0.0,
                rank=1 if first else ratings[-1].rank if shares else ratings[-1].rank + 1,
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


def _components(design: _Design, n: int, bots: list[str]) -> tuple[IntArray, _Groups, IntArray]:
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


def _cluster_robust(
    design: _Design, theta: FloatArray, cov: FloatArray, precision: FloatArray
) -> FloatArray:
    """The cluster-robust (sandwich) covariance H⁻¹ (k Σ_c g_c g_cᵀ + Λ) H⁻¹ (docs/ratings.md).

    g_c is cluster c's summed score (gradient of its negative log-likelihood) at the optimum,
    k = C/(C−1) for C clusters. Λ, the prior's precision, stands in the meat as it does in the
    model-based H⁻¹ = H⁻¹ (J + Λ) H⁻¹: the sandwich replaces only the data's information J by
    what the clusters' scores show, so a perfect record keeps its prior-wide interval.
    """
    e = len(design.sizes)
    active = np.unique(design.cluster)
    if len(active) < 2:
        return cov  # one cluster: no spread to measure, the model's covariance stands
    a, sizes, starts, w = design.a, design.sizes, design.starts, design.w
    u = a @ theta + design.b
    top = np.maximum.reduceat(u, starts)
    z = np.exp(u - np.repeat(top, sizes))
    p = z / np.repeat(np.add.reduceat(z, starts), sizes)
    shape = (e, design.n_params)
    chosen = scipy.sparse.coo_matrix((design.chosen[2], design.chosen[:2]), shape=shape)
    of_cluster = scipy.sparse.csr_matrix(
        (np.ones(e), (design.cluster, np.arange(e))), (design.n_clusters, e)
    )
    if isinstance(a, np.ndarray):
        m = np.add.reduceat(p[:, None] * a, starts, axis=0)
        g = of_cluster @ (w[:, None] * m - chosen.toarray())
        meat = g.T @ g
    else:
        indptr = np.concatenate(([0], np.cumsum(sizes)))
        m = scipy.sparse.csr_matrix((p, np.arange(len(p)), indptr), (e, len(p))) @ a
        g = of_cluster @ (scipy.sparse.diags(w) @ m - chosen.tocsr())
        meat = (g.T @ g).toarray()
    k = len(active) / (len(active) - 1.0)
    robust: FloatArray = cov @ (k * meat + np.diag(precision)) @ cov
    return robust


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


# An event: its alternatives (linear form, offset) and the linear form of what was chosen.
_EventKey = tuple[tuple[tuple[_Row, float], ...], _Row]


class _Tally:
    """One pass over the matches: bots, score tallies and the information for the design.

    The common shapes go to flat lists that numpy turns into events: two single-bot sides
    (any result) and rankings of distinct single bots without ties. Everything else (partners,
    ties in rankings, a bot in two seats of a ranking) becomes keyed events here. Identical
    events of one cluster merge into one with their count as weight (without clusters every
    match is in cluster 0), so each event belongs to one cluster.
    """

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.bots: list[str] = []
        self.rated = 0
        #: Single bot against single bot: i <= j; outcome 0 i ahead, 1 j ahead, 2 drawn.
        self.duel_cluster: list[int] = []
        self.duel_i: list[int] = []
        self.duel_j: list[int] = []
        self.duel_outcome: list[int] = []
        #: Strict rankings of distinct single bots, (cluster, best, …, worst), by number of sides.
        self.orders: dict[int, list[tuple[int, ...]]] = {}
        #: Other two-sided matches: (cluster, row of side 0, row of side 1, outcome) → count.
        self.duels: dict[tuple[int, _Row, _Row, int], float] = {}
        #: Choice events of the other matches with three or more sides, by cluster.
        self.events: dict[tuple[int, _EventKey], float] = {}
        #: Clusters seen (ids 0, 1, …).
        self.n_clusters = 0
        self._played: dict[int, int] = {}
        self._score: dict[int, float] = {}

    def _bot(self, name: str) -> int:
        i = self.index.get(name)
        if i is None:
            i = self.index[name] = len(self.bots)
            self.bots.append(name)
        return i

    def add(self, match: Sequence[Entry], cluster: int = 0) -> None:
        """Tally one match (any number of sides) of ``cluster`` (ids from 0)."""
        self.n_clusters = max(self.n_clusters, cluster + 1)
        single = all(len(entry.bots) == 1 for entry in match)
        if single and len(match) == 2:
            self.rated += 1
            self.duel_cluster.append(cluster)
            i, j = self._bot(match[0].bots[0]), self._bot(match[1].bots[0])
            rank_i, rank_j = match[0].rank, match[1].rank
            if i > j:
                i, j, rank_i, rank_j = j, i, rank_j, rank_i
            self.duel_i.append(i)
            self.duel_j.append(j)
            self.duel_outcome.append(0 if rank_i < rank_j else 1 if rank_j < rank_i else 2)
            return
        sides = [[self._bot(b) for b in entry.bots] for entry in match]
        if len(match) < 2:
            return
        self.rated += 1
        if single:
            ranked = sorted((entry.rank, ids[0]) for entry, ids in zip(match, sides, strict=True))
            order = tuple(i for _, i in ranked)
            if len({r for r, _ in ranked}) == len(order) == len(set(order)):
                self.orders.setdefault(len(order), []).append((cluster, *order))
                return
        ranks = sorted({e.rank for e in match})
        groups = [[j for j, e in enumerate(match) if e.rank == rank] for rank in ranks]
        # Position p of n is worth (n-1-p)/(n-1); a tied group shares its positions.
        last = len(match) - 1
        seat_score = [0.0] * len(match)
        start = 0
        for group in groups:
            for j in group:
                seat_score[j] = (last - start - (len(group) - 1) / 2) / last
            start += len(group)
        per_bot: dict[int, list[float]] = {}
        for j, ids in enumerate(sides):
            for i in set(ids):
                per_bot.setdefault(i, []).append(seat_score[j])
        for i, values in per_bot.items():
            self._played[i] = self._played.get(i, 0) + 1
            self._score[i] = self._score.get(i, 0.0) + sum(values) / len(values)
        rows = [_mix([((i, 1.0),) for i in ids], [1.0 / len(ids)] * len(ids)) for ids in sides]
        if len(match) == 2:
            outcome = 2 if len(groups) == 1 else groups[0][0]
            key = (cluster, rows[0], rows[1], outcome)
            self.duels[key] = self.duels.get(key, 0.0) + 1.0
        else:
            _luce_events(rows, groups, cluster, self.events)

    def totals(self) -> tuple[FloatArray, FloatArray]:
        """Rated matches and summed match scores per bot."""
        n = len(self.bots)
        played = np.zeros(n)
        score = np.zeros(n)
        for bot, count in self._played.items():
            played[bot] += count
            score[bot] += self._score[bot]
        i = np.array(self.duel_i, dtype=np.int64)
        j = np.array(self.duel_j, dtype=np.int64)
        s_i = np.array([1.0, 0.0, 0.5])[np.array(self.duel_outcome, dtype=np.int64)]
        other = i != j  # a bot against itself played one match and scored 0.5
        played += np.bincount(i, minlength=n) + np.bincount(j[other], minlength=n)
        score += np.bincount(i, np.where(other, s_i, 0.5), minlength=n)
        score += np.bincount(j[other], 1.0 - s_i[other], minlength=n)
        for k, orders in self.orders.items():
            seats = np.array(orders, dtype=np.int64)[:, 1:]
            place_score = np.tile((k - 1 - np.arange(k)) / (k - 1), len(orders))
            played += np.bincount(seats.ravel(), minlength=n)
            score += np.bincount(seats.ravel(), place_score, minlength=n)
        return played, score

    def has_draws(self) -> bool:
        """Whether some two-sided match was drawn: then Davidson's ν is a parameter."""
        return 2 in self.duel_outcome or any(key[3] == 2 for key in self.duels)


def _mix(rows: Sequence[_Row], weights: Sequence[float]) -> _Row:
    """The weighted sum of sparse linear forms."""
    if len(rows) == 1 and weights[0] == 1.0:
        return rows[0]
    acc: dict[int, float] = {}
    for row, w in zip(rows, weights, strict=True):
        for col, val in row:
            acc[col] = acc.get(col, 0.0) + w * val
    return tuple(sorted(acc.items()))


def _add(
    events: dict[tuple[int, _EventKey], float], key: tuple[int, _EventKey], weight: float
) -> None:
    events[key] = events.get(key, 0.0) + weight


def _davidson_event(row0: _Row, row1: _Row, outcome: int, draw_col: int) -> _EventKey:
    """Two sides: π_0, π_1 and, when the game has draws, ν √(π_0 π_1) for the draw."""
    alts: list[tuple[_Row, float]] = [(row0, 0.0), (row1, 0.0)]
    draw: _Row = ()
    if draw_col >= 0:
        draw = _mix([row0, row1, ((draw_col, 1.0),)], [0.5, 0.5, 1.0])
        alts.append((draw, 0.0))
    return tuple(alts), (row0, row1, draw)[outcome]


def _luce_events(
    rows: list[_Row],
    groups: list[list[int]],
    cluster: int,
    events: dict[tuple[int, _EventKey], float],
) -> None:
    """Plackett–Luce over the rank groups, a tied group averaged over its orderings.

    Placing a group D of d tied sides from the remaining set R takes d stages; at stage k the
    k members placed before are a random k-subset K of D and the chosen side is uniform on D∖K.
    Averaging the log-likelihood over the orderings of D gives, per K, an event of weight
    1/C(d, k) choosing D∖K among R∖K. Past EXACT_TIE_SUBSETS subsets, Efron's mean field: one
    event among R with D's members down-weighted by 1 − k/d. When D is all that remains, its
    last stage has probability 1 in every ordering and is skipped.
    """
    remaining = [j for group in groups for j in group]
    for group in groups:
        d = len(group)
        stages = d - 1 if d == len(remaining) else d
        for k in range(stages):
            count = math.comb(d, k)
            if count <= EXACT_TIE_SUBSETS:
                for placed in combinations(group, k):
                    chosen = [rows[j] for j in group if j not in placed]
                    alts = tuple((rows[j], 0.0) for j in remaining if j not in placed)
                    key = (alts, _mix(chosen, [1.0 / len(chosen)] * len(chosen)))
                    _add(events, (cluster, key), 1.0 / count)
            else:
                shrink = math.log(1.0 - k / d)
                alts = tuple((rows[j], shrink if j in group else 0.0) for j in remaining)
                key = (alts, _mix([rows[j] for j in group], [1.0 / d] * d))
                _add(events, (cluster, key), 1.0)
        remaining = [j for j in remaining if j not in group]


@dataclass(slots=True)
class _Design:
    """The choice events as arrays: utilities ``A θ + b``, rows grouped by event.

    ``a`` is a dense array for small problems (less overhead) and a CSR matrix otherwise.
    """

    n_params: int
    has_draw_param: bool
    a: Any  # FloatArray or scipy.sparse.csr_matrix (scipy is untyped)
    b: FloatArray
    starts: IntArray  # first row of each event
    sizes: IntArray  # rows per event
    w: FloatArray  # event weights
    c: FloatArray  # Σ_events w · (chosen linear form)
    cluster: IntArray  # the cluster of each event
    n_clusters: int
    # w · (chosen linear form) of each event, as COO entries (event, column, value).
    chosen: tuple[IntArray, IntArray, FloatArray]

    @classmethod
    def build(cls, tally: _Tally) -> _Design:
        n = len(tally.bots)
        has_draw = tally.has_draws()
        out = _Assembly(n + has_draw)

        # Single-bot duels: rows e_i, e_j and (with draws) e_i/2 + e_j/2 + e_ν.
        columns = [tally.duel_cluster, tally.duel_i, tally.duel_j, tally.duel_outcome]
        duel = np.array(columns, dtype=np.int64).reshape(4, -1)
        if tally.n_clusters * n * n * 3 < 2**62:  # one int64 code per duel: a fast unique
            code = ((duel[0] * n + duel[1]) * n + duel[2]) * 3 + duel[3]
            code, counts = np.unique(code, return_counts=True)
            cl, i, j, outcome = code // (3 * n * n), code // 3 // n % n, code // 3 % n, code % 3
        else:
            unique, counts = np.unique(duel.T, axis=0, return_counts=True)
            cl, i, j, outcome = unique.T
        w = counts.astype(np.float64)
        drawn = w * (outcome == 2)
        rows = [(0, i, 1.0), (1, j, 1.0)]
        chosen = [(i, w * (outcome == 0) + drawn / 2), (j, w * (outcome == 1) + drawn / 2)]
        if has_draw:
            nu = np.full(len(code), n)
            rows += [(2, i, 0.5), (2, j, 0.5), (2, nu, 1.0)]
            chosen.append((nu, drawn))
        out.block(w, 3 if has_draw else 2, rows, chosen, cl)

        # Strict rankings: stage s chooses the s-th placed among those placed s-th or later.
        for k, orders in sorted(tally.orders.items()):
            unique, counts = np.unique(np.array(orders, dtype=np.int64), axis=0, return_counts=True)
            w = counts.astype(np.float64)
            cl, unique = unique[:, 0], unique[:, 1:]
            for s in range(k - 1):
                rows = [(t, unique[:, s + t], 1.0) for t in range(k - s)]
                out.block(w, k - s, rows, [(unique[:, s], w)], cl)

        # Every other event, one by one.
        events = dict(tally.events)
        for (cluster, row0, row1, result), count in tally.duels.items():
            key = _davidson_event(row0, row1, result, n if has_draw else -1)
            _add(events, (cluster, key), count)
        out.events(events)
        return out.design(has_draw, max(tally.n_clusters, 1))


class _Assembly:
    """Collects events block by block: COO entries of A, offsets b, starts, sizes, weights, c,
    and each event's cluster and chosen form."""

    def __init__(self, n_params: int) -> None:
        self.n_params = n_params
        self.n_rows = 0
        self.n_events = 0
        self.cluster: list[IntArray] = []
        self.chosen_event: list[IntArray] = []
        self.chosen_col: list[IntArray] = []
        self.chosen_val: list[FloatArray] = []
        self.rows: list[IntArray] = []
        self.cols: list[IntArray] = []
        self.vals: list[FloatArray] = []
        self.b: list[FloatArray] = []
        self.starts: list[IntArray] = []
        self.sizes: list[IntArray] = []
        self.w: list[FloatArray] = []
        self.c = np.zeros(n_params)

    def block(
        self,
        w: FloatArray,
        size: int,
        rows: Sequence[tuple[int, IntArray, float]],
        chosen: Sequence[tuple[IntArray, FloatArray]],
        cluster: IntArray,
    ) -> None:
        """``len(w)`` events of ``size`` rows each; ``rows``: (row in event, columns, value);
        ``chosen``: (columns, weight × coefficient) added to c; ``cluster``: of each event."""
        m = len(w)
        base = self.n_rows + np.arange(m, dtype=np.int64) * size
        for slot, cols, val in rows:
            self.rows.append(base + slot)
            self.cols.append(cols)
            self.vals.append(np.full(m, val))
        event = self.n_events + np.arange(m, dtype=np.int64)
        for cols, coef in chosen:
            np.add.at(self.c, cols, coef)
            self.chosen_event.append(event)
            self.chosen_col.append(cols)
            self.chosen_val.append(np.asarray(coef, dtype=np.float64))
        self.cluster.append(cluster)
        self.n_events += m
        self.b.append(np.zeros(m * size))
        self.starts.append(base)
        self.sizes.append(np.full(m, size, dtype=np.int64))
        self.w.append(w)
        self.n_rows += m * size

    def events(self, events: dict[tuple[int, _EventKey], float]) -> None:
        """Keyed events, one by one."""
        clusters: list[int] = []
        chosen_event: list[int] = []
        chosen_col: list[int] = []
        chosen_val: list[float] = []
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        offsets: list[float] = []
        starts: list[int] = []
        sizes: list[int] = []
        weights: list[float] = []
        chosen_sum = [0.0] * self.n_params
        n_rows = self.n_rows
        for event, ((cluster, (alts, chosen)), w) in enumerate(events.items(), self.n_events):
            clusters.append(cluster)
            starts.append(n_rows)
            sizes.append(len(alts))
            weights.append(w)
            for form, offset in alts:
                for col, val in form:
                    rows.append(n_rows)
                    cols.append(col)
                    vals.append(val)
                offsets.append(offset)
                n_rows += 1
            for col, val in chosen:
                chosen_sum[col] += w * val
                chosen_event.append(event)
                chosen_col.append(col)
                chosen_val.append(w * val)
        self.c += chosen_sum
        self.cluster.append(np.array(clusters, dtype=np.int64))
        self.chosen_event.append(np.array(chosen_event, dtype=np.int64))
        self.chosen_col.append(np.array(chosen_col, dtype=np.int64))
        self.chosen_val.append(np.array(chosen_val, dtype=np.float64))
        self.n_events += len(events)
        self.rows.append(np.array(rows, dtype=np.int64))
        self.cols.append(np.array(cols, dtype=np.int64))
        self.vals.append(np.array(vals, dtype=np.float64))
        self.b.append(np.array(offsets, dtype=np.float64))
        self.starts.append(np.array(starts, dtype=np.int64))
        self.sizes.append(np.array(sizes, dtype=np.int64))
        self.w.append(np.array(weights, dtype=np.float64))
        self.n_rows = n_rows

    def design(self, has_draw_param: bool, n_clusters: int) -> _Design:
        coords = (np.concatenate(self.rows), np.concatenate(self.cols))
        values = np.concatenate(self.vals)
        shape = (self.n_rows, self.n_params)
        a: Any
        if self.n_rows * self.n_params <= DENSE_LIMIT:
            a = np.zeros(shape)
            np.add.at(a, coords, values)
        else:  # duplicate entries (a bot twice in one form) are summed, as in the dense case
            a = scipy.sparse.coo_matrix((values, coords), shape=shape).tocsr()
        return _Design(
            n_params=self.n_params,
            has_draw_param=has_draw_param,
            a=a,
            b=np.concatenate(self.b),
            starts=np.concatenate(self.starts),
            sizes=np.concatenate(self.sizes),
            w=np.concatenate(self.w),
            c=self.c,
            cluster=np.concatenate(self.cluster),
            n_clusters=n_clusters,
            chosen=(
                np.concatenate(self.chosen_event),
                np.concatenate(self.chosen_col),
                np.concatenate(self.chosen_val),
            ),
        )


def _fit(design: _Design, precision: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The posterior mode and the inverse Hessian there (the covariance), by damped Newton.

    The objective is strictly convex (a sum of log-sum-exps of linear forms plus a Gaussian
    prior), so Newton with a backtracking line search converges from zero.
    """
    a, sizes, starts, w = design.a, design.sizes, design.starts, design.w
    dense = isinstance(a, np.ndarray)
    at = a.T if dense else a.T.tocsr()
    n_rows = len(design.b)
    row_w = np.repeat(w, sizes)

    def value(theta: FloatArray) -> tuple[float, FloatArray]:
        """Negative log posterior, and every alternative's probability within its event."""
        prior = 0.5 * float(precision @ theta**2)
        if n_rows == 0:
            return prior - float(design.c @ theta), np.zeros(0)
        u = a @ theta + design.b
        top = np.maximum.reduceat(u, starts)
        z = np.exp(u - np.repeat(top, sizes))
        total = np.add.reduceat(z, starts)
        lse = top + np.log(total)
        return float(w @ lse - design.c @ theta) + prior, z / np.repeat(total, sizes)

    def gradient(theta: FloatArray, p: FloatArray) -> FloatArray:
        grad: FloatArray = precision * theta - design.c
        if n_rows:
            grad += at @ (row_w * p)
        return grad

    def hessian(p: FloatArray) -> FloatArray:
        # Σ_e w_e A_eᵀ (diag p_e − p_e p_eᵀ) A_e: with M_e = p_eᵀ A_e, Aᵀ W_p A − Mᵀ W M.
        h: FloatArray = np.diag(precision)
        if n_rows == 0:
            return h
        if dense:
            m = np.add.reduceat(p[:, None] * a, starts, axis=0)
            h += at @ ((row_w * p)[:, None] * a) - m.T @ (w[:, None] * m)
        else:
            g_indptr = np.concatenate(([0], np.cumsum(sizes)))
            g = scipy.sparse.csr_matrix((p, np.arange(n_rows), g_indptr), (len(sizes), n_rows))
            m = g @ a
            wp = scipy.sparse.diags(row_w * p)
            h += (at @ wp @ a - m.T @ scipy.sparse.diags(w) @ m).toarray()
        return h

    theta = np.zeros(design.n_params)
    f, p = value(theta)
    factor = scipy.linalg.cho_factor(hessian(p))  # always the Hessian at the current theta
    for _ in range(MAX_NEWTON_STEPS):
        grad = gradient(theta, p)
        step = -scipy.linalg.cho_solve(factor, grad)
        decrement = -float(grad @ step)  # squared Newton decrement: twice the expected gain
        if decrement < NEWTON_TOLERANCE:
            break
        t = 1.0
        f_new, p_new = value(theta + step)
        while f_new > f - 0.25 * t * decrement and t > 1e-10:
            t *= 0.5
            f_new, p_new = value(theta + t * step)
        if f_new > f:
            break  # rounding noise near the optimum: nothing left to gain
        theta, f, p = theta + t * step, f_new, p_new
        factor = scipy.linalg.cho_factor(hessian(p))
    covariance: FloatArray = scipy.linalg.cho_solve(factor, np.eye(design.n_params))
    return theta, covariance


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
