"""Matchmaking for the continuous ladder: which versions play the next unit, and its matches.

Pure: no I/O, no clocks; every choice comes from the :class:`random.Random` a caller passes, so a
ladder replays exactly from its generator's seed and the same inputs (whatever their order).

A *unit* is one duplicate deal (one seed, :func:`unit_seed`) played at one *table* — distinct
versions in place order — in every rotation of its places, so each version sits in each place
once (:func:`unit_matches`, the seating of ``arena/tournament/schedule.py``; docs/tournaments.md).

:func:`choose_table`, in the spirit of Kaggle's and Halite's ladders:

1. **Field.** The candidates are the competition's active versions (validated, not retired, for a
   live bot connected), busy ones included: a version already in ``max_concurrent_units``
   running units is *unavailable* for this one.
2. **Anchor (place 0).** With N versions in the field and P places, a version is *overdue* when
   it has waited more than K = ``max_wait`` units (default ⌈``wait_factor`` · N / P⌉, three times
   the mean gap of uniform play; ``wait = now_unit − last_unit``, infinite for a version that
   never played). The available overdue version that has waited longest is the anchor (ties:
   fewer units played, then the lower id). With none overdue, the anchor is drawn with weight
   ``1 + uncertainty_weight · min(σ/350, 1)² + newcomer_weight / (1 + units played)``, σ its
   interval's half-width: new and uncertain versions play more (about 12 : 1 by default for
   an unplayed version against a settled one), fading as σ shrinks and units accrue.
3. **Opponents.** Each other place is drawn, without replacement, among the other available
   versions with weight ``floor + exp(−Δ² / (s² + σa² + σb²))``, Δ the rating gap to the anchor,
   s = ``rating_scale``: close ratings meet more often, uncertain versions meet a broad range
   (the form of TrueSkill's match quality), and the floor lets any pairing happen.
4. **Small fields.** Fewer than two versions: ``None``. Fewer versions than places (but ≥ 2):
   all of them fill the places cyclically, as a tournament does (``a b c a``), and only when
   all are available. Otherwise fewer available versions than places: ``None`` (wait).

**Starvation bound.** A version that played unit L and is available for every unit after it
plays again by unit L + K + N (a gap of at most K + N serials), whatever the ratings,
uncertainties and draws: from unit L + K + 1 on it is overdue, and only versions that have
waited at least as long — at most N − 1 of them, each leaving that set for good once it plays —
can be anchored before it, one per unit. A version that never played ranks before every version
that has, so it is anchored within N units of joining. N counts every version in the field at
some time during the gap, K is the largest limit in force. ``last_unit`` must be the serial of
the last unit a version was *chosen* for, recorded when the unit is chosen, not when it ends.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from arena.seeds import derive_seed

__all__ = [
    "DEFAULT_POLICY",
    "UNRATED_RATING",
    "UNRATED_UNCERTAINTY",
    "Candidate",
    "Policy",
    "anchor_weight",
    "choose_table",
    "closeness",
    "rotate_places",
    "rotations_per_unit",
    "starvation_limit",
    "unit_matches",
    "unit_seed",
    "wait_bound",
]

#: The rating of a version without one (the field mean of docs/ratings.md).
UNRATED_RATING = 1500.0
#: The uncertainty (interval half-width, Elo) of an unrated version, and the largest that counts:
#: a wider interval (a rating from very few matches) weighs the same.
UNRATED_UNCERTAINTY = 350.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """One active version as matchmaking sees it.

    From a fitted :class:`arena.ratings.Rating`: ``rating = elo``, ``uncertainty = plus_minus``.
    """

    #: The version's id.
    version: int
    #: Elo scale; :data:`UNRATED_RATING` for an unrated version.
    rating: float = UNRATED_RATING
    #: Half-width of the rating's interval, Elo; :data:`UNRATED_UNCERTAINTY` for an unrated one.
    uncertainty: float = UNRATED_UNCERTAINTY
    #: Units it has been chosen for.
    units_played: int = 0
    #: Serial of the last unit it was chosen for; ``None`` if never.
    last_unit: int | None = None
    #: Units it is in that are still running.
    running: int = 0

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"version {self.version}: rating must be finite; got {self.rating}")
        if not (math.isfinite(self.uncertainty) and self.uncertainty >= 0):
            raise ValueError(
                f"version {self.version}: uncertainty must be finite and >= 0; "
                f"got {self.uncertainty}"
            )
        if self.units_played < 0 or self.running < 0:
            raise ValueError(f"version {self.version}: negative units_played or running")


@dataclass(frozen=True, slots=True)
class Policy:
    """The matchmaking knobs; the defaults are the ladder's."""

    #: Units a version may be in at once (1: a version's processes play one unit at a time).
    max_concurrent_units: int = 1
    #: K, the wait (in units) past which a version is overdue; ``None``: from ``wait_factor``.
    max_wait: int | None = None
    #: Default K = ⌈wait_factor · N / P⌉: this many times the mean gap of uniform play.
    wait_factor: float = 3.0
    #: Anchor weight per unit of (uncertainty / :data:`UNRATED_UNCERTAINTY`)².
    uncertainty_weight: float = 8.0
    #: Anchor weight of a version with no units, decaying as 1 / (1 + units played).
    newcomer_weight: float = 4.0
    #: Elo gap over which an opponent's weight falls by e (for settled versions).
    rating_scale: float = 200.0
    #: Weight every opponent gets on top of its closeness, so any pairing can happen.
    floor: float = 0.05

    def __post_init__(self) -> None:
        if self.max_concurrent_units < 1:
            raise ValueError("max_concurrent_units must be at least 1")
        if self.max_wait is not None and self.max_wait < 0:
            raise ValueError("max_wait must be >= 0")
        if not (self.wait_factor >= 0 and math.isfinite(self.wait_factor)):
            raise ValueError("wait_factor must be finite and >= 0")
        if not (self.uncertainty_weight >= 0 and self.newcomer_weight >= 0):
            raise ValueError("uncertainty_weight and newcomer_weight must be >= 0")
        if not (self.rating_scale > 0 and math.isfinite(self.rating_scale)):
            raise ValueError("rating_scale must be finite and positive")
        if not (self.floor > 0 and math.isfinite(self.floor)):
            raise ValueError("floor must be finite and positive")


