"""The double-dummy solver (engine.solver) against brute force by the referee itself.

The brute force knows nothing of the solver: it walks every legal action with the game's own
``clone``/``apply`` to the end of the deal and scores the deal from the events the referee emits,
maximising for the mover's side and minimising for everyone else (the solver's paranoid
convention). Positions are random endings of seeded random matches: small enough to walk whole.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import engine
from engine import Event, MatchState
from engine.games.forty_five import deal_points
from engine.solver import NATIVE, Solution, SolverError, SolverLimit, solvable, solve, unit

#: (events of one action) -> (value they add, whether the deal ended).
Scorer = Callable[[Sequence[Event]], tuple[int, bool]]


def scorer(state: MatchState) -> Scorer:
    """How the referee's events score the current deal for the side of the seat to move."""
    mover = state.to_move
    assert mover is not None
    game = state.game.id
    if game == "whist":

        def whist(events: Sequence[Event]) -> tuple[int, bool]:
            won = sum(e.kind == "trick" and e.data["winner"] % 2 == mover % 2 for e in events)
            return won, any(e.kind == "deal_score" for e in events)

        return whist
    if game == "tennis_whist":

        def tennis(events: Sequence[Event]) -> tuple[int, bool]:
            won = sum(e.kind == "trick" and e.data["winner"] == mover for e in events)
            return won, any(e.kind == "round_end" for e in events)

        return tennis
    if game == "forty_five":

        def forty_five(events: Sequence[Event]) -> tuple[int, bool]:
            for e in events:
                if e.kind == "deal_score":
                    tricks = e.data["tricks"]
                    assert isinstance(tricks, list)
                    ours = int(tricks[mover % 2])
                    scoring = str(state.config.option("scoring"))
                    if ours >= 3:
                        return deal_points(ours, scoring), True
                    return -deal_points(5 - ours, scoring), True
            return 0, False

        return forty_five
    stake = state.stakes[mover]  # type: ignore[attr-defined]

    def spoil_five(events: Sequence[Event]) -> tuple[int, bool]:
        for e in events:
            if e.kind == "pool_won":
                jinx = int(e.data["jinx_bonus"])  # type: ignore[arg-type]
                if e.data["seat"] == mover:
                    return int(e.data["chips"]) + jinx, True  # type: ignore[arg-type]
                return (-1 if jinx else 0), True
            if e.kind == "spoil":
                return stake, True
        return 0, False

    return spoil_five


def brute_values(state: MatchState) -> list[int]:
    """Each legal action's value for the mover's side, by walking every line of play."""
    mover = state.to_move
    assert mover is not None
    score = scorer(state)
    sides = state.game.sides(state.config)
    if sides is None or state.game.id == "spoil_five":
        ours = {mover}
    else:
        ours = set(next(side for side in sides if mover in side))

    seen: dict[tuple[object, ...], int] = {}

    def after(s: MatchState, action: engine.Action) -> int:
        sim = s.clone()
        gained, over = score(sim.apply(action))
        return gained if over else gained + walk(sim)

    def walk(s: MatchState) -> int:
        key = fingerprint(s)
        if key not in seen:
            values = [after(s, a) for a in s.legal_actions()]
            seen[key] = max(values) if s.to_move in ours else min(values)
        return seen[key]

    return [after(state, a) for a in state.legal_actions()]


#: State attributes that record the past only: two states differing only in them play alike.
HISTORY = {"events", "decisions", "_legal", "_result", "rng", "stats", "played", "discards"}
HISTORY |= {"rob_discard", "demoted_played", "finished_tricks", "dealt"}


def fingerprint(state: MatchState) -> tuple[object, ...]:
    """The referee's state less its history (a memo key for the walk: positions reached by
    different orders of the same cards are one)."""
    out: list[object] = [len(state.finished_tricks)]  # type: ignore[attr-defined]
    for name, value in sorted(vars(state).items()):
        if name not in HISTORY:
            out.append((name, tuple(value) if isinstance(value, list) else value))
    return tuple(out)


