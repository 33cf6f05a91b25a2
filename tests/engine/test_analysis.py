"""``engine.analysis.analyze``: each legal action's value at a seat's decision, over worlds drawn
by ``determinize``, exactly where the solver takes the position and by rollouts otherwise."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from engine import MatchState, get_game
from engine.analysis import MEASURES, analyze, measure_for, random_policy, solver_for
from engine.errors import EngineError
from reference_bots.search.playout import search_policy
from tests.engine.planted import SEAT, blunder_position

#: (game, players, options): short matches of every game.
TABLES: list[tuple[str, int | None, dict[str, Any]]] = [
    ("whist", None, {"points_to_win": "1", "games_per_rubber": "1"}),
    ("tennis_whist", 3, {"sets_to_win": "1"}),
    ("spoil_five", 4, {}),
    ("forty_five", 2, {"points_to_win": "15"}),
    ("forty_five", 4, {"points_to_win": "15"}),
    ("tennis", 2, {}),
]
IDS = [f"{g}-{n or 'd'}" for g, n, _ in TABLES]


def states(
    game_id: str, players: int | None, options: Mapping[str, Any], seed: int
) -> Iterator[MatchState]:
    """Every state of a random match, before each decision (the same object, moved on)."""
    game = get_game(game_id)
    state = game.new_match(game.configure(players, options), seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        yield state
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])


def test_every_game_has_a_measure() -> None:
    from engine import game_ids

    assert set(MEASURES) == set(game_ids())
    with pytest.raises(EngineError, match="no analysis for"):
        measure_for("chess")


# Tennis always offers a choice (a pass at least): the trick games only.
@pytest.mark.parametrize(("game_id", "players", "options"), TABLES[:5], ids=IDS[:5])
def test_a_forced_decision_has_one_value(
    game_id: str, players: int | None, options: dict[str, Any]
) -> None:
    for state in states(game_id, players, options, 3):
        if len(state.legal_actions()) == 1:
            seat = state.to_move
            assert seat is not None
            found = analyze(state, seat, worlds=4, seed=1, rollout=search_policy)
            assert len(found.values) == 1
            assert found.loss(found.values[0].action) == (0.0, 0.0)
            return
    raise AssertionError("no forced decision in this match")


def _touching(state: MatchState) -> bool:
    """Whist: every legal card is of one suit, and no card ranked between two of them is still
    out (each is played or in the same hand): the cards are equivalent, whatever is played."""
    legal = state.legal_actions()
    if len(legal) < 2 or len({a.arg[1] for a in legal}) != 1:
        return False
    seat = state.to_move
    assert seat is not None
    obs = state.observation(seat).to_dict()
    gone = {c for t in obs["tricks"] for c in t["cards"]} | set(obs["hand"])
    ranks = "23456789TJQKA"
    held = sorted(ranks.index(a.arg[0]) for a in legal)
    suit = legal[0].arg[1]
    return all(ranks[r] + suit in gone for r in range(held[0], held[-1] + 1))


@pytest.mark.parametrize("policy", [random_policy, search_policy], ids=["random", "search"])
def test_equivalent_cards_have_equal_values(policy: Any) -> None:
    """A decision between equivalent cards is forced in all but name: with the same worlds and
    the same random numbers for every action, their values are equal, by rollouts and exactly."""
    found = 0
    for seed in range(1, 40):
        for state in states("whist", None, TABLES[0][2], seed):
            if not _touching(state):
                continue
            seat = state.to_move
            assert seat is not None
            rolled = analyze(state, seat, worlds=6, seed=seed, rollout=policy)
            assert len({v.mean for v in rolled.values}) == 1, rolled.values
            assert all(rolled.loss(v.action)[0] == 0.0 for v in rolled.values)
            exact = analyze(state, seat, worlds=3, seed=seed, solve=solver_for("whist", 20_000))
            if exact.method == "exact":
                assert len({v.mean for v in exact.values}) == 1
            found += 1
            break
        if found >= 3:
            return
    raise AssertionError("no decision between equivalent cards in 40 deals")


def test_the_same_seed_gives_the_same_values() -> None:
    state, _ = blunder_position()
    first = analyze(state, SEAT, worlds=8, seed=5, rollout=search_policy)
    again = analyze(state, SEAT, worlds=8, seed=5, rollout=search_policy)
    other = analyze(state, SEAT, worlds=8, seed=6, rollout=search_policy)
    assert first == again
    assert first.seed == 5 and first.method == "rollout" and first.worlds == 8
    assert [v.samples for v in first.values] != [v.samples for v in other.values]


def test_the_state_is_left_alone_and_the_seat_must_be_to_move() -> None:
    state, _ = blunder_position()
    before = (state.observation(SEAT).to_dict(), len(state.events), state.decisions)
    analyze(state, SEAT, worlds=3, seed=1)
    assert (state.observation(SEAT).to_dict(), len(state.events), state.decisions) == before
    with pytest.raises(ValueError, match="not to move"):
        analyze(state, (SEAT + 1) % 4)
    with pytest.raises(ValueError, match="at least 1"):
        analyze(state, SEAT, worlds=0)


def test_a_planted_blunder_costs_about_a_trick() -> None:
    """N, void in clubs, discards the ace of diamonds (a sure winner) instead of a low card."""
    state, ace = blunder_position()
    found = analyze(state, SEAT, worlds=32, seed=2, rollout=search_policy)
    loss, se = found.loss(ace)
    assert found.unit == "tricks"
    assert 0.7 <= loss <= 1.3 and se < 0.3, (loss, se)
    assert found.best().action.arg[0] in "23456"


def test_a_solver_values_every_world_or_none() -> None:
    """``solve`` gives the values when it takes every world (method exact, standard error over
    the worlds); one world declined sends the whole decision to rollouts."""
    state, _ = blunder_position()
    n = len(state.legal_actions())
    calls: list[int] = []

    def fake(world: MatchState) -> dict[int, float]:
        calls.append(1)
        return {i: float(i + len(calls) % 2) for i in range(n)}

    exact = analyze(state, SEAT, worlds=4, seed=1, solve=fake)
    assert exact.method == "exact" and exact.rollouts_per_world == 1
    assert [v.mean for v in exact.values] == [i + 0.5 for i in range(n)]
    assert all(v.se == pytest.approx(0.2887, abs=1e-3) for v in exact.values)
    assert exact.loss(exact.values[0].action) == (n - 1, 0.0)

    def picky(world: MatchState) -> dict[int, float] | None:
        calls.append(1)
        return None if len(calls) > 6 else dict.fromkeys(range(n), 0.0)

    rolled = analyze(state, SEAT, worlds=4, seed=1, solve=picky, rollouts_per_world=2)
    assert rolled.method == "rollout" and rolled.rollouts_per_world == 2


@pytest.mark.parametrize(("game_id", "players", "options"), TABLES[:5], ids=IDS[:5])
def test_rollouts_count_in_the_solvers_units(
    game_id: str, players: int | None, options: dict[str, Any]
) -> None:
    """Where only one play is left to every seat, a rollout is the solver's line: the two
    methods must then agree world by world, so their units and horizons are the same."""
    solve = solver_for(game_id)
    assert solve is not None
    compared = 0
    for seed in range(1, 12):
        for state in states(game_id, players, options, seed):
            seat = state.to_move
            assert seat is not None
            if not _last_cards(state) or solve(state) is None:
                continue
            rolled = analyze(state, seat, worlds=3, seed=seed)
            exact = analyze(state, seat, worlds=3, seed=seed, solve=solve)
            assert exact.method == "exact"
            assert [v.samples for v in rolled.values] == [v.samples for v in exact.values]
            compared += 1
        if compared >= 8:
            return
    raise AssertionError(f"only {compared} positions with one card a hand")


def _last_cards(state: MatchState) -> bool:
    """Every hand holds at most one card (and the seat to move has one legal play)."""
    views = [state.observation(s).to_dict() for s in range(state.num_seats)]
    return len(state.legal_actions()) == 1 and all(len(v.get("hand", ())) <= 1 for v in views)


def test_the_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (Path(__file__).parents[2] / "docs" / "engine.md").read_text()
    section = text[text.index("## Analysing a decision") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    exec(compile(match.group(1), "docs/engine.md", "exec"), {})
    assert re.fullmatch(r"exact points play:\w\w \d+\.\d\d ± \d+\.\d\d\n", capsys.readouterr().out)