DEFAULT_POLICY = Policy()


def starvation_limit(n_field: int, n_places: int, policy: Policy = DEFAULT_POLICY) -> int:
    """K: a version that has waited more than this many units is overdue (anchored first)."""
    if policy.max_wait is not None:
        return policy.max_wait
    return math.ceil(policy.wait_factor * n_field / n_places)


def wait_bound(n_field: int, n_places: int, policy: Policy = DEFAULT_POLICY) -> int:
    """The most serials between two units of an always-available version: K + N."""
    return starvation_limit(n_field, n_places, policy) + n_field


def _capped(uncertainty: float) -> float:
    return min(uncertainty, UNRATED_UNCERTAINTY)


def anchor_weight(candidate: Candidate, policy: Policy = DEFAULT_POLICY) -> float:
    """How likely a version is drawn for place 0 (when none is overdue), relative to others."""
    spread = _capped(candidate.uncertainty) / UNRATED_UNCERTAINTY
    return (
        1.0
        + policy.uncertainty_weight * spread * spread
        + policy.newcomer_weight / (1 + candidate.units_played)
    )


def closeness(anchor: Candidate, other: Candidate, policy: Policy = DEFAULT_POLICY) -> float:
    """The weight of ``other`` for a place at ``anchor``'s table: floor + exp(−Δ² / scale²)."""
    gap = other.rating - anchor.rating
    scale2 = (
        policy.rating_scale**2 + _capped(anchor.uncertainty) ** 2 + _capped(other.uncertainty) ** 2
    )
    return policy.floor + math.exp(-(gap * gap) / scale2)


def _draw(rng: random.Random, weights: Sequence[float]) -> int:
    """An index drawn with probability proportional to its (positive) weight."""
    point = rng.random() * math.fsum(weights)
    total = 0.0
    for i, w in enumerate(weights):
        total += w
        if point < total:
            return i
    return len(weights) - 1  # rounding at the very top


def _starvation_key(candidate: Candidate) -> tuple[float, int, int]:
    last = -math.inf if candidate.last_unit is None else float(candidate.last_unit)
    return (last, candidate.units_played, candidate.version)


