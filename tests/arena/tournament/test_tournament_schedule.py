"""Schedule properties as pure unit tests: who meets whom, where they sit, which deals."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.schedule import (
    MatchPlan,
    build_schedule,
    derive_seed,
    places,
    rotations_per_table,
)
from engine import get_game

#: (game, players, options): every game and table shape the arena supports.
SHAPES = [
    ("whist", 4, {}),
    ("forty_five", 2, {}),
    ("forty_five", 4, {}),
    ("tennis", 2, {}),
    ("tennis", 4, {}),
    ("tennis", 4, {"control": "players"}),
    ("tennis_whist", 3, {}),
    ("tennis_whist", 4, {}),
    ("spoil_five", 3, {}),
    ("spoil_five", 5, {}),
]
#: The shapes with two places (two sides, or two seats).
TWO_SIDED = SHAPES[:6]


def schedule(
    game_id: str,
    players: int,
    options: dict[str, str],
    bots: list[str],
    deals: int = 2,
    duplicate: bool = True,
    seed: int = 7,
    fmt: str = "round_robin",
) -> tuple[list[MatchPlan], tuple[tuple[int, ...], ...]]:
    game = get_game(game_id)
    config = game.configure(players, options)
    groups = places(game, config)
    period = rotations_per_table(len(bots), len(groups))
    plans = build_schedule(game, config, bots, fmt, deals * period, duplicate, seed)
    return plans, groups


def place_bots(plan: MatchPlan, groups: tuple[tuple[int, ...], ...]) -> list[str]:
    """The bot of each place; every seat of a place has the same bot."""
    out = []
    for group in groups:
        assert len({plan.seats[s] for s in group}) == 1, plan
        out.append(plan.seats[group[0]])
    return out


def bot_lists(n: int) -> list[str]:
    return [f"b{i}" for i in range(n)]


@pytest.mark.parametrize(("game_id", "players", "options"), SHAPES)
@pytest.mark.parametrize("n_bots", [2, 3, 4, 6])
def test_every_pair_of_bots_meets_at_a_table(
    game_id: str, players: int, options: dict[str, str], n_bots: int
) -> None:
    bots = bot_lists(n_bots)
    plans, groups = schedule(game_id, players, options, bots)
    met: set[frozenset[str]] = set()
    for plan in plans:
        at_table = set(place_bots(plan, groups))
        met.update(frozenset(p) for p in itertools.combinations(sorted(at_table), 2))
    assert met == {frozenset(p) for p in itertools.combinations(bots, 2)}


@pytest.mark.parametrize(("game_id", "players", "options"), SHAPES)
@pytest.mark.parametrize("n_bots", [2, 3, 4, 6])
def test_each_bot_sits_in_every_seat_equally_often(
    game_id: str, players: int, options: dict[str, str], n_bots: int
) -> None:
    bots = bot_lists(n_bots)
    plans, _ = schedule(game_id, players, options, bots)
    n_seats = len(plans[0].seats)
    per_seat = [Counter(p.seats[s] for p in plans) for s in range(n_seats)]
    for seat in range(n_seats):
        assert set(per_seat[seat]) == set(bots), (seat, per_seat[seat])
        assert len(set(per_seat[seat].values())) == 1, (seat, per_seat[seat])
    # And pairwise: within every table, each of its bots takes each place once per deal.
    by_table_deal: dict[tuple[int, int], list[MatchPlan]] = {}
    for p in plans:
        by_table_deal.setdefault((p.table, p.deal), []).append(p)
    for group in by_table_deal.values():
        for seat in range(n_seats):
            column = Counter(p.seats[seat] for p in group)
            assert len(set(column.values())) == 1, column


@pytest.mark.parametrize(("game_id", "players", "options"), TWO_SIDED)
def test_two_sided_games_pair_every_two_bots_on_both_sides(
    game_id: str, players: int, options: dict[str, str]
) -> None:
    bots = bot_lists(4)
    plans, groups = schedule(game_id, players, options, bots, deals=1)
    assert len(groups) == 2
    sides = Counter(tuple(place_bots(p, groups)) for p in plans)
    expected = {(a, b) for a, b in itertools.permutations(bots, 2)}
    assert set(sides) == expected
    assert set(sides.values()) == {1}


def test_whist_pairing_puts_two_copies_of_a_bot_in_one_partnership() -> None:
    plans, _ = schedule("whist", 4, {}, ["x", "y"], deals=1)
    assert [p.seats for p in plans] == [("x", "y", "x", "y"), ("y", "x", "y", "x")]


def test_fewer_bots_than_places_fill_the_table_cyclically() -> None:
    plans, _ = schedule("spoil_five", 5, {}, ["a", "b", "c"], deals=1)
    assert [p.seats for p in plans] == [
        ("a", "b", "c", "a", "b"),
        ("b", "c", "a", "b", "c"),
        ("c", "a", "b", "c", "a"),
    ]


def test_more_bots_than_places_draw_every_combination() -> None:
    plans, _ = schedule("tennis_whist", 3, {}, bot_lists(5), deals=1)
    tables = {frozenset(p.seats) for p in plans}
    assert len(tables) == 10  # C(5, 3)
    assert len(plans) == 30  # every table in its 3 rotations


def test_gauntlet_only_draws_tables_with_the_first_bot() -> None:
    plans, _ = schedule("whist", 4, {}, bot_lists(4), fmt="gauntlet", deals=1)
    assert plans and all("b0" in p.seats for p in plans)
    assert {frozenset(p.seats) for p in plans} == {
        frozenset({"b0", "b1"}),
        frozenset({"b0", "b2"}),
        frozenset({"b0", "b3"}),
    }


@pytest.mark.parametrize(("game_id", "players", "options"), SHAPES)
def test_duplicate_plays_each_deal_in_every_rotation(
    game_id: str, players: int, options: dict[str, str]
) -> None:
    bots = bot_lists(3)
    plans, _ = schedule(game_id, players, options, bots, deals=3, duplicate=True)
    by_seed: dict[int, list[MatchPlan]] = {}
    for p in plans:
        by_seed.setdefault(p.seed, []).append(p)
    n_tables = len({p.table for p in plans})
    # One seed per deal of each table, shared by the table's rotations only.
    assert len(by_seed) == 3 * n_tables
    for group in by_seed.values():
        assert len({p.deal for p in group}) == 1
        assert len({p.table for p in group}) == 1
        for table in {p.table for p in group}:
            arrangements = [p.seats for p in group if p.table == table]
            rotations = {p.rotation for p in group if p.table == table}
            assert len(set(arrangements)) == len(arrangements) == len(rotations)
            # Every bot of the table occupies every seat once over the deal's rotations.
            for seat in range(len(arrangements[0])):
                column = Counter(a[seat] for a in arrangements)
                assert len(set(column.values())) == 1


def test_without_duplicate_every_match_has_its_own_seed() -> None:
    plans, _ = schedule("whist", 4, {}, bot_lists(3), deals=3, duplicate=False)
    assert len({p.seed for p in plans}) == len(plans)


def test_match_ids_are_unique_and_indexes_follow_the_order() -> None:
    plans, _ = schedule("spoil_five", 3, {}, bot_lists(6), deals=2)
    assert len({p.match_id for p in plans}) == len(plans)
    assert [p.index for p in plans] == list(range(len(plans)))


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**40),
    n_bots=st.integers(2, 6),
    shape=st.sampled_from(SHAPES),
    duplicate=st.booleans(),
)
def test_schedule_is_a_deterministic_function_of_config_and_seed(
    seed: int, n_bots: int, shape: tuple[str, int, dict[str, str]], duplicate: bool
) -> None:
    game_id, players, options = shape
    bots = bot_lists(n_bots)
    first, _ = schedule(game_id, players, options, bots, duplicate=duplicate, seed=seed)
    again, _ = schedule(game_id, players, options, bots, duplicate=duplicate, seed=seed)
    assert first == again
    other, _ = schedule(game_id, players, options, bots, duplicate=duplicate, seed=seed + 1)
    assert [p.seed for p in other] != [p.seed for p in first]
    assert [p.seats for p in other] == [p.seats for p in first]


def test_derive_seed_is_stable_and_63_bit() -> None:
    assert derive_seed(1, "deal", 0) == derive_seed(1, "deal", 0)
    assert derive_seed(1, "deal", 0) != derive_seed(1, "deal", 1)
    assert all(0 <= derive_seed(i) < 2**63 for i in range(100))


def test_matches_per_pairing_must_be_whole_rotation_cycles() -> None:
    game = get_game("spoil_five")
    config = game.configure(3)
    with pytest.raises(ValueError, match="multiple of 3"):
        build_schedule(game, config, bot_lists(3), "round_robin", 4, True, 0)
