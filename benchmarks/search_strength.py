"""Strength on duplicate deals, in process: the search bot's side against the rules bot's.

    python -m benchmarks.search_strength whist 60 --option points_to_win=1 \
        --option games_per_rubber=1
    python -m benchmarks.search_strength tennis 30 --players 2 --budget-ms 100
    python -m benchmarks.search_strength spoil_five 20 --option rounds=1 --opponent random
    python -m benchmarks.search_strength whist 40 --playouts 1000 --first-deal

Each seed is played once for every side of the table (a partnership, or a seat where each plays
alone), the search bot holding that side's cards and the other bot the rest, driven as the SDK
drives a bot (its events in order, then ``turn`` and ``choose``). The figure is the search
side's match return less the others' mean, averaged over the seed's seatings, with its standard
error over seeds: the deal's luck cancels between the seatings. ``--first-deal`` (whist and
forty-five) stops at the first deal and counts its tricks instead. The slowest answer is the
search's longest ``choose``; the budget is the time per decision (``--budget-ms``) unless a
number of playouts is given (``--playouts``, repeatable exactly).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from cardarena.bot import Turn

import engine
from benchmarks.common import duel_parser, game_options
from engine import Action, Event, MatchState, OptionValue, get_game
from reference_bots.rules import strategy_for
from reference_bots.search import SearchBot

#: The event that ends a deal, by game (whist and forty-five: their tricks by side).
END = {"whist": "deal_score", "forty_five": "deal_score"}

#: A seat's move: the state's observation for it and its legal actions -> an index.
Chooser = Callable[[MatchState, Sequence[Action]], int]


class SearchSeat:
    """``bot`` at ``seat``, told the events it may see before each decision, as the SDK does;
    it keeps its slowest answer."""

    def __init__(self, bot: SearchBot, game_id: str, seat: int, match_id: str) -> None:
        self.bot, self.game_id, self.seat, self.match_id = bot, game_id, seat, match_id
        self.told = 0
        self.slowest = 0.0

    def __call__(self, state: MatchState, legal: Sequence[Action]) -> int:
        seat, bot = self.seat, self.bot
        for event in state.events[self.told :]:
            if event.visible_to(seat):
                bot.on_event(self.match_id, event.kind, event.data, event.to is not None)
        self.told = len(state.events)
        opts = {k: str(v) for k, v in dict(state.config.options).items()}
        received = time.monotonic()
        bot.turn = Turn(self.match_id, seat, state.num_seats, opts, 1000, 0, received)
        index = bot.choose(self.game_id, state.observation(seat).to_dict(), legal)
        self.slowest = max(self.slowest, time.monotonic() - received)
        return index


def other_seat(game_id: str, kind: str, rng: random.Random) -> Chooser:
    """The rules bot, or uniform random moves."""
    rules = strategy_for(game_id)
    if kind == "random":
        return lambda state, legal: rng.randrange(len(legal))
    return lambda state, legal: rules(state.observation(state.to_move).to_dict(), legal, rng)  # type: ignore[arg-type]


def play(state: MatchState, seats: Mapping[int, Chooser], stop: str | None = None) -> Event | None:
    """Play ``state`` on, each seat by its chooser, until the match ends or an event of kind
    ``stop`` happens; that event."""
    while state.to_move is not None:
        legal = state.legal_actions()
        for event in state.apply(legal[seats[state.to_move](state, legal)]):
            if event.kind == stop:
                return event
    return None


def main() -> None:
    parser = duel_parser(__doc__)
    parser.add_argument("--budget-ms", type=float, default=100.0)
    parser.add_argument("--playouts", type=int, help="a budget in playouts instead of time")
    parser.add_argument("--algorithm", default="pimc", choices=("pimc", "ismcts"))
    parser.add_argument("--opponent", default="rules", choices=("rules", "random"))
    parser.add_argument("--first-deal", action="store_true", help="whist, forty-five: tricks")
    args = parser.parse_args()
    options: dict[str, OptionValue] = dict(game_options(args.option))
    if args.first_deal and args.game not in END:
        parser.error("--first-deal counts tricks: whist or forty_five")
    probe = engine.make(args.game, players=args.players, **options)
    sides = get_game(args.game).sides(probe.config) or [(s,) for s in range(probe.num_seats)]
    margins: list[float] = []
    slowest = 0.0
    started = time.perf_counter()
    for seed in range(args.start, args.start + args.seeds):
        values: list[float] = []
        for k, side in enumerate(sides):
            state = engine.make(args.game, players=args.players, seed=seed, **options)
            rng = random.Random(seed)
            other = other_seat(args.game, args.opponent, rng)
            seats: dict[int, Chooser] = dict.fromkeys(range(state.num_seats), other)
            searchers = [
                SearchSeat(
                    SearchBot(
                        seed * 7 + s,
                        budget_ms=None if args.playouts else args.budget_ms,
                        iterations=args.playouts,
                        algorithm=args.algorithm,
                    ),
                    args.game,
                    s,
                    f"{seed}-{k}",
                )
                for s in side
            ]
            seats.update((c.seat, c) for c in searchers)
            end = play(state, seats, END[args.game] if args.first_deal else None)
            slowest = max(slowest, *(c.slowest for c in searchers))
            if args.first_deal:
                assert end is not None, "the match ended before its first deal"
                tricks = [int(t) for t in cast(list[int], end.data["tricks"])]
                values.append(tricks[k] - tricks[1 - k])
            else:
                returns = state.returns()
                mine = statistics.mean(returns[s] for s in side)
                rest = [returns[s] for s in range(state.num_seats) if s not in side]
                values.append(mine - statistics.mean(rest))
        margins.append(statistics.mean(values))
    error = statistics.stdev(margins) / len(margins) ** 0.5 if len(margins) > 1 else float("inf")
    budget = f"{args.playouts} playouts" if args.playouts else f"{args.budget_ms:g} ms"
    unit = "tricks a deal" if args.first_deal else "in match returns"
    print(
        f"{args.game} {options or ''} search ({args.algorithm}, {budget}) against "
        f"{args.opponent}: {statistics.mean(margins):+.3f} ± {error:.3f} {unit} over "
        f"{len(margins)} seeds × {len(sides)} seatings; slowest answer {slowest * 1000:.0f} ms; "
        f"{time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
