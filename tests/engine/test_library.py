"""The engine as a library (docs/engine.md): make, action spaces, legal masks, returns, and
check_game's failures saying what broke."""

from __future__ import annotations

import random

import pytest

import engine
from engine import Action, ConfigError, MatchConfig, game_ids, get_game, make, rank_returns
from engine.games.tricks import PLAY_ACTIONS
from engine.games.whist import Whist, WhistObservation, WhistState
from engine.testing import check_game, playthrough_difference


def test_make_is_the_long_form_in_one_call() -> None:
    state = make("whist", players=4, seed=1, points_to_win=5)
    game = get_game("whist")
    long = game.new_match(game.configure(4, {"points_to_win": 5}), 1)
    assert state.config == long.config and state.seed == 1
    assert [e.to_dict() for e in state.events] == [e.to_dict() for e in long.events]
    assert make("spoil_five").config.players == get_game("spoil_five").default_players
    with pytest.raises(ConfigError, match="points_to_win"):
        make("whist", points_to_win=0)


@pytest.mark.parametrize("game_id", game_ids())
def test_every_action_space_is_numbered_in_order(game_id: str) -> None:
    game = get_game(game_id)
    for players in game.player_counts:
        space = game.action_space(game.configure(players))
        assert [a.index for a in space] == list(range(len(space)))
        assert len({a.text for a in space}) == len(space)


def test_spaces_agree_where_they_share_actions() -> None:
    # Every trick game's space begins with the 52 plays, so one interned play has one number.
    for game_id in ("whist", "tennis_whist", "spoil_five", "forty_five"):
        game = get_game(game_id)
        assert get_game(game_id).action_space(game.configure())[:52] == PLAY_ACTIONS
    tennis = get_game("tennis")
    team = tennis.action_space(tennis.configure(4))
    players = tennis.action_space(tennis.configure(4, {"control": "players"}))
    assert players[: len(team)] == team and players[-1].text == "leave"


def test_number_actions_refuses_a_second_number() -> None:
    a, b = Action("x"), Action("y")
    assert engine.number_actions((a, b)) == (a, b) and (a.index, b.index) == (0, 1)
    with pytest.raises(ValueError, match="y is action 1 elsewhere, not 0"):
        engine.number_actions((b, a))
    assert Action("play", "QS").index == -1  # made by hand: in no space


def test_legal_mask_marks_the_legal_actions() -> None:
    state = make("tennis_whist", players=3, seed=4)
    rng = random.Random(4)
    space = state.game.action_space(state.config)
    while not state.is_terminal:
        mask = state.legal_mask()
        assert isinstance(mask, bytes) and len(mask) == len(space)
        assert [space[i] for i, bit in enumerate(mask) if bit] == sorted(
            state.legal_actions(), key=lambda a: a.index
        )
        state.apply(rng.choice(state.legal_actions()))
    assert not any(state.legal_mask())


def test_returns_follow_the_ranks_and_sum_to_zero() -> None:
    assert rank_returns((1, 2, 1, 2), ((0, 2), (1, 3))) == (1.0, -1.0, 1.0, -1.0)
    assert rank_returns((1, 2, 2, 4, 5)) == (1.0, 0.25, 0.25, -0.5, -1.0)
    assert rank_returns((1, 1)) == (0.0, 0.0)
    # Unequal sides: one divisor for all keeps the sum at zero.
    assert rank_returns((1, 2, 2), ((0,), (1, 2))) == (1.0, -0.5, -0.5)
    state = make("whist", seed=3)
    assert not state.is_terminal and state.returns() == (0.0,) * 4
    state.forfeit(1, "test")
    assert state.is_terminal and state.returns() == (1.0, -1.0, 1.0, -1.0)


# --- check_game on broken games: the message names the rule --------------------------------


class _LeakyState(WhistState):
    def observation(self, seat: int) -> WhistObservation:
        real = super().observation(seat)
        other = super().observation((seat + 1) % 4)
        return WhistObservation(**{**_fields(real), "hand": other.hand})


def _fields(obs: WhistObservation) -> dict[str, object]:
    return {name: getattr(obs, name) for name in obs.__dataclass_fields__}


class _Leaky(Whist):
    def new_match(self, config: MatchConfig, seed: int) -> WhistState:
        return _LeakyState(self, config, seed)


class _ShortSpace(Whist):
    def action_space(self, config: MatchConfig) -> tuple[Action, ...]:
        return PLAY_ACTIONS[:51]


def test_check_game_names_a_leak() -> None:
    with pytest.raises(AssertionError, match=r"whist .*seed 0\) at decision 0: .*seat 3's"):
        check_game(_Leaky(), seeds=(0,))


def test_check_game_names_an_action_outside_the_space() -> None:
    with pytest.raises(AssertionError, match=r"play:AS is not action_space\(\)\[51\]"):
        check_game(_ShortSpace(), seeds=range(5))


def test_a_playthrough_difference_names_the_line() -> None:
    message = playthrough_difference("f.txt", ["a", "b", "c"], ["a", "b", "x"])
    assert message is not None and message.startswith("f.txt:3:")
    assert "expected: c" in message and "got:      x" in message
    assert playthrough_difference("f.txt", ["a"], ["a", "b"]) is not None
    assert playthrough_difference("f.txt", ["a"], ["a"]) is None
