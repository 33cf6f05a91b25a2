"""Events' pairings and results: pure (no I/O, no clock, no randomness), so a round is derived
from the stored results alone and a host killed mid-event derives the same next round again.

Entrants are given by *seed*: 0 is the best (the ladder's order at the event's start).

* **Knockout** (:func:`bracket_slots`, :func:`knockout_pairs`): the standard seeded bracket
  (1 v N, 2 v N-1, …, arranged so that seeds 1 and 2 can only meet in the final); with entrants
  not a power of two, the missing slots are byes and fall to the top seeds. Each tie is ``best_of``
  duplicate deals; :func:`tie_outcome` states who goes through.
* **Swiss** (:func:`swiss_pairs`): pairing by score (then seed), no pairing repeated
  (backtracking), a bye to the lowest-ranked entrant without one when the field is odd.
* **Heats** (:func:`snake_heats`, :func:`heat_ranking`): tables of the game's size filled by
  seed in snake order; the best of each heat go through.

A *deal's* score of an entrant (:class:`DealScore`) is read from its unit's matches: its match
points (per match, one point for each other place it finished ahead of, half for each tie;
two places: a win 1, a tie ½) and its game score (the game's own points, summed over the deal's
rotations). A duplicate deal sits every entrant in every place once, so both cancel the cards'
luck.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

#: A tie's or pairing's outcome: the winner's seed, or ``"extra"``: play one more deal.
Outcome = int | Literal["extra"]


@dataclass(frozen=True, slots=True)
class DealScore:
    """What one entrant made of one deal (all its rotations), or of several summed."""

    points: float = 0.0
    score: float = 0.0

    def __add__(self, other: DealScore) -> DealScore:
        return DealScore(self.points + other.points, self.score + other.score)


def place_points(ranks: Sequence[int]) -> list[float]:
    """Match points of each place from its rank (1 best): one per place beaten, ½ per tie."""
    return [
        sum(1.0 if r < o else 0.5 if r == o else 0.0 for j, o in enumerate(ranks) if j != i)
        for i, r in enumerate(ranks)
    ]


def total(scores: Sequence[DealScore]) -> DealScore:
    out = DealScore()
    for s in scores:
        out = out + s
    return out


# --- knockout -------------------------------------------------------------------------------


def bracket_size(entrants: int) -> int:
    """The bracket's slots: the smallest power of two holding every entrant (at least 2)."""
    if entrants < 2:
        raise ValueError(f"a knockout needs at least 2 entrants; got {entrants}")
    return 1 << math.ceil(math.log2(entrants))


def bracket_slots(entrants: int) -> list[int | None]:
    """The first round's slots in bracket order, by seed (``None``: a bye): adjacent slots meet.
    Standard order (1 v 8, 4 v 5, 2 v 7, 3 v 6 for eight): seed s meets its complement
    ``size - 1 - s``, and the top two seeds are in opposite halves."""
    order = [0]
    while len(order) < bracket_size(entrants):
        n = 2 * len(order)
        order = [x for s in order for x in (s, n - 1 - s)]
    return [s if s < entrants else None for s in order]


def knockout_pairs(field: Sequence[int | None]) -> list[tuple[int | None, int | None]]:
    """A round's ties from its slots (bracket order): slot 2i against slot 2i+1."""
    if len(field) % 2:
        raise ValueError("a knockout round needs an even number of slots")
    return [(field[i], field[i + 1]) for i in range(0, len(field), 2)]


def tie_outcome(
    seeds: tuple[int, int],
    deals: Sequence[tuple[DealScore, DealScore]],
    extra: Sequence[tuple[DealScore, DealScore]] | None,
) -> Outcome:
    """Who goes through a knockout tie, by the stated rule (docs/hosting.md, "Events"):

    1. more match points over the tie's ``best_of`` deals;
    2. then the better game score over them (the difference of the two totals);
    3. then one extra deal (``extra``: its scores once played; ``None``: not yet, so
       ``"extra"`` is answered), by the same two criteria;
    4. then the better ladder seed (the lower number).
    """
    for part in (deals, extra):
        if part is None:
            return "extra"
        a = total([d[0] for d in part])
        b = total([d[1] for d in part])
        if (a.points, a.score) != (b.points, b.score):
            return seeds[0] if (a.points, a.score) > (b.points, b.score) else seeds[1]
    return min(seeds)


def next_knockout_field(
    pairs: Sequence[tuple[int | None, int | None]], winners: Mapping[int, int]
) -> list[int | None]:
    """The next round's slots: each tie's winner (``winners[tie]``; a bye's entrant goes
    through as is)."""
    out: list[int | None] = []
    for i, (a, b) in enumerate(pairs):
        if a is None or b is None:
            out.append(a if b is None else b)
        else:
            out.append(winners[i])
    return out


