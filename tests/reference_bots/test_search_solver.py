"""The search bot's exact valuation near a deal's end (reference_bots/search/exact.py): it plays
every trick game legally in process and over ``arena match``, keeps to its budgets (counted in
worlds and nodes, not in time), falls back to rollouts for a whole decision when a world is too
big, and finds the card that an ending's exact value decides where the rollouts miss it."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from cardarena import Action

import engine
from engine import OptionValue
from engine.local import play
from engine.solver import solve
from reference_bots.catalog import RulesOrRandomBot, make_bot
from reference_bots.search import SearchBot, exact, pimc
from reference_bots.search.rollout import Rollout, side_of_seats
from tests.reference_bots.playing import ARENA, ROOT
from tests.reference_bots.test_search_bot import drive

#: Every trick game, on a short match: (game, players, options).
TRICK: list[tuple[str, int, dict[str, OptionValue]]] = [
    ("whist", 4, {"points_to_win": 1, "games_per_rubber": 1}),
    ("tennis_whist", 4, {"sets_to_win": 1}),
    ("forty_five", 4, {"points_to_win": 5}),
    ("spoil_five", 4, {"rounds": 1}),
]


@pytest.mark.parametrize(("game", "players", "options"), TRICK, ids=[t[0] for t in TRICK])
def test_it_plays_every_trick_game_legally_in_process(
    game: str, players: int, options: dict[str, OptionValue]
) -> None:
    bot = SearchBot(iterations=16, solver_games=set(exact.HAND_CARDS))
    table = [bot if s % 2 == 0 else RulesOrRandomBot() for s in range(players)]
    matches = play(game, table, seed=3, players=players, options=options, deals=2)
    for match in matches:
        assert match.result.reason == "normal" and set(match.failures) == {0}
    assert bot.solved > 0, "no decision was valued by the solver"
    assert bot.fallbacks == 0


def test_no_solver_is_the_rollout_search_of_before() -> None:
    table = TRICK[0]
    bot = SearchBot(5, iterations=16, solver=False)
    _, moves, _ = drive(*table[:3], bot, 1, seed=2)
    assert moves and bot.solved == bot.unsolved == 0
    assert make_bot("search", 1, solver=False).solver is False  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="only the search bot"):
        make_bot("rules", 1, solver=False)


def test_the_same_seed_plays_the_same_moves_with_the_solver() -> None:
    runs = []
    for _ in range(2):
        bot = SearchBot(9, iterations=20)
        runs.append(drive(*TRICK[0][:3], bot, 0, seed=5)[1])
        assert bot.solved > 0
    assert runs[0] == runs[1]


def ending(seed: int, cards: int) -> engine.MatchState:
    """A short whist match played at random until the seat to move leads or follows with
    ``cards`` cards in hand and a choice."""
    state = engine.make("whist", players=4, seed=seed, points_to_win=1, games_per_rubber=1)
    rng = random.Random(seed)
    while state.to_move is not None:
        hand = state.observation(state.to_move).to_dict()["hand"]
        assert isinstance(hand, list)
        if len(hand) == cards and len(state.legal_actions()) > 1:
            return state
        state.apply(rng.choice(state.legal_actions()))
    raise AssertionError("the match ended first")


def test_a_world_budget_counts_worlds_and_a_node_budget_declines_the_decision() -> None:
    state = ending(4, 5)
    legal = [Action(a.kind, a.arg) for a in state.legal_actions()]
    rng = random.Random(1)
    seat = state.to_move
    assert seat is not None
    worlds = 3
    tally = exact.search(
        "whist", lambda: state.determinize(seat, rng), lambda d: d < worlds * len(legal), legal
    )
    assert tally is not None and {len(v) for v in tally.values.values()} == {worlds}
    # One node is too few for any world: the whole decision goes back to the rollouts.
    assert (
        exact.search("whist", lambda: state.determinize(seat, rng), lambda d: True, legal, 1)
        is None
    )
    bot = SearchBot(2, iterations=16, solver_nodes=1)
    _, moves, _ = drive(*TRICK[0][:3], bot, 1, seed=2)
    assert moves and bot.solved == 0 and bot.unsolved > 0 and bot.fallbacks == 0


def test_only_small_positions_of_solved_games_are_solved() -> None:
    assert exact.applies("whist", {"hand": ["AS"] * 6})
    assert not exact.applies("whist", {"hand": ["AS"] * 7})
    assert not exact.applies("tennis", {"hand": ["AS"]})
    assert not exact.applies("spoil_five", {"hand": []})
    assert not exact.applies("forty_five", {"hand": ["AS"]})  # measured no better: off
    assert exact.applies("forty_five", {"hand": ["AS"]}, exact.HAND_CARDS)
    assert not exact.applies("tennis_whist", {"hand": ["AS"] * 3})  # measured no better: off
    assert exact.applies("tennis_whist", {"hand": ["AS"] * 3}, exact.HAND_CARDS)
    with pytest.raises(ValueError, match="solver_nodes"):
        SearchBot(solver_nodes=0)


def test_the_exact_value_finds_the_card_the_rollouts_miss() -> None:
    """Seed 193's ending, three cards a hand, every card known: the rollouts prefer the 2H,
    which loses a trick double dummy; the solver's valuation plays a club."""
    state = ending(193, 3)
    legal = [Action(a.kind, a.arg) for a in state.legal_actions()]
    solution = solve(state)
    assert [a.text for a in legal] == ["play:4C", "play:6C", "play:2H"]
    assert solution.values == (1, 1, 0)
    view = state.observation(state.to_move).to_dict()  # type: ignore[arg-type]
    rng = random.Random(1)
    rolled = pimc.search(
        lambda: state.clone(rng),
        Rollout("whist", view, side_of_seats(state)),
        rng,
        lambda d: d < 400,
        legal,
    )
    assert max(legal, key=lambda a: rolled.mean(a.text)).text == "play:2H"
    exact_tally = exact.search("whist", lambda: state.clone(rng), lambda d: d < 30, legal)
    assert exact_tally is not None
    assert max(legal, key=lambda a: exact_tally.mean(a.text)).text in ("play:4C", "play:6C")


def test_it_plays_through_arena_match(tmp_path: Path) -> None:
    search = "arena bot search --iterations 16"
    bots = [search, "arena bot rules", f"{search} --no-solver", "arena bot rules"]
    done = subprocess.run(
        [str(ARENA), "match", "whist", "--option", "points_to_win=1", "--seed", "4"]
        + ["--option", "games_per_rubber=1"]
        + ["--out", str(tmp_path)]
        + [arg for bot in bots for arg in ("--bot", bot)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "[normal]" in done.stdout.splitlines()[0], done.stdout
    assert "(0 by the referee)" in done.stdout, done.stdout
