"""``arena sprt``: a candidate against a baseline, played until the SPRT decides.

It is a tournament of two bots at one table (arena/tournament/runner.py: the same store, resume,
kill -9 safety, long-lived processes), scheduled for at most ``max_units`` deals, that stops as
soon as the test (engine/sprt.py) accepts H0 or H1. A unit is one deal in all the table's
rotations; its score is the candidate's mean match score over them, a match's score being the
share of (candidate place, baseline place) pairs the candidate ranked above (½ for a tie), so
the luck of the cards cancels inside each unit. Only whole units count: the matches of a unit
left half played by a stop or a kill are finished by the next run, before anything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arena.bots.sandbox import Limits
from arena.cluster.task import Cluster
from arena.errors import ArenaError
from arena.rules import PlayedMatch
from arena.tournament.config import TournamentConfig
from arena.tournament.progress import Feedback
from arena.tournament.report import stored_game
from arena.tournament.runner import StopFn, run_tournament
from arena.tournament.schedule import Format, MatchPlan, places, rotations_per_table
from arena.tournament.store import Store
from engine import Game, MatchConfig
from engine.sprt import SprtParams, SprtStatus, SprtTally, status

#: Most deals an SPRT may be scheduled for.
MAX_UNITS = 100_000
DEFAULT_MAX_UNITS = 20_000


def sprt_config(config: TournamentConfig, max_units: int) -> TournamentConfig:
    """``config`` (two bots: the candidate first, then the baseline) scheduled as an SPRT: one
    table, duplicate deals, ``max_units`` deals at most."""
    if len(config.bots) != 2:
        raise ArenaError(
            f"an SPRT is a candidate against a baseline: 2 bots, not {len(config.bots)}"
        )
    if not 1 <= max_units <= MAX_UNITS:
        raise ArenaError(f"max units must be between 1 and {MAX_UNITS:,}; got {max_units}")
    period = rotations_per_table(2, len(places(config.rules.game, config.rules.config)))
    return replace(
        config, format=Format.ROUND_ROBIN, duplicate=True, matches_per_pairing=max_units * period
    )


def match_score(
    game: Game, config: MatchConfig, seats: Sequence[str], ranks: Sequence[int], candidate: str
) -> float:
    """The candidate's score in one match: the share of (its place, a baseline place) pairs in
    which it ranked better, ½ for a tie."""
    mine: list[int] = []
    theirs: list[int] = []
    for group in places(game, config):
        (mine if seats[group[0]] == candidate else theirs).append(int(ranks[group[0]]))
    pairs = [(a, b) for a in mine for b in theirs]
    if not pairs:
        raise ArenaError("a match of the SPRT has the candidate or the baseline missing")
    return sum(1.0 if a < b else 0.5 if a == b else 0.0 for a, b in pairs) / len(pairs)


@dataclass(slots=True)
class SprtRun:
    """The test's state over a run. Units are tallied in deal order, whatever order their
    matches finish in (several run at once), and the test stops at the first crossing of a
    bound: so a resumed run, which reads the stored units in deal order, reaches the same
    verdict at the same unit as the run that was cut short. Units finished after the crossing
    (they were running) are stored but not counted."""

    params: SprtParams
    game: Game
    match_config: MatchConfig
    candidate: str
    rotations: int
    feedback: Feedback
    tally: SprtTally = field(default_factory=SprtTally)
    #: Match scores of units not yet whole, by deal.
    partial: dict[int, list[float]] = field(default_factory=dict)
    #: Whole units waiting for an earlier deal to be whole: (score, matches) by deal.
    waiting: dict[int, tuple[float, int]] = field(default_factory=dict)
    #: The next deal to tally.
    next_deal: int = 0
    last: SprtStatus | None = None

    def add(self, deal: int, ranks: Sequence[int], seats: Sequence[str]) -> None:
        """One finished match; its unit is tallied once whole and every earlier one is."""
        score = match_score(self.game, self.match_config, seats, ranks, self.candidate)
        scores = self.partial.setdefault(deal, [])
        scores.append(score)
        if len(scores) < self.rotations:
            return
        del self.partial[deal]
        self.waiting[deal] = (sum(scores) / len(scores), len(scores))
        while not self.decided and self.next_deal in self.waiting:
            unit, matches = self.waiting.pop(self.next_deal)
            self.next_deal += 1
            self.tally.add(unit, matches=matches)
            self.last = status(self.tally, self.params)
            self.feedback.note(f"sprt: {self.last.summary()}")

    def stop(self, plan: MatchPlan, played: PlayedMatch) -> bool:
        """The runner's early stop: true once the test has decided."""
        self.add(plan.deal, played.result.ranks, plan.seats)
        return self.decided

    @property
    def decided(self) -> bool:
        return self.last is not None and self.last.verdict is not None

    def status(self) -> SprtStatus:
        return self.last if self.last is not None else status(self.tally, self.params)


