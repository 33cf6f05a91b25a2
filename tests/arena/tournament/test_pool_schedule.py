"""The pool's seating rule over whole schedules, for every game and table shape: played in
schedule order with several matches in flight and finishing in any order, no process is ever
seated on a deal twice (it would know every hand), partners never share a process, and processes
are reused (the point of the pool). The real processes' side is in test_pool_e2e.py."""

from __future__ import annotations

import random

import pytest

from arena.pool import PooledBot, pick
from arena.tournament.schedule import MatchPlan, build_schedule, rotations_per_table
from engine import game_ids, get_game

#: (game, players): every game at every table size it is played by.
SHAPES = [(g, n) for g in game_ids() for n in get_game(g).player_counts]


def simulate(
    plans: list[MatchPlan], concurrency: int, rng: random.Random
) -> tuple[dict[str, list[PooledBot]], list[tuple[MatchPlan, list[PooledBot]]]]:
    """Seat every plan as the pool does, ``concurrency`` in flight, finishing in random order."""
    idle: dict[str, list[PooledBot]] = {}
    made: dict[str, list[PooledBot]] = {}
    seated: list[tuple[MatchPlan, list[PooledBot]]] = []
    running: list[tuple[MatchPlan, list[PooledBot]]] = []

    def finish_one() -> None:
        _, procs = running.pop(rng.randrange(len(running)))
        for p in procs:
            p.seat = None
            if rng.random() < 0.05:  # now and then a crash: that process is replaced
                p.dead = True
            else:
                idle[p.bot].append(p)

    for plan in plans:
        if len(running) == concurrency:
            finish_one()
        procs: list[PooledBot] = []
        for bot in plan.seats:
            p = pick(idle.setdefault(bot, []), plan.seed, procs)
            if p is None:
                mine = made.setdefault(bot, [])
                p = PooledBot(bot, len(mine) + 1, f"t-{bot}-{len(mine)}", None)  # type: ignore[arg-type]
                mine.append(p)
            else:
                idle[bot].remove(p)
            p.deals.add(plan.seed)
            procs.append(p)
        running.append((plan, procs))
        seated.append((plan, list(procs)))
    while running:
        finish_one()
    return made, seated


@pytest.mark.parametrize(("game_id", "players"), SHAPES)
@pytest.mark.parametrize("duplicate", [True, False])
def test_no_process_sees_a_deal_twice_nor_shares_a_table(
    game_id: str, players: int, duplicate: bool
) -> None:
    game = get_game(game_id)
    config = game.configure(players)
    n_places = len(game.sides(config) or range(game.num_seats(config)))
    bots = ["a", "b", "c", "d", "e"][: max(2, min(5, n_places + 1))]

    period = rotations_per_table(len(bots), n_places)
    for fmt in ("round_robin", "gauntlet"):
        plans = build_schedule(game, config, bots, fmt, period * 6, duplicate, seed=3)
        for concurrency in (1, 2, 5):
            rng = random.Random(f"{game_id}{players}{fmt}{concurrency}{duplicate}")
            made, seated = simulate(plans, concurrency, rng)
            for plan, procs in seated:
                # Partners (and every seat) on distinct processes of the right bot.
                assert len({id(p) for p in procs}) == len(procs), plan
                assert [p.bot for p in procs] == list(plan.seats)
            for bot, procs in made.items():
                for p in procs:
                    deals = [plan.seed for plan, ps in seated if any(q is p for q in ps)]
                    assert len(deals) == len(set(deals)), (bot, p.number, deals)
            # Reused: far fewer processes than seats (a fresh one per seat would be one each).
            seats = sum(len(plan.seats) for plan in plans)
            assert sum(len(ps) for ps in made.values()) < seats / 2, (fmt, concurrency)


def test_pick_takes_the_longest_idle_process_that_qualifies() -> None:
    a, b, c = (PooledBot("x", n, f"t{n}", None) for n in (1, 2, 3))  # type: ignore[arg-type]
    a.deals.add(7)
    c.dead = True
    assert pick([a, b, c], 7, []) is b  # a has played deal 7
    assert pick([a, b, c], 8, []) is a
    assert pick([a, b, c], 8, [a]) is b  # a already sits at this table
    assert pick([a, c], 7, []) is None  # c is dead: a new process is started
