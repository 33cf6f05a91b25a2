"""The PettingZoo environment (engine/adapters/pettingzoo_env.py): PettingZoo's own API and seed
tests for every game and table size, the mask against the engine's, rewards, seeding, and an
observation vector that hidden cards do not change."""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any

import pytest

pytest.importorskip("pettingzoo")

import numpy as np
from pettingzoo.test import api_test, seed_test

import engine
from engine.adapters.pettingzoo_env import CardArenaEnv, encoder_for, env, raw_env
from engine.cards import CARD_TEXT

CYCLES = 200


def cases() -> list[Any]:
    """Every game and table size (tennis doubles under both controls); the default tables run
    in the quick suite, the others (about 2 s each, mostly learning the layout) are slow."""
    out = []
    for game_id in engine.game_ids():
        game = engine.get_game(game_id)
        tables: list[tuple[int, dict[str, Any]]] = [(n, {}) for n in game.player_counts]
        if game_id == "tennis":
            tables.append((4, {"control": "players"}))
        for players, options in tables:
            default = players == game.default_players and not options
            marks = () if default else (pytest.mark.slow,)
            name = f"{game_id}-{players}" + "".join(f"-{k}={v}" for k, v in options.items())
            out.append(pytest.param(game_id, players, options, marks=marks, id=name))
    return out


@contextmanager
def quiet() -> Iterator[None]:
    # api_test warns about style (a Dict observation, not a Box) and prints its progress.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize(("game_id", "players", "options"), cases())
def test_pettingzoo_api_and_seed_tests(
    game_id: str, players: int, options: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    with quiet():
        api_test(env(game_id, players, **options), num_cycles=CYCLES)
        seed_test(lambda: env(game_id, players, **options), num_cycles=CYCLES)
    assert "Passed API test" in capsys.readouterr().out


def play(e: CardArenaEnv, seed: int, finals: dict[str, float] | None = None) -> Iterator[str]:
    """A random match through the AEC loop, yielding each agent before it acts; ``finals``
    gets each agent's reward as it leaves."""
    rng = np.random.default_rng(seed)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        if terminated or truncated:
            if finals is not None:
                finals[agent] = reward
            e.step(None)
            continue
        yield agent
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))


@pytest.mark.parametrize("game_id", engine.game_ids())
def test_mask_is_the_engines_and_rewards_are_the_returns(game_id: str) -> None:
    e = raw_env(game_id, seed=1)
    e.reset()
    space = e.observation_space(e.possible_agents[0])
    finals: dict[str, float] = {}
    for agent in play(e, seed=1, finals=finals):
        match = e.match
        assert e.possible_agents[match.to_move or 0] == agent
        for other in e.agents:
            seen = e.observe(other)
            assert space.contains(seen)
            if other == agent:
                expected = np.frombuffer(match.legal_mask(), dtype=np.int8)
                assert np.array_equal(seen["action_mask"], expected)
                assert seen["action_mask"].dtype == np.int8
            else:
                assert not seen["action_mask"].any()
        assert set(e.rewards.values()) == {0.0}
    assert e.match.is_terminal and not e.agents
    returns = e.match.returns()
    assert [finals[a] for a in e.possible_agents] == pytest.approx(returns)
    assert set(e.truncations.values()) <= {False}
    assert sum(returns) == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("game_id", "players"),
    [("whist", 4), ("tennis_whist", 4), ("spoil_five", 5), ("forty_five", 4), ("tennis", 2)],
)
def test_hidden_cards_do_not_change_the_vector(game_id: str, players: int) -> None:
    """Worlds that differ only in what a seat cannot see (determinize keeps its view) give
    that seat the same vector; other seats' vectors do change, so cards are really encoded."""
    state = engine.make(game_id, players, seed=4)
    encoder = encoder_for(state.config)
    rng = random.Random(4)
    others_changed = 0
    for decision in range(60):
        if state.is_terminal:
            break
        if decision % 6 == 0:
            for seat in range(state.num_seats):
                mine = encoder.encode(state.observation(seat))
                for _ in range(3):
                    world = state.determinize(seat, rng)
                    assert np.array_equal(encoder.encode(world.observation(seat)), mine)
                    others_changed += any(
                        not np.array_equal(
                            encoder.encode(world.observation(o)),
                            encoder.encode(state.observation(o)),
                        )
                        for o in range(state.num_seats)
                        if o != seat
                    )
        state.apply(rng.choice(state.legal_actions()))
    assert others_changed > 0


def test_layout_follows_the_observation_fields() -> None:
    whist = encoder_for(engine.get_game("whist").configure(4, {}))
    kinds = {f.name: f.kind for f in whist.fields}
    assert kinds["hand"] == "card counts (pack)"
    assert kinds["turn_up"] == "card (pack)"
    assert kinds["dealer"] == "seat one-hot 4"
    assert kinds["trump"] == "one of 'C' 'D' 'H' 'S'"
    assert kinds["turn_up_in_hand"] == "flag"
    assert kinds["tricks"].startswith("13 x [present, {leader: seat one-hot 4, cards: 4 x [card")
    assert sum(f.size for f in whist.fields) == whist.size == whist.low.shape[0]
    tennis = encoder_for(engine.get_game("tennis").configure(2, {}))
    kinds = {f.name: f.kind for f in tennis.fields}
    assert "hand: card counts (tennis)" in kinds["players"]
    assert "recent" not in kinds  # free text: in render() only
    # Learnt once per configuration, the same in every environment.
    assert raw_env("whist").encoder is whist


def test_vector_of_a_hand() -> None:
    state = engine.make("whist", seed=2)
    encoder = encoder_for(state.config)
    obs = state.observation(0)
    vector = encoder.encode(obs)
    slot = {f.name: f for f in encoder.fields}
    hand = vector[slot["hand"].offset : slot["hand"].offset + slot["hand"].size]
    assert np.flatnonzero(hand).tolist() == sorted(CARD_TEXT.index(c) for c in obs.hand)
    assert vector[slot["seat"].offset : slot["seat"].offset + 4].tolist() == [1, 0, 0, 0]


def test_seeds() -> None:
    def trace(e: CardArenaEnv) -> list[bytes]:
        return [e.observe(agent)["observation"].tobytes() for agent in islice(play(e, 0), 30)]

    a, b = raw_env("spoil_five", seed=9), raw_env("spoil_five")
    a.reset()
    b.reset(seed=9)  # the constructor's seed is the first reset's
    assert a.match.seed == b.match.seed == 9
    assert trace(a) == trace(b)
    a.reset()
    b.reset()
    assert a.match.seed == b.match.seed != 9  # later matches draw their seeds from the first
    assert trace(a) == trace(b)


def test_illegal_actions_raise_and_render_is_text() -> None:
    e = raw_env("whist", seed=3)
    e.reset()
    mask = e.observe(e.agent_selection)["action_mask"]
    with pytest.raises(engine.IllegalActionError):
        e.step(int(np.flatnonzero(mask == 0)[0]))
    with pytest.raises(ValueError, match=r"not in 0\.\.51"):
        e.step(52)
    text = e.render()
    assert text.startswith(f"{e.agent_selection} (") and "Hand:" in text