def ending(game: str, players: int, seed: int, cards: int, **options: object) -> MatchState:
    """A random position of a seeded random match, the mover holding at most ``cards`` cards."""
    state = engine.make(game, players=players, seed=seed, **options)  # type: ignore[arg-type]
    rng = random.Random(seed)
    while True:
        mover = state.to_move
        assert mover is not None, "the match ended before the ending was reached"
        hands = state.hands  # type: ignore[attr-defined]
        # Then a coin decides whether to go on, so that endings start mid-trick too.
        small = 0 < hands[mover].bit_count() <= cards and solvable(state) is None
        if small and rng.random() < 0.5:
            return state
        state.apply(rng.choice(state.legal_actions()))


CASES = [
    ("whist", 4, 3, {}),
    ("tennis_whist", 2, 4, {}),
    ("tennis_whist", 3, 3, {}),
    ("tennis_whist", 5, 2, {}),
    ("forty_five", 4, 3, {}),
    ("forty_five", 2, 4, {}),
    ("forty_five", 4, 3, {"scoring": "difference"}),
    ("spoil_five", 3, 3, {}),
    ("spoil_five", 5, 2, {}),
    ("spoil_five", 2, 4, {"must_rob": True}),
]


@pytest.mark.parametrize(("game", "players", "cards", "options"), CASES)
def test_solver_matches_brute_force_on_random_endings(
    game: str, players: int, cards: int, options: dict[str, object]
) -> None:
    for seed in range(10):
        state = ending(game, players, seed, cards, **options)
        before = [list(state.hands), state.to_move, len(state.events)]  # type: ignore[attr-defined]
        sol = solve(state)
        assert [list(state.hands), state.to_move, len(state.events)] == before  # type: ignore[attr-defined]
        assert sol.actions == state.legal_actions()
        assert list(sol.values) == brute_values(state), f"{game} {players} seed {seed}"
        assert sol.unit == unit(game)
        if game in ("whist", "tennis_whist"):  # the Python search too, where C was the default
            assert solve(state, native=False).values == sol.values


