"""Par: a bot's result on a deal minus what a reference strategy scored in the same seat on the
same deal (docs/ratings.md, "Par: luck-adjusted scores").

The reference's scores for a match seed come from the whole match played in process on the
engine (:func:`engine.local.play`) from that seed, the reference at every seat, one fresh bot
per seat seeded as the arena seeds a seat (``seat_seed(match seed, seat)``): the deals are the
match's (a seed fixes them), and one replay gives every seat's value at once. A bot's par in a
match is the mean over its seats of ``score − reference score`` in ``Result.scores``' units; a
bot's par is the mean over its matches with a cluster-robust 95 % interval, the matches of one
seed (a duplicate deal's rotations) forming one cluster (:func:`arena.rating_model.cluster_mean`).

The reference bots live in ``reference_bots``, which only the command line imports: callers
pass a :class:`Reference` whose ``make`` builds one bot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cardarena.bot import Bot

from arena.rating_model import cluster_mean, cluster_quantile
from engine.local import play
from engine.options import OptionValue
from engine.registry import get_game

#: The strategies par may be measured against: the reference bots (``arena bot NAME``).
REFERENCES: Final = ("rules", "random", "search")


@dataclass(frozen=True, slots=True)
class Reference:
    """The strategy par is measured against."""

    #: Its name in reports and in the cache's key (``rules``; ``search@64`` for a budget).
    label: str
    #: A new, unseeded bot of it (in-process play seeds it as the arena seeds a seat).
    make: Callable[[], Bot]


def reference_scores(
    game: str,
    players: int,
    options: Mapping[str, OptionValue],
    seed: int,
    reference: Reference,
) -> tuple[float, ...]:
    """Every seat's score (``Result.scores``) when the reference plays the whole match from
    ``seed`` at every seat. ``ConfigError`` for a table the game refuses."""
    spec = get_game(game)
    n = spec.num_seats(spec.configure(players, options))
    bots = [reference.make() for _ in range(n)]
    match = play(game, bots, seed=seed, players=players, options=options, match_id="par")[0]
    return tuple(float(s) for s in match.result.scores)


def match_par(
    seats: Sequence[str], scores: Sequence[float], reference: Sequence[float]
) -> dict[str, float]:
    """Each bot's par in one match: the mean over its seats of its score minus the reference's
    in that seat (partners share a side's score, so a partnership's par is the side's)."""
    if not len(seats) == len(scores) == len(reference):
        raise ValueError(f"{len(seats)} seats, {len(scores)} scores, {len(reference)} par scores")
    out: dict[str, list[float]] = {}
    for bot, mine, par in zip(seats, scores, reference, strict=True):
        out.setdefault(bot, []).append(float(mine) - float(par))
    return {bot: sum(v) / len(v) for bot, v in out.items()}


@dataclass(frozen=True, slots=True)
class MatchPar:
    """One match's par, per bot."""

    match_id: str
    #: The match seed: its cluster (a duplicate deal's rotations share it).
    seed: int
    par: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class BotPar:
    """A bot's par over its matches."""

    bot: str
    #: Mean par per match, in the game's score units.
    mean: float
    #: Half-width of the 95 % interval (Student's t on deals − 1); ``None`` from one deal.
    plus_minus: float | None
    #: Matches and distinct deals (seeds, the clusters) it is measured over.
    matches: int
    deals: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "mean": self.mean,
            "plus_minus": self.plus_minus,
            "matches": self.matches,
            "deals": self.deals,
        }


@dataclass(frozen=True, slots=True)
class ParTable:
    """Par per bot (and per match) against one reference."""

    reference: str
    bots: tuple[BotPar, ...]
    matches: tuple[MatchPar, ...]
    #: Finished matches left out (ended by a forfeit: its scores are not the game's units).
    left_out: int = 0

    def by_bot(self) -> dict[str, BotPar]:
        return {b.bot: b for b in self.bots}

    def render(self, order: Sequence[str] = ()) -> str:
        """Plain text, one line per bot in ``order`` (the leaderboard's), then any others."""
        table = self.by_bot()
        names = [b for b in order if b in table] + sorted(set(table) - set(order))
        width = max([len("bot"), *(len(n) for n in names)])
        lines = [f"{'bot':<{width}}  {'par':>7}  {'±':>6}  {'matches':>7}  {'deals':>5}"]
        for name in names:
            b = table[name]
            pm = "-" if b.plus_minus is None else f"{b.plus_minus:.3f}"
            lines.append(f"{name:<{width}}  {b.mean:>+7.3f}  {pm:>6}  {b.matches:>7}  {b.deals:>5}")
        lines.append(
            f"par: score per match minus {self.reference}'s in the same seat on the same deal; "
            "± is the 95 % interval."
        )
        if self.left_out:
            lines.append(f"{self.left_out} matches ended by a forfeit are left out.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference": self.reference,
            "left_out": self.left_out,
            "bots": [b.to_dict() for b in self.bots],
            "matches": [{"match_id": m.match_id, "par": dict(m.par)} for m in self.matches],
        }


def summarize(reference: str, matches: Sequence[MatchPar], left_out: int = 0) -> ParTable:
    """Each bot's mean par over ``matches``, with its cluster-robust 95 % interval (the
    matches of one seed are one cluster), best first."""
    values: dict[str, list[float]] = {}
    seeds: dict[str, list[int]] = {}
    for m in matches:
        for bot, par in m.par.items():
            values.setdefault(bot, []).append(par)
            seeds.setdefault(bot, []).append(m.seed)
    bots = []
    for bot, xs in values.items():
        mean, sd, deals = cluster_mean(xs, seeds[bot])
        plus_minus = None if sd is None else float(cluster_quantile([deals])[0]) * sd
        bots.append(BotPar(bot, mean, plus_minus, len(xs), deals))
    bots.sort(key=lambda b: (-b.mean, b.bot))
    return ParTable(reference, tuple(bots), tuple(matches), left_out)
