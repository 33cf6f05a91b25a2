"""Game.restore: a full state rebuilt from what one seat is sent (its observation and the events
it saw), as a search bot that has no referee's state builds one."""

from __future__ import annotations

import random

import pytest

import engine
from engine import EngineError, MatchState, get_game

#: Every game and table size: (game id, players).
TABLES = [
    ("whist", None),
    ("tennis_whist", None),
    ("spoil_five", None),
    ("spoil_five", 3),
    ("forty_five", None),
    ("forty_five", 2),
    ("tennis", 2),
    ("tennis", 4),
]


def _states(game_id: str, players: int | None, seed: int, every: int) -> list[MatchState]:
    """Copies of one random match at every ``every``-th decision, and at its end."""
    state = engine.make(game_id, players=players, seed=seed)
    rng = random.Random(seed)
    out = []
    while state.to_move is not None:
        if state.decisions % every == 0:
            out.append(state.clone())
        state.apply(rng.choice(state.legal_actions()))
    out.append(state)
    return out


@pytest.mark.parametrize(("game_id", "players"), TABLES)
def test_restore_shows_the_seat_what_it_saw(game_id: str, players: int | None) -> None:
    game = get_game(game_id)
    for seed in range(3):
        for state in _states(game_id, players, seed, every=7):
            for seat in range(state.num_seats):
                seen = state.visible_events(seat)
                view = state.observation(seat).to_dict()
                restored = game.restore(state.config, view, seen, random.Random(seed))
                assert restored.observation(seat).to_dict() == view
                assert restored.to_move == state.to_move
                if state.to_move == seat:
                    got = [a.text for a in restored.legal_actions()]
                    assert got == [a.text for a in state.legal_actions()]


@pytest.mark.parametrize(("game_id", "players"), TABLES)
def test_restored_states_play_on_to_the_end(game_id: str, players: int | None) -> None:
    game = get_game(game_id)
    rng = random.Random(5)
    for state in _states(game_id, players, 11, every=13)[:-1]:
        seat = state.to_move
        assert seat is not None
        restored = game.restore(
            state.config, state.observation(seat).to_dict(), state.visible_events(seat), rng
        )
        sim = restored.determinize(seat, rng)
        assert sim.observation(seat).to_dict() == restored.observation(seat).to_dict()
        while sim.to_move is not None:
            sim.apply(rng.choice(sim.legal_actions()))
        assert sim.result() is not None


@pytest.mark.parametrize(("game_id", "players"), TABLES)
def test_restore_hides_nothing_it_was_not_shown(game_id: str, players: int | None) -> None:
    """Restored twice with different generators, what the seat cannot see differs somewhere:
    the hidden parts are drawn, not copied from anywhere."""
    game = get_game(game_id)
    state = _states(game_id, players, 2, every=5)[1]
    seat = state.to_move
    assert seat is not None
    view = state.observation(seat).to_dict()
    others = [s for s in range(state.num_seats) if s != seat]
    draws = set()
    for k in range(8):
        restored = game.restore(state.config, view, state.visible_events(seat), random.Random(k))
        draws.add(repr([restored.observation(s).to_dict() for s in others]))
    assert len(draws) > 1


def test_restore_refuses_an_observation_the_game_could_not_show() -> None:
    state = engine.make("whist", seed=1)
    seat = state.to_move
    assert seat is not None
    view = state.observation(seat).to_dict()
    bad = dict(view, hand=view["hand"][:-1])  # a card short: the sizes no longer add up
    with pytest.raises(EngineError, match="whist"):
        get_game("whist").restore(state.config, bad, (), random.Random(1))
    with pytest.raises(EngineError, match="seat"):
        get_game("whist").restore(state.config, dict(view, seat=9), (), random.Random(1))
    with pytest.raises(EngineError, match="whist"):
        get_game("whist").restore(state.config, dict(view, tricks="x"), (), random.Random(1))


@pytest.mark.parametrize(("game_id", "players"), TABLES)
def test_restore_refuses_a_hand_a_card_short(game_id: str, players: int | None) -> None:
    """Every game checks that the cards add up: a hand a card short is refused in one line."""
    state = _states(game_id, players, 3, every=9)[2]
    seat = state.to_move
    assert seat is not None
    view = state.observation(seat).to_dict()
    if "hand" in view:
        hand = list(view["hand"])  # type: ignore[arg-type]
        assert hand
        bad = dict(view, hand=hand[:-1])
    else:  # tennis: the hands are in the players' views
        views = [dict(p) for p in view["players"]]  # type: ignore[union-attr]
        mine = next(p for p in views if p["visible"] and p["hand"])
        mine["hand"] = list(mine["hand"])[:-1]
        bad = dict(view, players=views)
    with pytest.raises(EngineError, match=game_id.split("_")[0]):
        get_game(game_id).restore(state.config, bad, state.visible_events(seat), random.Random(1))
