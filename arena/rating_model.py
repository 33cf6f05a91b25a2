"""The ratings' model as numbers (arena/ratings.py fits it; docs/ratings.md has the model).

Matches are tallied (:class:`Tally`) into weighted *choice events*: a weight, the linear form
of what was chosen, and the alternatives, each alternative ``t`` having the utility
``a_t · θ + b_t``. :class:`Design` holds them as matrices; the negative log posterior is
``Σ w (logsumexp(A θ + b) − c · θ) + prior``, convex in θ, for the Davidson, Bradley–Terry and
Plackett–Luce models alike. :func:`fit_posterior` is its damped Newton ascent, with an analytic
gradient and a sparse-assembled Hessian; :func:`cluster_robust` the sandwich covariance for
clusters of correlated matches.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import scipy.linalg  # type: ignore[import-untyped]
import scipy.sparse  # type: ignore[import-untyped]
import scipy.stats  # type: ignore[import-untyped]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class Side(Protocol):
    """One side of one match, as the tally reads it (:class:`arena.ratings.Entry`)."""

    @property
    def bots(self) -> tuple[str, ...]: ...

    @property
    def rank(self) -> int: ...


#: Two-sided 95 % quantile of the standard normal.
Z95 = 1.959963984540054
#: A tied group's stage is averaged exactly over this many subsets at most, then mean-field.
EXACT_TIE_SUBSETS = 20
#: Design matrices up to this many cells are dense (fast for small fields), larger ones sparse.
DENSE_LIMIT = 200_000
#: Newton stops when the squared Newton decrement (twice the expected gain) falls below this.
NEWTON_TOLERANCE = 1e-12
MAX_NEWTON_STEPS = 100

# A sparse linear form over the parameters: ((column, coefficient), ...), sorted by column.
_Row = tuple[tuple[int, float], ...]


def cluster_robust(
    design: Design, theta: FloatArray, cov: FloatArray, precision: FloatArray
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


def cluster_quantile(clusters: npt.ArrayLike) -> FloatArray:
    """The 95 % quantile for an estimate measured by the spread of ``clusters`` independent
    clusters each: Student's t on G − 1 degrees of freedom (Cameron & Miller), or the normal's
    where G < 2 leaves no spread to measure (the caller keeps its model's variance there)."""
    g = np.asarray(clusters, dtype=np.float64)
    safe = np.maximum(g - 1.0, 1.0)
    quantile: FloatArray = np.where(g >= 2, scipy.stats.t.ppf(0.975, safe), Z95)
    return quantile


def cluster_mean(
    values: Sequence[float], clusters: Sequence[Hashable]
) -> tuple[float, float | None, int]:
    """The mean of ``values``, its cluster-robust standard error and the number of clusters G.

    The same sandwich as :func:`cluster_robust`, for the estimating equation Σ (x − μ) = 0:
    H = n and g_c = Σ_{i ∈ c} (x_i − x̄), so var = k Σ_c g_c² / n² with k = G/(G − 1). The
    error is ``None`` for G < 2 (one cluster shows no spread)."""
    if len(values) != len(clusters) or not values:
        raise ValueError(f"{len(values)} values for {len(clusters)} cluster ids")
    x = np.asarray(values, dtype=np.float64)
    ids: dict[Hashable, int] = {}
    index = np.array([ids.setdefault(c, len(ids)) for c in clusters], dtype=np.int64)
    mean = float(x.mean())
    g = len(ids)
    if g < 2:
        return mean, None, g
    scores = np.bincount(index, x - mean, minlength=g)
    var = g / (g - 1.0) * float(scores @ scores) / len(x) ** 2
    return mean, math.sqrt(var), g


# An event: its alternatives (linear form, offset) and the linear form of what was chosen.
_EventKey = tuple[tuple[tuple[_Row, float], ...], _Row]


class Tally:
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

    def add(self, match: Sequence[Side], cluster: int = 0) -> None:
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
class Design:
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
    def build(cls, tally: Tally) -> Design:
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

    def design(self, has_draw_param: bool, n_clusters: int) -> Design:
        coords = (np.concatenate(self.rows), np.concatenate(self.cols))
        values = np.concatenate(self.vals)
        shape = (self.n_rows, self.n_params)
        a: Any
        if self.n_rows * self.n_params <= DENSE_LIMIT:
            a = np.zeros(shape)
            np.add.at(a, coords, values)
        else:  # duplicate entries (a bot twice in one form) are summed, as in the dense case
            a = scipy.sparse.coo_matrix((values, coords), shape=shape).tocsr()
        return Design(
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


def fit_posterior(design: Design, precision: FloatArray) -> tuple[FloatArray, FloatArray]:
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