def full_deal(game: str, players: int, seed: int, **options: object) -> MatchState:
    """The first position of a seeded random match where a card is played or an ace of trumps'
    holder chooses (spoil's whole five tricks, heads-up, are small enough to walk)."""
    state = engine.make(game, players=players, seed=seed, **options)  # type: ignore[arg-type]
    rng = random.Random(seed)
    while solvable(state) is not None:
        state.apply(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("game", ["forty_five", "spoil_five"])
def test_heads_up_spoil_deals_with_the_ace_decisions(game: str) -> None:
    # Seeds where the ace of trumps is dealt to a player (announce, rob or stay silent at its
    # first turn) or an ace is turned up (the dealer robs; the ace joins after trick 1).
    seen = set()
    for seed in range(40):
        state = full_deal(game, 2, seed)
        kinds = {a.kind for a in state.legal_actions()}
        waiting = state.ace_wait >= 0  # type: ignore[attr-defined]
        pending = state.pending_ace >= 0  # type: ignore[attr-defined]
        what = (
            "choice"
            if "announce" in kinds
            else "waiting"
            if waiting
            else "pending"
            if pending
            else ""
        )
        if not what or what in seen:
            continue
        seen.add(what)
        assert list(solve(state).values) == brute_values(state), f"{game} seed {seed} {what}"
    assert seen == {"choice", "waiting", "pending"}


def test_claim_or_jinx_is_solved_as_a_decision() -> None:
    for seed in range(200):
        state = engine.make("spoil_five", players=2, seed=seed)
        rng = random.Random(seed)
        while state.to_move is not None and state.legal_actions()[0].kind != "claim":
            if state.deal_number > 1:  # type: ignore[attr-defined]
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.to_move is not None and state.legal_actions()[0].kind == "claim":
            sol = solve(state)
            assert [a.text for a in sol.actions] == ["claim", "jinx"]
            assert list(sol.values) == brute_values(state)
            assert sol.value_of("claim") == state.pool  # type: ignore[attr-defined]
            return
    pytest.fail("no seed reached a claim")


def test_a_forced_action_has_the_positions_value_and_loses_nothing() -> None:
    state = ending("whist", 4, 7, 1)
    sol = solve(state)
    assert len(sol.actions) == 1
    assert sol.values == (sol.value,)
    assert sol.loss(sol.actions[0]) == 0
    assert sol.best() == sol.actions


@pytest.mark.parametrize(("game", "players"), [("whist", 4), ("forty_five", 4), ("forty_five", 2)])
def test_values_agree_with_the_next_position_for_either_side(game: str, players: int) -> None:
    # Two sides, zero-sum: after an action, the next mover's value is the same line seen from
    # its side. Whist counts tricks from here: the side's tricks in the action's trick, then the
    # rest split; forty-five's points are won by one side, lost by the other.
    for seed in range(4):
        state = ending(game, players, seed, 5 if game == "whist" else 4)
        sol = solve(state)
        mover = sol.seat
        for action, value in zip(sol.actions, sol.values, strict=True):
            child = state.clone()
            events = child.apply(action)
            if child.to_move is None or solvable(child) is not None:
                continue
            same = child.to_move % 2 == mover % 2
            after = solve(child).value
            if game == "whist":
                won = sum(e.kind == "trick" and e.data["winner"] % 2 == mover % 2 for e in events)
                left = child.hands[child.to_move].bit_count()  # type: ignore[attr-defined]
                assert value == won + (after if same else left - after)
            else:
                assert value == (after if same else -after)


def test_whist_values_do_not_depend_on_the_names_of_seats() -> None:
    # The same cards one seat round the table: the same values.
    state = ending("whist", 4, 3, 4)
    turned = state.clone()
    turned.hands = turned.hands[-1:] + turned.hands[:-1]  # type: ignore[attr-defined]
    turned.trick_seats = [(s + 1) % 4 for s in turned.trick_seats]  # type: ignore[attr-defined]
    turned.trick_leader = (turned.trick_leader + 1) % 4  # type: ignore[attr-defined]
    assert turned.to_move is not None
    turned.to_move = (turned.to_move + 1) % 4
    assert solve(turned).values == solve(state).values


def test_positions_with_nothing_to_solve_are_refused_in_one_line() -> None:
    tennis = engine.make("tennis_whist", players=3, seed=0)
    rng = random.Random(0)
    while tennis.legal_actions()[0].kind != "trump":
        tennis.apply(rng.choice(tennis.legal_actions()))
    assert solvable(tennis) == "tennis_whist: the dealer is nominating trumps, not playing a card"
    with pytest.raises(SolverError, match="nominating trumps"):
        solve(tennis)
    singles = engine.make("tennis", players=2, seed=0)
    with pytest.raises(SolverError, match="no solver for tennis: it solves forty_five"):
        solve(singles)
    with pytest.raises(SolverError, match="no solver for tennis"):
        unit("tennis")
    for seed in range(60):
        spoil = engine.make("forty_five", players=2, seed=seed)
        if spoil.legal_actions()[0].kind in ("decline", "rob"):
            assert "has not yet robbed" in str(solvable(spoil))
            break
    else:
        pytest.fail("no seed turned up an ace")


def test_a_node_budget_raises_solver_limit() -> None:
    state = engine.make("whist", players=4, seed=1)
    with pytest.raises(SolverLimit, match="more than 50 nodes"):
        solve(state, max_nodes=50)


def test_solutions_are_deterministic() -> None:
    state = ending("spoil_five", 4, 2, 3)
    first, second = solve(state), solve(state)
    assert first == second
    assert isinstance(first, Solution)


def test_the_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (Path(__file__).parents[2] / "docs" / "engine.md").read_text()
    section = text[text.index("## Solving a deal") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    exec(compile(match.group(1), "docs/engine.md", "exec"), {})
    assert capsys.readouterr().out.startswith("tricks {'play:")


@pytest.mark.skipif(not NATIVE, reason="engine/solver/_native.c is not built")
@pytest.mark.parametrize(("game", "players", "cards"), [("whist", 4, 6), ("tennis_whist", 3, 5)])
def test_the_c_search_gives_the_python_searchs_values(game: str, players: int, cards: int) -> None:
    for seed in range(8):
        state = ending(game, players, seed, cards)
        native, python = solve(state, native=True), solve(state, native=False)
        assert native.values == python.values
        assert native.actions == python.actions
    with pytest.raises(SolverLimit, match="more than 10 nodes"):
        solve(engine.make("whist", players=4, seed=1), max_nodes=10, native=True)


def test_native_true_for_a_game_without_the_c_search_solves_in_python() -> None:
    state = ending("forty_five", 2, 1, 3)
    assert solve(state, native=True).values == solve(state).values
