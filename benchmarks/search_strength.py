"""Strength on duplicate deals: the search bot's side against the rules bot's, deal by deal.

    python -m benchmarks.search_strength whist 40 1000          # 40 deals, 1,000 playouts
    python -m benchmarks.search_strength whist 40 200 --algorithm ismcts
    python -m benchmarks.search_strength whist 40 0 --opponent random --me rules

Each seed's first deal is played twice, the search bot's side holding each partnership's cards
in turn (the rules bot the other), in process, driven as the SDK drives a bot. The figure is the
search side's trick margin over the other side, averaged over both seatings, with its standard
error over deals: the deal's luck cancels between the seatings.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from cardarena.bot import Turn

import engine
from engine import Event, MatchState, get_game
from reference_bots.rules import strategy_for
from reference_bots.search import SearchBot

#: The event that ends a deal, by game (whist and forty-five: their tricks by side).
END = {"whist": "deal_score", "forty_five": "deal_score"}


def first_deal(game_id: str, seed: int, side: tuple[int, ...], args: argparse.Namespace) -> Event:
    state: MatchState = engine.make(game_id, seed=seed)
    rules = strategy_for(game_id)
    rng = random.Random(seed)
    bots = {
        s: SearchBot(seed * 7 + s, iterations=args.playouts, algorithm=args.algorithm) for s in side
    }
    told = dict.fromkeys(side, 0)
    while state.to_move is not None:
        seat = state.to_move
        legal = state.legal_actions()
        view = state.observation(seat).to_dict()
        if seat in bots and args.me == "search":
            bot = bots[seat]
            for e in state.events[told[seat] :]:
                if e.visible_to(seat):
                    bot.on_event("m", e.kind, e.data, e.to is not None)
            told[seat] = len(state.events)
            opts = dict(state.config.options)
            bot.turn = Turn("m", seat, state.num_seats, opts, 1000, 0, time.monotonic())
            index = bot.choose(game_id, view, legal)
        elif seat in bots or args.opponent == "rules":
            index = rules(view, legal, rng)
        else:
            index = rng.randrange(len(legal))
        for event in state.apply(legal[index]):
            if event.kind == END[game_id]:
                return event
    raise RuntimeError("the match ended before its first deal")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("game", choices=sorted(END))
    parser.add_argument("deals", type=int)
    parser.add_argument("playouts", type=int, help="the search's playouts a decision")
    parser.add_argument("--algorithm", default="pimc", choices=("pimc", "ismcts"))
    parser.add_argument("--opponent", default="rules", choices=("rules", "random"))
    parser.add_argument("--me", default="search", choices=("search", "rules"))
    args = parser.parse_args()
    sides = get_game(args.game).sides(engine.make(args.game).config)
    assert sides is not None
    margins = []
    started = time.perf_counter()
    for seed in range(args.deals):
        total = 0
        for k in (0, 1):
            tricks = first_deal(args.game, seed, sides[k], args).data["tricks"]
            assert isinstance(tricks, list)
            total += int(tricks[k]) - int(tricks[1 - k])  # type: ignore[call-overload]
        margins.append(total / 2)
    error = statistics.stdev(margins) / len(margins) ** 0.5
    print(
        f"{args.game} {args.me} ({args.algorithm}, {args.playouts} playouts) against "
        f"{args.opponent}: {statistics.mean(margins):+.3f} ± {error:.3f} tricks a deal over "
        f"{len(margins)} deals, {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