class UnitFeedback(Feedback):
    """Progress by units, not matches: the schedule's length is a cap, not a plan (a progress
    bar over it would promise hours), so only the start and the test's status lines show."""

    def __init__(self, inner: Feedback, max_units: int) -> None:
        self._inner = inner
        self._max_units = max_units

    def start(self, title: str, total: int, done: int) -> None:
        self._inner.note(
            f"{title}: playing until the SPRT decides (at most {self._max_units:,} units)"
        )

    def note(self, line: str) -> None:
        self._inner.note(line)

    def close(self) -> None:
        self._inner.close()


def run_sprt(
    config: TournamentConfig,
    params: SprtParams,
    feedback: Feedback,
    sandbox: Limits | None = None,
    max_units: int = DEFAULT_MAX_UNITS,
    cluster: Cluster | None = None,
) -> SprtStatus:
    """Play (or resume) the SPRT of ``config``'s first bot against its second until it decides
    or ``max_units`` deals are played; the test's status at the end."""
    config = sprt_config(config, max_units)
    feedback = UnitFeedback(feedback, max_units)
    candidate = config.bots[0].name
    rotations = rotations_per_table(2, len(places(config.rules.game, config.rules.config)))
    run = SprtRun(params, config.rules.game, config.rules.config, candidate, rotations, feedback)

    def stop_for(store: Store) -> StopFn | None:
        game, match_config = stored_game(store)
        run.game, run.match_config = game, match_config
        done = store.matches("done")
        for m in sorted(done, key=lambda m: m.index):
            assert m.result is not None
            run.add(m.deal, m.result["ranks"], m.seats)
        return None if run.decided else run.stop

    run_tournament(config, feedback, sandbox, stop_for=stop_for, cluster=cluster)
    return run.status()


def sprt_lines(result: SprtStatus, params: SprtParams, names: Sequence[str]) -> list[str]:
    """What ``arena sprt`` prints at the end."""
    candidate, baseline = names
    test = (
        f"H0: {candidate} − {baseline} ≤ {params.elo0:g} {_unit(params)}, "
        f"H1: ≥ {params.elo1:g} (alpha {params.alpha:g}, beta {params.beta:g})"
    )
    if result.verdict == "H1":
        verdict = (
            f"H1 accepted: {candidate} is better than {baseline} (by about {params.elo1:g} or more)"
        )
    elif result.verdict == "H0":
        verdict = f"H0 accepted: {candidate} is not better than {baseline} by {params.elo1:g}"
    else:
        verdict = (
            f"no verdict within {result.units:,} units (--max-units); a longer test needs a new "
            "--out directory"
        )
    return [f"SPRT {candidate} against {baseline}: {test}", result.summary(), verdict]


def _unit(params: SprtParams) -> str:
    return "nElo" if params.model == "normalized" else "Elo"


def sprt_dict(result: SprtStatus, params: SprtParams, names: Sequence[str]) -> dict[str, Any]:
    """``arena sprt --json``."""
    return {
        "candidate": names[0],
        "baseline": names[1],
        "params": {
            "elo0": params.elo0,
            "elo1": params.elo1,
            "alpha": params.alpha,
            "beta": params.beta,
            "model": params.model,
        },
        "verdict": result.verdict,
        "llr": result.llr,
        "bounds": [result.lower, result.upper],
        "elo": _finite(result.elo),
        "elo_interval": [_finite(result.elo_low), _finite(result.elo_high)],
        "nelo": _finite(result.nelo),
        "los": result.los,
        "units": result.units,
        "matches": result.matches,
    }


def _finite(x: float) -> float | None:
    """JSON has no infinities: an unbounded end is ``null``."""
    return x if x == x and abs(x) != float("inf") else None
