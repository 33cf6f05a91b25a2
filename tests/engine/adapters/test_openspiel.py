"""The OpenSpiel games (engine/adapters/openspiel_game.py): OpenSpiel's own random-simulation
test for every game and table size, legal actions against the engine's mask, zero-sum returns,
parameters and seeds, truncation, resampling, and OpenSpiel's MCTS and ISMCTS bots playing."""

from __future__ import annotations

import random
from typing import Any

import pytest

pytest.importorskip("pyspiel")

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import engine
from engine.adapters.openspiel_game import CardArenaState, default_max_game_length, short_name
from engine.errors import ConfigError

#: One deal of whist (52 decisions): short enough for search bots in the quick suite.
ONE_DEAL = "cardarena_whist(points_to_win=1,games_per_rubber=1)"


def load(game_id: str, players: int | None = None, **options: Any) -> Any:
    params: dict[str, Any] = dict(options)
    if players is not None:
        params["players"] = players
    return pyspiel.load_game(short_name(game_id), params)


def tables() -> list[Any]:
    """Every game and table size (tennis doubles under both controls); the default tables run
    in the quick suite, the others are slow."""
    out = []
    for game_id in engine.game_ids():
        game = engine.get_game(game_id)
        cases: list[tuple[int, dict[str, Any]]] = [(n, {}) for n in game.player_counts]
        if game_id == "tennis":
            cases.append((4, {"control": "players"}))
        for players, options in cases:
            default = players == game.default_players and not options
            marks = () if default else (pytest.mark.slow,)
            name = f"{game_id}-{players}" + "".join(f"-{k}={v}" for k, v in options.items())
            out.append(pytest.param(game_id, players, options, marks=marks, id=name))
    return out


@pytest.mark.parametrize(("game_id", "players", "options"), tables())
def test_random_sim_test(game_id: str, players: int, options: dict[str, Any]) -> None:
    game = load(game_id, players, **options)
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)


def test_every_game_is_registered() -> None:
    names = set(pyspiel.registered_names())
    assert {short_name(g) for g in engine.game_ids()} <= names


@pytest.mark.parametrize("game_id", engine.game_ids())
def test_game_info_follows_the_engine(game_id: str) -> None:
    game = load(game_id)
    ours = engine.get_game(game_id)
    config = ours.configure()
    assert game.num_players() == ours.num_seats(config)
    assert game.num_distinct_actions() == len(ours.action_space(config))
    assert game.max_game_length() == default_max_game_length(config)
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    kind = game.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM


@pytest.mark.parametrize("game_id", engine.game_ids())
def test_legal_actions_match_the_mask_and_returns_are_zero_sum(game_id: str) -> None:
    game = load(game_id)
    space = engine.get_game(game_id).action_space(engine.get_game(game_id).configure())
    rng = random.Random(7)
    for _ in range(2):
        state = game.new_initial_state()
        while not state.is_terminal():
            match = state.match
            mask = match.legal_mask()
            legal = state.legal_actions()
            assert legal == [i for i, bit in enumerate(mask) if bit]
            assert state.legal_actions_mask() == list(mask)
            assert state.current_player() == match.to_move
            assert state.returns() == [0.0] * game.num_players()
            action = rng.choice(legal)
            assert state.action_to_string(action) == space[action].text
            state.apply_action(action)
        assert state.current_player() == pyspiel.PlayerId.TERMINAL
        assert state.returns() == list(state.match.returns())
        assert sum(state.returns()) == pytest.approx(0.0, abs=1e-12)
        assert len(state.history()) == state.match.decisions


def test_parameters_choose_the_table_and_the_options() -> None:
    doubles = pyspiel.load_game("cardarena_tennis(players=4)")
    assert (doubles.num_players(), doubles.num_distinct_actions()) == (2, 230)
    players = pyspiel.load_game("cardarena_tennis(players=4,control=players)")
    assert (players.num_players(), players.num_distinct_actions()) == (4, 231)
    whist = pyspiel.load_game("cardarena_whist(points_to_win=5)")
    assert whist.new_initial_state().match.config.option("points_to_win") == 5
    assert whist.get_parameters()["points_to_win"] == 5
    with pytest.raises(pyspiel.SpielError, match="bogus"):
        pyspiel.load_game("cardarena_whist(bogus=1)")
    with pytest.raises(ConfigError, match="points_to_win"):
        pyspiel.load_game("cardarena_whist(points_to_win=0)")


def test_seeds_follow_the_order_states_are_used() -> None:
    game = pyspiel.load_game("cardarena_whist(seed=10)")
    first, second = game.new_initial_state(), game.new_initial_state()
    assert second.match.seed == 10  # used first
    assert first.match.seed == 11
    clone = first.clone()  # a clone draws no seed and is exact
    assert clone.match.seed == 11 and str(clone) == str(first)
    assert game.new_initial_state().match.seed == 12
    same = engine.make("whist", seed=10)
    assert second.match.observation(0) == same.observation(0)


def test_clone_is_independent() -> None:
    state = pyspiel.load_game("cardarena_forty_five").new_initial_state()
    state.apply_action(state.legal_actions()[0])
    clone = state.clone()
    assert isinstance(clone, CardArenaState)
    assert clone.history() == state.history()
    clone.apply_action(clone.legal_actions()[0])
    assert clone.match.decisions == state.match.decisions + 1


def test_a_match_that_reaches_max_game_length_is_a_draw() -> None:
    game = pyspiel.load_game("cardarena_whist(max_game_length=10)")
    assert game.max_game_length() == 10
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    assert state.match.decisions == 10 and not state.match.is_terminal
    assert state.current_player() == pyspiel.PlayerId.TERMINAL
    assert state.returns() == [0.0] * 4


@pytest.mark.parametrize("game_id", engine.game_ids())
def test_resample_from_infostate_keeps_the_players_view(game_id: str) -> None:
    state = load(game_id).new_initial_state()
    rng = random.Random(3)
    for _ in range(25):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    player = state.current_player()
    before = str(state)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    worlds = [state.resample_from_infostate(player, sampler) for _ in range(5)]
    for world in worlds:
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.observation_string(player) == state.observation_string(player)
        assert world.legal_actions() == state.legal_actions()
        world.apply_action(world.legal_actions()[0])  # plays on
    assert str(state) == before


def test_mcts_bot_plays_whist_to_the_end() -> None:
    game = pyspiel.load_game(ONE_DEAL)
    rs = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    bot = mcts.MCTSBot(game, 2.0, 20, evaluator, random_state=rs)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.current_player() == 0:
            action = bot.step(state)
        else:
            action = rs.choice(state.legal_actions())
        state.apply_action(action)
    assert state.match.is_terminal
    assert sorted(state.returns()) == [-1.0, -1.0, 1.0, 1.0]


def test_ismcts_bot_plays_whist_with_resampled_worlds() -> None:
    game = pyspiel.load_game(ONE_DEAL)
    rs = np.random.RandomState(1)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 20, random_state=rs)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.current_player() % 2 == 0:  # N and S search, E and W play at random
            action = bot.step(state)
        else:
            action = rs.choice(state.legal_actions())
        state.apply_action(action)
    assert state.match.is_terminal
    assert sum(state.returns()) == 0.0
