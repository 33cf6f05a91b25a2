"""Properties every referee must have, checked over random playouts of every game.

The checks themselves are :mod:`engine.testing`'s (one definition, importable by anyone adding a
game); here hypothesis draws the seeds, and the seed fixes both the referee's chance and the
random choices, so a failure shrinks to a replayable seed. The table covers each game at several
table sizes; :func:`engine.testing.check_game` runs on every registered game as a game author
would run it.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MatchState, game_ids, get_game
from engine.cards import CARD_TEXT, FULL_DECK_MASK
from engine.testing import (
    check_clone,
    check_clone_sharing,
    check_game,
    check_playout,
    check_replay,
)

#: (game id, players, most decisions a match may take). Whist: 3 games of at most 13 deals of
#: 52 plays. Tennis whist: at most n*(sets-1)+1 sets of 8 rounds, each round one nomination
#: plus n*(9-k) plays. The other games get a generous cap: they must simply end.
CONFIGS: list[tuple[str, int, int]] = [
    ("whist", 4, 3 * 13 * 52),
    ("tennis_whist", 2, (2 * 2 + 1) * (8 + 2 * 36)),
    ("tennis_whist", 4, (2 * 4 + 1) * (8 + 4 * 36)),
    ("tennis_whist", 6, (2 * 6 + 1) * (8 + 6 * 36)),
    ("spoil_five", 2, 50_000),
    ("spoil_five", 5, 50_000),
    ("spoil_five", 10, 50_000),
    ("forty_five", 2, 50_000),
    ("forty_five", 4, 50_000),
    ("tennis", 2, 50_000),
    ("tennis", 4, 50_000),
]
IDS = [f"{g}-{n}" for g, n, _ in CONFIGS]
#: The largest tables take about a second each to play out eight times: the slow tier.
LARGEST = {("tennis_whist", 6), ("spoil_five", 10)}
PLAYOUTS = [
    pytest.param(*c, id=i, marks=[pytest.mark.slow] if c[:2] in LARGEST else [])
    for c, i in zip(CONFIGS, IDS, strict=True)
]
SEEDS = st.integers(0, 2**31 - 1)


def new_match(game_id: str, players: int, seed: int) -> MatchState:
    game = get_game(game_id)
    return game.new_match(game.configure(players), seed)


@pytest.mark.parametrize("game_id", game_ids())
def test_every_game_passes_check_game(game_id: str) -> None:
    check_game(game_id, seeds=(0,))


@pytest.mark.parametrize(("game_id", "players", "bound"), PLAYOUTS)
@settings(max_examples=8, deadline=None)
@given(seed=SEEDS)
def test_random_playout_keeps_every_invariant(
    game_id: str, players: int, bound: int, seed: int
) -> None:
    game = get_game(game_id)
    check_playout(game, game.configure(players), seed, max_decisions=bound)


@pytest.mark.parametrize(("game_id", "players", "bound"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS)
def test_same_seed_and_decisions_replay_identically(
    game_id: str, players: int, bound: int, seed: int
) -> None:
    game = get_game(game_id)
    check_replay(game, game.configure(players), seed, max_decisions=bound)


@pytest.mark.parametrize(("game_id", "players", "bound"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS, stop=st.integers(0, 300))
def test_clone_is_independent(game_id: str, players: int, bound: int, seed: int, stop: int) -> None:
    game = get_game(game_id)
    check_clone(game, game.configure(players), seed, stop, max_decisions=bound)


@pytest.mark.parametrize(("game_id", "players", "bound"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS, stop=st.integers(0, 300))
def test_a_clone_is_a_deep_copy_in_value_sharing_only_what_never_changes(
    game_id: str, players: int, bound: int, seed: int, stop: int
) -> None:
    game = get_game(game_id)
    check_clone_sharing(game, game.configure(players), seed, stop)


# --- whist and tennis whist: the pack is conserved ------------------------------------------


def _played_mask(state: Any) -> int:
    mask = 0
    for trick in state.finished_tricks:
        for t in trick.cards:
            mask |= 1 << CARD_TEXT.index(t)
    for c in state.trick_cards:
        mask |= 1 << c
    return mask


def _assert_partition(parts: list[int]) -> None:
    total = 0
    for p in parts:
        assert not total & p, "a card is in two places"
        total |= p
    assert total == FULL_DECK_MASK, "a card went missing"


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_whist_conserves_the_pack(seed: int) -> None:
    state: Any = new_match("whist", 4, seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        _assert_partition([*state.hands, _played_mask(state)])
        assert state.turn_up_in_hand == bool(state.hands[state.dealer] >> state.turn_up & 1)
        state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@settings(max_examples=6, deadline=None)
@given(seed=SEEDS)
def test_tennis_whist_conserves_the_pack(players: int, seed: int) -> None:
    state: Any = new_match("tennis_whist", players, seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        turn_up = 1 << state.turn_up if state.turn_up >= 0 else 0
        _assert_partition([*state.hands, _played_mask(state), state.stock, turn_up])
        assert (state.turn_up >= 0) == (state.round_number == 1)
        # Only survivors hold cards, and all of them the same number of cards.
        sizes = {h.bit_count() for h, alive in zip(state.hands, state.alive, strict=True) if alive}
        assert len(sizes) <= 2 and all(
            not h for h, a in zip(state.hands, state.alive, strict=True) if not a
        )
        assert state.alive[state.to_move], "an eliminated player never decides"
        state.apply(rng.choice(state.legal_actions()))
