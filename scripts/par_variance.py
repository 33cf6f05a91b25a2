"""How much par narrows a bot's interval: the table in docs/ratings.md ("When par helps").

``python scripts/par_variance.py [DEALS]`` plays whist between the rules bot and a weaker one
(``random``, or ``sloppy``: the rules bot playing a random card 15 % of the time) in process,
with and without duplicate deals, and prints for the weaker bot its mean score per match and its
mean par against rules, each with its cluster-robust 95 % interval (arena/rating_model.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cardarena.bot import Bot, RandomBot

from arena.par import MatchPar, Reference, match_par, reference_scores, summarize
from arena.rating_model import cluster_mean, cluster_quantile
from engine.local import play
from engine.seeds import derive_seed
from reference_bots.catalog import RulesOrRandomBot

RULES = Reference("rules", RulesOrRandomBot)


class Sloppy(RulesOrRandomBot):
    """The rules bot, but a random legal card 15 % of the time."""

    name = "sloppy"

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Any]) -> int:
        if self.rng.random() < 0.15:
            return self.rng.randrange(len(legal))
        return super().choose(game, observation, legal)


def measure(weaker: Callable[[], Bot], options: dict[str, int], deals: int, duplicate: bool) -> str:
    scores: list[float] = []
    seeds: list[int] = []
    matches: list[MatchPar] = []
    for deal in range(deals):
        # Both seatings of a deal (duplicate), or each seating on a deal of its own.
        for rotation in range(2):
            seed = derive_seed(5, "deal", deal, *(() if duplicate else (rotation,)))
            names = ["rules", "weak"] * 2 if rotation == 0 else ["weak", "rules"] * 2
            seated = [RulesOrRandomBot() if n == "rules" else weaker() for n in names]
            result = play("whist", seated, seed=seed, options=options)[0].result
            par = match_par(
                names, result.scores, reference_scores("whist", 4, options, seed, RULES)
            )
            scores.append(result.scores[names.index("weak")])
            seeds.append(seed)
            matches.append(MatchPar(f"d{deal}-r{rotation}", seed, par))
    mean, sd, g = cluster_mean(scores, seeds)
    pm = float(cluster_quantile([g])[0]) * (sd or 0.0)
    weak = summarize("rules", matches).by_bot()["weak"]
    return f"score {mean:.3f} ± {pm:.3f}   par {weak.mean:+.3f} ± {weak.plus_minus or 0:.3f}"


def main(argv: Sequence[str]) -> None:
    deals = int(argv[0]) if argv else 80
    for name, weaker in (("random", RandomBot), ("sloppy", Sloppy)):
        for label, options in (
            ("one deal", {"points_to_win": 1, "games_per_rubber": 1}),
            ("rubber", {}),
        ):
            for duplicate in (False, True):
                line = measure(weaker, options, deals, duplicate)
                dup = "duplicate" if duplicate else "no duplicate"
                print(f"{name:<7} {label:<9} {dup:<13} {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
