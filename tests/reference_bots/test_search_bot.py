"""The search bot: it rebuilds and searches a state at every decision of every game, repeats
itself exactly on an iteration budget, stops on a time budget, and plays over the real server."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cardarena.bot import Turn

import engine
from engine import MatchState, OptionValue
from reference_bots.catalog import make_bot
from reference_bots.rules import strategy_for
from reference_bots.search import SearchBot
from reference_bots.search.bot import default_budget_ms
from tests.reference_bots.playing import ARENA, assert_clean, play

#: Every game and table, with options that keep a match short: (game, players, options).
TABLES: list[tuple[str, int | None, dict[str, OptionValue]]] = [
    ("whist", None, {"points_to_win": 1, "games_per_rubber": 1}),
    ("tennis_whist", 3, {"sets_to_win": 1}),
    ("spoil_five", 4, {"rounds": 1}),
    ("forty_five", 4, {"points_to_win": 15}),
    ("forty_five", 2, {"points_to_win": 15}),
    ("tennis", 2, {"sets_to_win": 1}),
    ("tennis", 4, {"sets_to_win": 1, "control": "team"}),
    ("tennis", 4, {"sets_to_win": 1, "control": "players"}),
]


def drive(
    game_id: str,
    players: int | None,
    options: Mapping[str, OptionValue],
    bot: SearchBot,
    seat: int,
    seed: int,
    budget_ms: float | None = None,
) -> tuple[MatchState, list[str], list[float]]:
    """A match with ``bot`` in ``seat`` and the rules bot elsewhere, driven as the SDK drives a
    bot: events in order, then ``turn`` and ``choose``. The actions and the bot's think times."""
    state = engine.make(game_id, players=players, seed=seed, **options)
    rules = strategy_for(game_id)
    rng = random.Random(seed)
    told = 0
    moves: list[str] = []
    times: list[float] = []
    match_id = f"{game_id}-{seed}"
    while state.to_move is not None:
        mover = state.to_move
        legal = state.legal_actions()
        view = state.observation(mover).to_dict()
        if mover == seat:
            for event in state.events[told:]:
                if event.visible_to(seat):
                    bot.on_event(match_id, event.kind, event.data, event.to is not None)
            told = len(state.events)
            deadline = 1000 if budget_ms is None else int(budget_ms * 10)
            opts = dict(state.config.options)
            bot.turn = Turn(match_id, seat, state.num_seats, opts, deadline, 0, time.monotonic())
            started = time.monotonic()
            index = bot.choose(game_id, view, legal)
            times.append(time.monotonic() - started)
            moves.append(legal[index].text)
        else:
            index = rules(view, legal, rng)
        state.apply(legal[index])
    return state, moves, times


@pytest.mark.parametrize("algorithm", ["pimc", "ismcts"])
@pytest.mark.parametrize(("game_id", "players", "options"), TABLES)
def test_it_searches_every_decision_of_a_whole_match(
    game_id: str, players: int | None, options: dict[str, OptionValue], algorithm: str
) -> None:
    bot = SearchBot(1, iterations=12, algorithm=algorithm)
    searched = 0
    original = bot.choose

    def counting(game: str, observation: Mapping[str, Any], legal: Any) -> int:
        nonlocal searched
        index = original(game, observation, legal)
        if len(legal) > 1:
            # PIMC plays every action in each world it samples: whole worlds, 12 or more.
            assert bot.last_iterations >= 12, "a decision with a choice was not searched"
            searched += 1
        return index

    bot.choose = counting  # type: ignore[method-assign]
    state, moves, _ = drive(game_id, players, options, bot, 1, seed=4)
    assert state.result() is not None and state.result().reason == "normal"  # type: ignore[union-attr]
    assert bot.fallbacks == 0 and searched > 0 and moves


def test_the_same_seed_and_iterations_play_the_same_moves() -> None:
    game_id, players, options = TABLES[0]
    runs = [
        drive(game_id, players, options, SearchBot(9, iterations=25), 0, seed=2)[1]
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and len(runs[0]) > 5


def test_a_time_budget_stops_the_search_in_time() -> None:
    bot = SearchBot(3, budget_ms=20)
    _, moves, times = drive("whist", None, {"points_to_win": 1, "games_per_rubber": 1}, bot, 2, 7)
    assert moves and max(times) < 0.2  # the budget, plus one iteration and the rebuild, far below
    assert bot.fallbacks == 0


def test_the_default_budget_is_a_share_of_the_deadline() -> None:
    assert default_budget_ms(1000) == 250
    assert default_budget_ms(8000) == 500  # never more than half a second
    assert default_budget_ms(0) == 100  # no deadline known


def test_an_obvious_decision_stops_before_its_budget() -> None:
    """Paired PIMC stops once one action leads every other beyond doubt."""
    from reference_bots.search import pimc

    tally = pimc.Tally({"a": [1.0, 0.9] * 10, "b": [-1.0, -0.9] * 10})
    assert pimc.clear_winner(tally)
    close = pimc.Tally({"a": [1.0, -1.0] * 10, "b": [-1.0, 1.0] * 10})
    assert not pimc.clear_winner(close)


def test_only_the_search_bot_takes_a_budget() -> None:
    assert isinstance(make_bot("search", 1, iterations=5), SearchBot)
    with pytest.raises(ValueError, match="only the search bot"):
        make_bot("rules", 1, iterations=5)


@pytest.mark.parametrize(
    ("game_id", "players", "options"),
    [TABLES[0], TABLES[5], TABLES[6]],
    ids=["whist", "tennis-singles", "tennis-doubles-team"],
)
def test_it_plays_over_the_real_server(
    game_id: str, players: int | None, options: dict[str, OptionValue], tmp_path: Path
) -> None:
    search = [str(ARENA), "bot", "search", "--iterations", "15", "--matches", "1"]
    rules = [str(ARENA), "bot", "rules", "--matches", "1"]
    seats = 4 if game_id == "whist" else 2
    commands = [search if s % 2 == 0 else rules for s in range(seats)]
    run = play(game_id, commands, tmp_path / "logs", seed=6, options=options, players=players)
    assert assert_clean(run, [s for s in range(seats) if s % 2 == 0], tmp_path, "search") > 0
    for seat in range(0, seats, 2):
        assert "search unavailable" not in run.bots[seat].stderr, run.bots[seat].stderr[-2000:]
