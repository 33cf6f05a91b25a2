"""The search bot's speed: determinized playouts per CPU second for every game, beside the
engine's own random-playout rate measured in the same run.

Each subject is a set of mid-match decisions (several seeds, several depths). A playout here is
one search iteration: determinize the rebuilt state, walk the tree, roll out to the horizon. Its
decisions per second against plain random self-play is the search's overhead: determinizing,
the tree, the rollout policy and scoring.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from cardarena.bot import Turn

import engine
from benchmarks.engine_bench import OUR_GAMES
from engine import MatchState
from reference_bots.search import SearchBot, ismcts
from reference_bots.search.rollout import Rollout, side_of_seats

#: Decisions into a match at which the search is timed.
DEPTHS = (8, 30, 70)


def _positions(
    game_id: str, players: int | None, options: dict[str, Any], seeds: int
) -> list[MatchState]:
    out = []
    for seed in range(seeds):
        state = engine.make(game_id, players=players, seed=seed, **options)
        rng = random.Random(seed)
        for depth in DEPTHS:
            while state.decisions < depth and state.to_move is not None:
                state.apply(rng.choice(state.legal_actions()))
            while state.to_move is not None and len(state.legal_actions()) < 2:
                state.apply(state.legal_actions()[0])
            if state.to_move is not None:
                out.append(state.clone())
    return out


def random_rate(game_id: str, players: int | None, options: dict[str, Any], cpu_s: float) -> float:
    """Decisions per CPU second of random self-play from the start of matches."""
    rng = random.Random(3)
    n, t0, seed = 0, time.process_time(), 0
    while time.process_time() - t0 < cpu_s:
        state = engine.make(game_id, players=players, seed=seed, **options)
        seed += 1
        while state.to_move is not None:
            state.apply(rng.choice(state.legal_actions()))
            n += 1
    return n / (time.process_time() - t0)


def search_rate(positions: list[MatchState], game_id: str, iterations: int) -> dict[str, float]:
    """Playouts and their decisions per CPU second, and the rebuild's cost, over ``positions``."""
    bot = SearchBot(1, iterations=iterations)
    playouts = decisions = 0
    restore_s = search_s = 0.0
    for state in positions:
        seat = state.to_move
        assert seat is not None
        view = state.observation(seat).to_dict()
        for e in state.visible_events(seat):
            bot.on_event("bench", e.kind, e.data, e.to is not None)
        bot.turn = Turn(
            "bench", seat, state.num_seats, dict(state.config.options), 0, 0, time.monotonic()
        )
        t0 = time.process_time()
        root = bot.belief.root(game_id, bot.turn, view, bot.rng)
        t1 = time.process_time()
        sampled: list[MatchState] = []

        def sample(
            root: MatchState = root, seat: int = seat, sampled: list[MatchState] = sampled
        ) -> MatchState:
            det = root.determinize(seat, bot.rng)
            sampled.append(det)
            return det

        ismcts.search(
            sample, Rollout(game_id, view, side_of_seats(root)), bot.rng, lambda k: k < iterations
        )
        t2 = time.process_time()
        restore_s += t1 - t0
        search_s += t2 - t1
        playouts += len(sampled)
        decisions += sum(s.decisions - root.decisions for s in sampled)
        bot.belief.forget("bench")
    return {
        "playouts_per_cpu_s": playouts / search_s,
        "decisions_per_cpu_s": decisions / search_s,
        "decisions_per_playout": decisions / playouts,
        "restore_us": restore_s / len(positions) * 1e6,
    }


def run_search(seeds: int = 4, iterations: int = 200, rounds: int = 3) -> dict[str, Any]:
    """Every game: the median over ``rounds`` of the search's rates and the engine's."""
    out: dict[str, Any] = {"iterations": iterations, "games": {}}
    for label, game_id, players, options in OUR_GAMES:
        positions = _positions(game_id, players, options, seeds)
        runs = [search_rate(positions, game_id, iterations) for _ in range(rounds)]
        refs = [random_rate(game_id, players, options, 0.5) for _ in range(rounds)]
        row = {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}
        row["random_decisions_per_cpu_s"] = round(statistics.median(refs), 1)
        row["positions"] = len(positions)
        out["games"][label] = row
    return out
