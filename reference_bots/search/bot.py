"""The search bot: ISMCTS within a budget per decision, from what the protocol sends.

``arena bot search`` runs it. The budget is time (``budget_ms``, by default a safe share of the
decision's deadline, counted from the request's arrival) or a number of iterations (for runs that
must repeat exactly: with the match's ``bot_seed`` the same iterations give the same moves). A
single legal action is answered at once; a state the engine cannot rebuild, or a game the search
does not know, is played by the rule-based strategy instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from cardarena import Action, Result
from cardarena.bot import Bot, Turn
from cardarena.log import get_logger

import reference_bots.search.exact as exact
import reference_bots.search.pimc as pimc
from engine import EngineError, MatchState
from reference_bots.rules import strategy_for
from reference_bots.search.belief import Belief
from reference_bots.search.ismcts import EXPLORATION, search
from reference_bots.search.rollout import Rollout, side_of_seats, supported

log = get_logger("reference_bots.search")

#: The default time budget: this share of the decision's deadline ...
DEADLINE_SHARE = 0.25
#: ... and never more than this, in milliseconds (a longer think rarely changes the card).
MAX_DEFAULT_MS = 500.0
#: The searches: paired PIMC (pimc.py), or SO-ISMCTS (ismcts.py).
ALGORITHMS = ("pimc", "ismcts")
#: PIMC keeps the rule-based move unless another beats it by this many standard errors.
RULES_SIGMAS = 2.0
#: ISMCTS keeps the rule-based move unless the most visited has this many times its visits.
RULES_MARGIN = 2.0
#: Without a deadline (driven in-process), this budget in milliseconds.
NO_DEADLINE_MS = 100.0


def default_budget_ms(deadline_ms: int) -> float:
    """The time a decision gets when no budget is given: a safe share of its deadline."""
    if deadline_ms <= 0:
        return NO_DEADLINE_MS
    return min(MAX_DEFAULT_MS, DEADLINE_SHARE * deadline_ms)


class SearchBot(Bot):
    """Determinized search for every game the engine knows."""

    name = "search"
    version = "1"

    def __init__(
        self,
        seed: int | None = None,
        *,
        budget_ms: float | None = None,
        iterations: int | None = None,
        exploration: float = EXPLORATION,
        algorithm: str = "pimc",
        solver: bool = True,
        solver_nodes: int | None = None,
        solver_games: Collection[str] = exact.GAMES,
    ) -> None:
        super().__init__(seed)
        if budget_ms is not None and budget_ms <= 0:
            raise ValueError("budget_ms must be positive")
        if iterations is not None and iterations <= 0:
            raise ValueError("iterations must be positive")
        self.budget_ms = budget_ms
        self.iterations = iterations
        self.exploration = exploration
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
        self.algorithm = algorithm
        #: PIMC solves its worlds exactly near a deal's end (exact.py); ``False``: rollouts only.
        self.solver = solver
        if solver_nodes is not None and solver_nodes <= 0:
            raise ValueError("solver_nodes must be positive")
        #: The node budget of one world's solve (``None``: the game's, ``exact.NODES``).
        self.solver_nodes = solver_nodes
        #: The games solved near a deal's end (``exact.GAMES``; any of ``exact.HAND_CARDS``).
        self.solver_games = frozenset(solver_games)
        #: Decisions valued by the exact solver, and those that fell back to rollouts from it.
        self.solved = 0
        self.unsolved = 0
        self.belief = Belief()
        #: Iterations of the last search (0 when none ran), for logs and benchmarks.
        self.last_iterations = 0
        #: Decisions played by the rule-based stand-in because no search could run.
        self.fallbacks = 0

    def on_event(self, match_id: str, kind: str, data: Mapping[str, Any], private: bool) -> None:
        self.belief.saw(match_id, kind, data, private)

    def end_match(self, match_id: str, result: Result) -> None:
        self.belief.forget(match_id)

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        self.last_iterations = 0
        if len(legal) == 1:
            return 0
        turn = self.turn
        if turn is None or not supported(game):
            return self._fallback(game, observation, legal, "no match context or unknown game")
        try:
            root = self.belief.root(game, turn, observation, self.rng)
        except EngineError as err:
            return self._fallback(game, observation, legal, str(err))
        seat = turn.seat
        rng = self.rng
        rollout = Rollout(game, observation, side_of_seats(root))
        if self.algorithm == "pimc":
            return self._pimc(game, observation, legal, root, rollout, turn)
        visits = search(
            lambda: root.determinize(seat, rng),
            rollout,
            rng,
            self._budget(turn),
            self.exploration,
        )
        self.last_iterations = sum(visits.values())
        best = max(range(len(legal)), key=lambda i: visits.get(legal[i].text, -1))
        # The rule-based move stands unless the search clearly prefers another: a search of a
        # few hundred samples is noisy, and the rules already play the obvious well.
        try:
            rules = strategy_for(game)(observation, legal, self.rng)
        except ValueError:
            return best
        if visits.get(legal[rules].text, 0) * RULES_MARGIN >= visits.get(legal[best].text, 0):
            return rules
        return best

    def _pimc(
        self,
        game: str,
        observation: Mapping[str, Any],
        legal: Sequence[Action],
        root: MatchState,
        rollout: Rollout,
        turn: Turn,
    ) -> int:
        seat, rng = turn.seat, self.rng
        tally = None
        if self.solver and exact.applies(game, observation, self.solver_games):
            more = self._budget(turn)
            tally = exact.search(
                game, lambda: root.determinize(seat, rng), more, legal, self.solver_nodes
            )
            if tally is None:
                self.unsolved += 1
            else:
                self.solved += 1
        if tally is None:
            tally = pimc.search(
                lambda: root.determinize(seat, rng), rollout, rng, self._budget(turn), legal
            )
        self.last_iterations = sum(len(v) for v in tally.values.values())
        best = max(range(len(legal)), key=lambda i: tally.mean(legal[i].text))
        try:
            rules = strategy_for(game)(observation, legal, rng)
        except ValueError:
            return best
        if rules == best:
            return best
        gain, error = tally.better_by(legal[best].text, legal[rules].text)
        return best if gain > RULES_SIGMAS * error else rules

    def _budget(self, turn: Turn) -> Callable[[int], bool]:
        """Whether to run another iteration, given how many ran."""
        if self.iterations is not None:
            limit = self.iterations
            return lambda done: done < limit
        budget = (
            self.budget_ms if self.budget_ms is not None else default_budget_ms(turn.deadline_ms)
        )
        end = turn.received + budget / 1000.0
        clock = time.monotonic
        # At least one iteration, so there is always a most visited action.
        return lambda done: done == 0 or clock() < end

    def _fallback(
        self, game: str, observation: Mapping[str, Any], legal: Sequence[Action], why: str
    ) -> int:
        self.fallbacks += 1
        log.warning("search unavailable; playing the rule-based move", game=game, why=why)
        try:
            return strategy_for(game)(observation, legal, self.rng)
        except ValueError:
            return self.rng.randrange(len(legal))
