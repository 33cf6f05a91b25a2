"""The search's horizons: where a simulation stops and what it is worth there."""

from __future__ import annotations

import random

import engine
from engine import MatchState
from reference_bots.search.rollout import Rollout, side_of_seats


def _play_out(state: MatchState, seed: int) -> list[float]:
    seat = state.to_move
    assert seat is not None
    rollout = Rollout(state.game.id, state.observation(seat).to_dict(), side_of_seats(state))
    return rollout.start().play_out(state, random.Random(seed))


def test_a_tennis_simulation_runs_to_the_end_of_the_game_not_of_the_point() -> None:
    # A hand lasts a game: a point's horizon would value a Kill spent on any point as free.
    for seed in range(6):
        state = engine.make("tennis", players=2, seed=seed)
        values = _play_out(state, seed)
        games = [e for e in state.events if e.kind == "game"]
        assert len(games) == 1, "the simulation stopped before the game ended, or went on"
        assert sum(e.kind == "point" for e in state.events) >= 4
        winner = 0 if games[0].data["winner"] == "P1" else 1
        assert values == [1.0 if s == winner else -1.0 for s in range(2)]


def test_a_deal_that_ends_the_match_is_worth_the_match() -> None:
    # One point wins: the seventh trick decides, and the margin beyond it is worth nothing.
    margins = set()
    for seed in range(8):
        state = engine.make("whist", seed=seed, points_to_win=1, games_per_rubber=1)
        values = _play_out(state, seed)
        assert state.to_move is None
        assert values == list(state.returns())
        assert sorted(values) == [-1.0, -1.0, 1.0, 1.0]
        margins.add(abs(state.tricks_won[0] - state.tricks_won[1]))
    assert len(margins) > 1, "every deal ended by the same margin: the test shows nothing"


def test_a_deal_within_a_longer_match_is_worth_its_share_of_the_tricks() -> None:
    state = engine.make("whist", seed=3, points_to_win=5, games_per_rubber=1)
    values = _play_out(state, 3)
    assert state.to_move is not None, "one deal should not finish a game of five points"
    (deal,) = [e for e in state.events if e.kind == "deal_score"]
    a, b = (int(t) for t in deal.data["tricks"])  # type: ignore[union-attr]
    assert values == [(a - b) / 13, (b - a) / 13, (a - b) / 13, (b - a) / 13]
