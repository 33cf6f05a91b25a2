"""Coverage of the 95 % intervals in simulated tournaments, with and without duplicate deals.

Each match seats the bots of a table in one rotation and ranks them by strength plus Gumbel
noise, so every match on its own is exactly Bradley–Terry / Plackett–Luce. A duplicate deal is
seat luck: seat s of deal d draws its noise as the Gumbel quantile of Φ(ρ L_ds + √(1−ρ²) e), with
L_ds shared by every match of the deal and e fresh per match. Marginally the noise stays Gumbel
(the fitted model is right match by match) while the matches of one deal are correlated, as the
same cards in every rotation make them. docs/ratings.md has the numbers with more repetitions.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.special

from arena.ratings import ELO_PER_NAT, Entry, fit_ratings

#: Share of a seat's noise (in sd) that is the deal's: the cards decide much of a card game.
LUCK = 0.8


@dataclass(frozen=True)
class Plan:
    """A simulated tournament: a round robin of ``players``-seat tables, every table played
    in every rotation of its seats on each of ``deals`` deals."""

    bots: int
    players: int
    deals: int
    #: ``"unit"``: each table's deal is its own (the host's units); ``"shared"``: deal d is
    #: the same at every table (a tournament's schedule); ``"none"``: every match its own deal.
    duplicate: str


def play(
    plan: Plan, truth: np.ndarray, rng: np.random.Generator
) -> tuple[list[list[Entry]], list[Hashable]]:
    """The matches of one tournament and the deal (cluster) of each."""
    tables = np.array(list(itertools.combinations(range(plan.bots), plan.players)))
    n_tables, p = tables.shape
    shape = (plan.deals, n_tables, p, p)  # deal, table, rotation, seat
    fresh = rng.normal(size=shape)
    if plan.duplicate == "none":
        z = fresh
    else:
        luck = rng.normal(size=(plan.deals, 1 if plan.duplicate == "shared" else n_tables, 1, p))
        z = LUCK * luck + np.sqrt(1.0 - LUCK**2) * fresh
    # Rotation r puts the table's bot (s + r) mod p in seat s.
    seat_bot = tables[:, (np.arange(p)[None, :] + np.arange(p)[:, None]) % p]  # table, r, s
    utility = truth[seat_bot][None] - np.log(-np.log(scipy.special.ndtr(z)))
    ranks = 1 + (utility[..., None, :] > utility[..., :, None]).sum(axis=-1)
    matches: list[list[Entry]] = []
    deals: list[Hashable] = []
    for (d, t, r), seat_ranks in zip(
        itertools.product(range(plan.deals), range(n_tables), range(p)),
        ranks.reshape(-1, p).tolist(),
        strict=True,
    ):
        bots = seat_bot[t, r].tolist()
        matches.append([Entry((f"b{b}",), k) for b, k in zip(bots, seat_ranks, strict=True)])
        deals.append(
            d if plan.duplicate == "shared" else (d, t) if plan.duplicate == "unit" else len(deals)
        )
    return matches, deals


def coverage(plan: Plan, tournaments: int, seed: int, clustered: bool) -> float:
    """The share of 95 % intervals that hold the bot's true rating relative to the field."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(tournaments):
        truth = rng.normal(0.0, 1.0, plan.bots)  # sd 1 nat ≈ 174 Elo
        matches, deals = play(plan, truth, rng)
        table = fit_ratings(matches, clusters=deals if clustered else None)
        centred = (truth - truth.mean()) * ELO_PER_NAT
        for r in table.ratings:
            hits += abs(r.elo - 1500.0 - centred[int(r.bot[1:])]) <= r.plus_minus
    return hits / (tournaments * plan.bots)


# (plan, clustered, tournaments, expected range). 400 tournaments of 8 bots are 3,200
# intervals: the binomial sd of a 95 % coverage is 0.39 points, so 93–97 % is ±5 sd; the costlier
# cases have fewer (±3 sd at 150 tournaments). The 8 intervals of a field are centred on one
# mean, which correlates them a little.
CASES: dict[str, tuple[Plan, bool, int, tuple[float, float]]] = {
    "duplicate units, clustered": (Plan(8, 2, 3, "unit"), True, 400, (0.93, 0.97)),
    "duplicate units, four players, clustered": (Plan(8, 4, 1, "unit"), True, 200, (0.93, 0.97)),
    "duplicate shared by all tables, clustered by deal": (
        Plan(8, 2, 30, "shared"),
        True,
        150,
        (0.93, 0.97),
    ),
    "no duplicates, clustered by match": (Plan(8, 2, 3, "none"), True, 400, (0.93, 0.97)),
    "no duplicates, unclustered": (Plan(8, 2, 3, "none"), False, 400, (0.93, 0.97)),
    # What the issue saw: the model's intervals ignore the deals' correlation and cover ~98.5 %.
    "duplicate units, unclustered (the model's intervals)": (
        Plan(8, 2, 3, "unit"),
        False,
        400,
        (0.975, 1.0),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_intervals_cover_95_percent_with_and_without_duplicate_deals(case: str) -> None:
    plan, clustered, tournaments, (low, high) = CASES[case]
    seed = 1000 + list(CASES).index(case)
    assert low <= coverage(plan, tournaments, seed, clustered) <= high
