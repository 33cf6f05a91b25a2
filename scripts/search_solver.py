"""The search bot with the exact solver near a deal's end, against itself without it and
against the rules bot: duplicate deals in process (engine.local), per trick game.

    python scripts/search_solver.py whist --deals 100 --iterations 200

A deal is played in every rotation of the table's places between the two bots (luck cancels);
its score is the first bot's mean rank score (1 first, 0 last, over its seats) less the second's,
averaged over the rotations. Prints per pairing the mean over deals with its 95 % interval, and
the share of the first bot's decisions the solver valued; with both pairings against the rules
bot, their difference deal by deal (paired: the same deals). ``--iterations`` (playouts, the
default) makes the run repeat exactly whatever the machine's load; ``--budget-ms`` uses the
ladder's wall-clock budget instead.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence

from cardarena.bot import Bot

from engine.local import LocalMatch, play
from engine.seeds import derive_seed
from reference_bots.catalog import RulesOrRandomBot
from reference_bots.search import SearchBot, exact

#: The ladder's tables (examples/ladder/GAME.toml): players and options.
TABLES: dict[str, tuple[int, dict[str, int]]] = {
    "whist": (4, {"points_to_win": 1, "games_per_rubber": 1}),
    "tennis_whist": (4, {"sets_to_win": 1}),
    "forty_five": (4, {"points_to_win": 5}),
    "spoil_five": (5, {"rounds": 1}),
}


def rank_score(match: LocalMatch, bot: Bot) -> float:
    """``bot``'s mean over its seats of 1 for first ... 0 for last."""
    ranks = match.result.ranks
    worst = max(ranks)
    scores = [
        (worst - r) / (worst - 1) if worst > 1 else 0.5
        for s, r in enumerate(ranks)
        if match.seated[s] is bot
    ]
    return sum(scores) / len(scores)


def margin(game: str, a: Bot, b: Bot, seed: int) -> float:
    """One duplicate deal: ``a``'s rank score less ``b``'s, over every rotation."""
    players, options = TABLES[game]
    table = [a if s % 2 == 0 else b for s in range(players)]
    matches = play(game, table, seed=seed, duplicate=True, players=players, options=options)
    return sum(rank_score(m, a) - rank_score(m, b) for m in matches) / len(matches)


def interval(xs: Sequence[float]) -> tuple[float, float]:
    n = len(xs)
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else math.inf
    return mean, 1.96 * math.sqrt(var / n)


def search_bot(solver: bool, args: argparse.Namespace) -> SearchBot:
    # Every game the solver could take, forty-five and spoil five included (off by default).
    return SearchBot(
        budget_ms=args.budget_ms,
        iterations=args.iterations,
        solver=solver,
        solver_games=set(exact.HAND_CARDS),
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("game", choices=sorted(TABLES))
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--iterations", type=int, default=None, help="playouts a decision (200)")
    ap.add_argument("--budget-ms", type=float, default=None, help="ms a decision instead")
    ap.add_argument("--only", choices=("solver", "rules"), default=None, help="one comparison")
    ap.add_argument("--every", type=int, default=0, help="print the running figure every N deals")
    args = ap.parse_args(argv)
    if args.iterations is None and args.budget_ms is None:
        args.iterations = 200
    pairings = {
        "solver - no solver": (search_bot(True, args), search_bot(False, args)),
        "solver - rules": (search_bot(True, args), RulesOrRandomBot()),
        "no solver - rules": (search_bot(False, args), RulesOrRandomBot()),
    }
    if args.only == "solver":
        del pairings["solver - rules"], pairings["no solver - rules"]
    elif args.only == "rules":
        del pairings["solver - no solver"]
    margins: dict[str, list[float]] = {}
    for name, (a, b) in pairings.items():
        started = time.monotonic()
        xs = margins[name] = []
        for d in range(args.deals):
            xs.append(margin(args.game, a, b, derive_seed(args.seed, "deal", d)))
            if len(xs) == args.deals or (args.every and len(xs) % args.every == 0):
                report(args.game, name, xs, a, time.monotonic() - started)
    if "solver - rules" in margins and "no solver - rules" in margins:
        # The same deals against the same rules bot: their difference deal by deal is tighter
        # than either interval alone.
        with_, without = margins["solver - rules"], margins["no solver - rules"]
        mean, half = interval([x - y for x, y in zip(with_, without, strict=True)])
        print(f"{args.game} against rules, solver - no solver by deal: {mean:+.3f} ± {half:.3f}")
    return 0


def report(game: str, name: str, xs: Sequence[float], bot: Bot, seconds: float) -> None:
    mean, half = interval(xs)
    solved = ""
    if isinstance(bot, SearchBot) and bot.solver:
        solved = f"; solved {bot.solved}, rolled out after a declined world {bot.unsolved}"
    print(
        f"{game} {name}: {mean:+.3f} ± {half:.3f} over {len(xs)} deals ({seconds:.0f} s{solved})",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