def choose_table(
    candidates: Sequence[Candidate],
    n_places: int,
    rng: random.Random,
    now_unit: int,
    policy: Policy = DEFAULT_POLICY,
) -> tuple[int, ...] | None:
    """The versions of unit ``now_unit``'s table in place order, or ``None`` if none can start.

    ``candidates``: every active version once, busy ones included (their order does not matter).
    The table has distinct versions, or, when the field is smaller than ``n_places`` (≥ 2), all
    of them filling the places cyclically. See the module docstring for the algorithm.
    """
    if n_places < 2:
        raise ValueError(f"a table needs at least 2 places; got {n_places}")
    field = sorted(candidates, key=lambda c: c.version)
    for a, b in itertools.pairwise(field):
        if a.version == b.version:
            raise ValueError(f"version {a.version} is a candidate twice")
    for c in field:
        if c.last_unit is not None and c.last_unit >= now_unit:
            raise ValueError(
                f"version {c.version}: last_unit {c.last_unit} is not before now_unit {now_unit}"
            )
    if len(field) < 2:
        return None
    available = [c for c in field if c.running < policy.max_concurrent_units]
    if len(field) < n_places:
        if len(available) < len(field):
            return None
        seated = _fill(available, len(available), rng, now_unit, len(field), n_places, policy)
        return tuple(seated[p % len(seated)] for p in range(n_places))
    if len(available) < n_places:
        return None
    return tuple(_fill(available, n_places, rng, now_unit, len(field), n_places, policy))


def _fill(
    available: list[Candidate],
    size: int,
    rng: random.Random,
    now_unit: int,
    n_field: int,
    n_places: int,
    policy: Policy,
) -> list[int]:
    """``size`` distinct versions of ``available``: the anchor, then its drawn opponents."""
    limit = starvation_limit(n_field, n_places, policy)
    overdue = [c for c in available if c.last_unit is None or now_unit - c.last_unit > limit]
    if overdue:
        anchor = min(overdue, key=_starvation_key)
    else:
        anchor = available[_draw(rng, [anchor_weight(c, policy) for c in available])]
    rest = [c for c in available if c.version != anchor.version]
    weights = [closeness(anchor, c, policy) for c in rest]
    table = [anchor.version]
    while len(table) < size:
        i = _draw(rng, weights)
        table.append(rest.pop(i).version)
        weights.pop(i)
    return table


def rotations_per_unit(table: Sequence[int]) -> int:
    """How many rotations a unit at ``table`` plays: its places, or its versions (cyclic fill)."""
    distinct = len(set(table))
    return len(table) if distinct == len(table) else distinct


def rotate_places(table: Sequence[int], shift: int) -> tuple[int, ...]:
    """The table's versions shifted by ``shift`` places (``schedule.rotate``, for version ids).

    A cyclically filled table shifts which version starts the cycle, so each version reaches
    each place once over :func:`rotations_per_unit` shifts.
    """
    if len(set(table)) == len(table):
        return tuple(table[shift:]) + tuple(table[:shift])
    order = list(dict.fromkeys(table))
    return tuple(order[(p + shift) % len(order)] for p in range(len(table)))


def unit_matches(
    table: Sequence[int], seats_of_places: Sequence[Sequence[int]]
) -> list[tuple[int, tuple[int, ...]]]:
    """The unit's matches in order: (rotation, the version of each engine seat).

    ``seats_of_places`` is ``arena.tournament.schedule.places(game, config)``: the seats of each
    place (a partnership's seats, else one seat). Every seat of a place gets the place's
    version, as :func:`arena.tournament.schedule.build_schedule` seats a table. Every match of
    the unit plays the same seed (:func:`unit_seed`): the deal is duplicated across rotations.
    """
    if len(table) != len(seats_of_places):
        raise ValueError(f"a table of {len(table)} versions for {len(seats_of_places)} places")
    seat_list = sorted(s for group in seats_of_places for s in group)
    if seat_list != list(range(len(seat_list))):
        raise ValueError(f"the places' seats are not 0..n-1 once each: {seats_of_places}")
    matches: list[tuple[int, tuple[int, ...]]] = []
    for rotation in range(rotations_per_unit(table)):
        by_place = rotate_places(table, rotation)
        seats = [0] * len(seat_list)
        for place, group in enumerate(seats_of_places):
            for seat in group:
                seats[seat] = by_place[place]
        matches.append((rotation, tuple(seats)))
    return matches


def unit_seed(secret_seed: int, unit_number: int) -> int:
    """The engine seed of every match of unit ``unit_number``: one-way from the ladder's secret."""
    return derive_seed(secret_seed, "unit", unit_number)
