"""The events' pure pairing rules (arena/host/events/brackets.py): the seeded bracket and its
byes, a knockout tie's stated rule, Swiss pairing without repeats, heats in snake order."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from arena.host.events.brackets import (
    DealScore,
    bracket_slots,
    heat_advance,
    heat_ranking,
    knockout_pairs,
    next_knockout_field,
    place_points,
    snake_heats,
    swiss_pairs,
    swiss_standings,
    tie_outcome,
)


def test_eight_entrants_make_the_standard_bracket() -> None:
    # 1 v 8, 4 v 5, 2 v 7, 3 v 6 (seeds from 0 here).
    assert knockout_pairs(bracket_slots(8)) == [(0, 7), (3, 4), (1, 6), (2, 5)]


def test_byes_go_to_the_top_seeds() -> None:
    pairs = knockout_pairs(bracket_slots(5))
    assert pairs == [(0, None), (3, 4), (1, None), (2, None)]
    # The byes go through untouched; the played tie's winner joins them.
    assert next_knockout_field(pairs, {1: 4}) == [0, 4, 1, 2]


@given(st.integers(2, 130))
def test_a_bracket_holds_every_entrant_once_and_its_byes_fall_to_the_best(n: int) -> None:
    slots = bracket_slots(n)
    assert sorted(s for s in slots if s is not None) == list(range(n))
    size = len(slots)
    assert size & (size - 1) == 0 and size < 2 * n
    byes = [a if b is None else b for a, b in knockout_pairs(slots) if a is None or b is None]
    assert sorted(byes) == list(range(size - n))  # the top seeds, one bye each
    assert all(a is not None or b is not None for a, b in knockout_pairs(slots))
    # Seeds 1 and 2 are in opposite halves: they can only meet in the final.
    half = size // 2
    assert (slots.index(0) < half) != (slots.index(1) < half)


def _deal(a: tuple[float, float], b: tuple[float, float]) -> tuple[DealScore, DealScore]:
    return DealScore(*a), DealScore(*b)


def test_a_tie_goes_by_match_points_then_score_then_an_extra_deal_then_the_seed() -> None:
    won = [_deal((2, 10), (0, 4)), _deal((1, 5), (1, 6))]
    assert tie_outcome((3, 6), won, None) == 3
    level_points = [_deal((1, 3), (1, 9))]
    assert tie_outcome((3, 6), level_points, None) == 6
    level = [_deal((1, 5), (1, 5))]
    assert tie_outcome((3, 6), level, None) == "extra"
    assert tie_outcome((3, 6), level, [_deal((0, 0), (2, 4))]) == 6
    assert tie_outcome((3, 6), level, [_deal((1, 1), (1, 1))]) == 3  # the better seed
    assert tie_outcome((6, 3), level, []) == 3  # tiebreak = "seed": no extra deal


def test_match_points_are_places_beaten_with_half_for_a_tie() -> None:
    assert place_points([1, 2]) == [1.0, 0.0]
    assert place_points([1, 1]) == [0.5, 0.5]
    assert place_points([2, 1, 2]) == [0.5, 2.0, 0.5]


def _play_swiss(n: int, rounds: int, winner_of: dict[tuple[int, int], int]) -> list[set[int]]:
    played: list[tuple[int, int | None, float, float, float]] = []
    met: list[set[int]] = [set() for _ in range(n)]
    for _ in range(rounds):
        rows = swiss_standings(n, played)
        pairs = swiss_pairs(rows)
        if pairs is None:
            break
        seen = [s for p in pairs for s in p if s is not None]
        assert sorted(seen) == list(range(n))  # everyone plays (or has the bye) once
        for a, b in pairs:
            if b is None:
                played.append((a, None, 1.0, 0.0, 0.0))
                continue
            assert b not in met[a]
            met[a].add(b)
            met[b].add(a)
            win = winner_of.get((min(a, b), max(a, b)), min(a, b)) == a
            played.append((a, b, 1.0 if win else 0.0, 2.0 * win, 2.0 * (not win)))
    return met


@given(st.integers(2, 12), st.integers(1, 8), st.randoms(use_true_random=False))
def test_swiss_never_repeats_a_pairing(n: int, rounds: int, rng: object) -> None:
    import random

    assert isinstance(rng, random.Random)
    winners = {p: rng.choice(p) for p in itertools.combinations(range(n), 2)}
    _play_swiss(n, rounds, winners)


def test_the_bye_goes_to_the_lowest_ranked_without_one() -> None:
    rows = swiss_standings(3, [])
    assert swiss_pairs(rows)[0] == (2, None)  # type: ignore[index]
    rows = swiss_standings(3, [(2, None, 1.0, 0, 0), (0, 1, 1.0, 2, 0)])
    # Standings: 0 (1 pt, 2 mp), 2 (1 pt), 1 (0): 1 has had no bye and is last.
    pairs = swiss_pairs(rows)
    assert pairs is not None and pairs[0] == (1, None)


def test_swiss_pairs_by_score_and_balances_the_first_place() -> None:
    played = [(0, 1, 1.0, 2, 0), (2, 3, 1.0, 2, 0)]
    pairs = swiss_pairs(swiss_standings(4, played))
    assert pairs is not None
    # Winners meet winners. 0 and 2 both sat first once, 1 and 3 never: level, so the
    # lower-ranked of each pair sits first.
    assert {frozenset(p) for p in pairs} == {frozenset((0, 2)), frozenset((1, 3))}
    assert set(dict(pairs)) == {2, 3}
    # One who sat first less often than its opponent sits first.
    played.append((1, 3, 1.0, 2, 0))  # 1 sat first: 0, 1, 2 have sat first once, 3 never
    pairs = swiss_pairs(swiss_standings(4, played))
    assert pairs is not None and all(b != 3 for _, b in pairs)


def test_swiss_says_when_no_new_pairing_is_left() -> None:
    played = [(0, 1, 1.0, 2, 0)]
    assert swiss_pairs(swiss_standings(2, played)) is None


@given(st.integers(2, 60), st.integers(3, 6))
def test_snake_heats_split_the_field_evenly_by_seed(n: int, size: int) -> None:
    heats = snake_heats(list(range(n)), size)
    assert sorted(s for h in heats for s in h) == list(range(n))
    assert all(len(h) <= size for h in heats)
    assert max(map(len, heats)) - min(map(len, heats)) <= 1
    # Each heat's best seed: the top seeds are spread one a heat.
    assert sorted(h[0] for h in heats) == list(range(len(heats)))
    assert all(heat_advance(len(h), 1) < len(h) or len(h) == 1 for h in heats)


def test_snake_order() -> None:
    assert snake_heats(list(range(9)), 3) == [[0, 5, 6], [1, 4, 7], [2, 3, 8]]


def test_a_heat_ranks_by_points_then_score_then_seed() -> None:
    scores = {0: DealScore(1, 5), 1: DealScore(2, 1), 2: DealScore(1, 5), 3: DealScore(1, 7)}
    assert heat_ranking([0, 1, 2, 3], scores) == [1, 3, 0, 2]
    assert heat_advance(3, 5) == 2 and heat_advance(2, 1) == 1