def knockout_round_name(slots: int) -> str:
    """``final``, ``semi-final``, ``quarter-final``, else ``round of N``."""
    return {2: "final", 4: "semi-final", 8: "quarter-final"}.get(slots, f"round of {slots}")


# --- Swiss ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SwissRow:
    """One entrant's Swiss standing."""

    seed: int
    #: 1 a won pairing or a bye, ½ a drawn one.
    points: float
    #: Match points over all its deals (the first tie-break).
    match_points: float
    #: The sum of its opponents' points (Buchholz, the second tie-break).
    buchholz: float
    opponents: tuple[int, ...]
    byes: int
    #: Times it sat in place 0 of its tables' first rotation.
    first: int


def swiss_standings(
    entrants: int,
    pairings: Sequence[tuple[int, int | None, float, float, float]],
) -> list[SwissRow]:
    """Standings from the played pairings ``(a, b, a_points, a_match_points, b_match_points)``
    (``b`` ``None``: a bye for ``a``; ``a`` sat in place 0): by points, then match points, then
    Buchholz, then seed."""
    points = [0.0] * entrants
    mp = [0.0] * entrants
    opp: list[list[int]] = [[] for _ in range(entrants)]
    byes = [0] * entrants
    first = [0] * entrants
    for a, b, pa, ma, mb in pairings:
        points[a] += pa
        mp[a] += ma
        if b is None:
            byes[a] += 1
            continue
        first[a] += 1
        points[b] += 1.0 - pa
        mp[b] += mb
        opp[a].append(b)
        opp[b].append(a)
    rows = [
        SwissRow(
            s, points[s], mp[s], sum(points[o] for o in opp[s]), tuple(opp[s]), byes[s], first[s]
        )
        for s in range(entrants)
    ]
    rows.sort(key=lambda r: (-r.points, -r.match_points, -r.buchholz, r.seed))
    return rows


def swiss_pairs(rows: Sequence[SwissRow]) -> list[tuple[int, int | None]] | None:
    """The next round's pairings from the standings (best first): ``(place 0, place 1)``, a bye
    as ``(seed, None)``; ``None`` when no pairing without a repeat exists (the event ends).

    The bye goes to the lowest-ranked entrant without one (when all have had one, the
    lowest-ranked). Then the best unpaired entrant meets the next-best it has not met,
    backtracking when the rest cannot be paired. Of a pair, the one that sat first less often
    sits first (then the lower-ranked): "balanced" places, although every deal is played in
    both rotations, so each entrant plays each place of every deal anyway."""
    order = list(rows)
    pairs: list[tuple[int, int | None]] = []
    if len(order) % 2:
        no_bye = [r for r in order if r.byes == 0] or order
        bye = no_bye[-1]
        order.remove(bye)
        pairs.append((bye.seed, None))
    met = {r.seed: set(r.opponents) for r in order}
    found = _pair(order, met)
    if found is None:
        return None
    by_seed = {r.seed: r for r in rows}
    for a, b in found:
        ra, rb = by_seed[a], by_seed[b]
        pairs.append(
            (a, b) if (ra.first, -rows.index(ra)) <= (rb.first, -rows.index(rb)) else (b, a)
        )
    return pairs


def _pair(order: Sequence[SwissRow], met: Mapping[int, set[int]]) -> list[tuple[int, int]] | None:
    if not order:
        return []
    top, rest = order[0], order[1:]
    for i, other in enumerate(rest):
        if other.seed in met[top.seed]:
            continue
        tail = _pair([*rest[:i], *rest[i + 1 :]], met)
        if tail is not None:
            return [(top.seed, other.seed), *tail]
    return None


# --- heats ----------------------------------------------------------------------------------


def snake_heats(field: Sequence[int], table_size: int) -> list[list[int]]:
    """``field`` (best first) into ⌈n / table_size⌉ heats in snake order (1 2 3 3 2 1 …), so
    every heat gets a like share of the strong and the weak; heats differ by one entrant at
    most."""
    if table_size < 2 or len(field) < 2:
        raise ValueError("heats need tables of 2 or more and at least 2 entrants")
    n = math.ceil(len(field) / table_size)
    heats: list[list[int]] = [[] for _ in range(n)]
    for i, seed in enumerate(field):
        lap, pos = divmod(i, n)
        heats[pos if lap % 2 == 0 else n - 1 - pos].append(seed)
    return heats


def heat_ranking(members: Sequence[int], scores: Mapping[int, DealScore]) -> list[int]:
    """A heat's members best first: match points, then game score, then seed."""
    return sorted(members, key=lambda s: (-scores[s].points, -scores[s].score, s))


def heat_advance(size: int, advance: int) -> int:
    """How many of a heat of ``size`` go through: ``advance``, but never all of it (the field
    must shrink)."""
    return max(1, min(advance, size - 1))
