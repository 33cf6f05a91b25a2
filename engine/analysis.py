"""What each legal action is worth at a seat's decision, over the worlds that seat could be in.

A seat decides without seeing the other hands, so an action has no single value: :func:`analyze`
draws ``worlds`` full states consistent with everything the seat has seen
(:meth:`MatchState.determinize`: every known void kept, the true deal never read) and values
every legal action in each of them, then averages. The same worlds serve every action, and in a
world every action's rollouts draw the same random numbers (common random numbers): the luck of
the deal, which dwarfs what one card changes, cancels from the comparison of two actions.

A world is valued exactly by ``solve(world)`` when one is given and it takes the position (the
double-dummy solver, :func:`solver_for`: every card is known in a world), otherwise by rollouts:
the action is applied and play goes on to the game's horizon by a playout policy (uniformly
random legal moves unless one is given; the arena passes the search bot's). Both give values in
the game's own units, counted from the decision to the horizon (:data:`MEASURES`):

* whist: tricks the seat's side wins from here to the end of the deal;
* tennis whist: tricks the seat wins from here to the end of the round;
* forty-five: the deal's points for the seat's side, minus the other side's (one side scores);
* spoil five: chips the seat gains when the deal is settled: the pool if it wins it (plus one
  from every other player for a jinx won), -1 when another player wins a jinx, 0 when another
  wins the pool, its own stake in the pool when the deal is spoiled (the pool carries over);
* tennis: the game in play, 1 won and 0 lost (a mean is the chance of winning it).

These are the exact solver's units (``engine.solver``), so exact and rollout values compare.
Everything is reproducible: the same state, seed and arguments give the same values.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.core import Action, Event, MatchState
from engine.errors import EngineError
from engine.games.forty_five import side_names
from engine.solver import SolverError, unit
from engine.solver import solve as solve_exactly

__all__ = [
    "MEASURES",
    "ActionValue",
    "Analysis",
    "Measure",
    "Playout",
    "Policy",
    "Solve",
    "analyze",
    "measure_for",
    "random_policy",
    "solver_for",
]

#: An exact valuation of a world: each legal action's value by its position in
#: ``world.legal_actions()``, in the game's units (:data:`MEASURES`), or ``None`` when the
#: position is not one it takes (a bid, a game it does not solve, too big a search).
Solve = Callable[[MatchState], Mapping[int, float] | None]

#: Longest rollout, in decisions: a guard, far past any horizon.
MAX_STEPS = 5_000


class Playout(Protocol):
    """One rollout's player of every seat: made fresh for each rollout, it applies the moves
    (so it can follow the play, as the search's policy follows the trick) and chooses them."""

    def apply(self, state: MatchState, action: Action) -> None:
        """Apply ``action`` (the analysed one first, then the playout's own choices)."""

    def choose(self, state: MatchState, rng: random.Random) -> Action:
        """The move of the seat to move in ``state``, drawing any chance from ``rng``."""


#: A playout policy: given a world at the decision (any of them: the deciding seat sees the
#: same in each), a maker of fresh :class:`Playout` s, one per rollout.
Policy = Callable[[MatchState], Callable[[], Playout]]


class _RandomPlayout:
    """Uniformly random legal moves."""

    __slots__ = ()

    def apply(self, state: MatchState, action: Action) -> None:
        state.apply(action)

    def choose(self, state: MatchState, rng: random.Random) -> Action:
        legal = state.legal_actions()
        return legal[rng.randrange(len(legal))]


def random_policy(world: MatchState) -> Callable[[], Playout]:
    """The default playout policy: uniformly random legal moves for every seat."""
    return _RandomPlayout


def solver_for(game_id: str, max_nodes: int | None = None) -> Solve | None:
    """The exact solver (:func:`engine.solver.solve`) as a :data:`Solve` for ``game_id``, or
    ``None`` for a game it does not solve. A world it does not take (a decision outside trick
    play, more than ``max_nodes`` nodes of search) it declines: that decision is rolled out."""
    try:
        unit(game_id)
    except SolverError:
        return None

    def exact(world: MatchState) -> Mapping[int, float] | None:
        try:
            solution = solve_exactly(world, max_nodes=max_nodes)
        except SolverError:  # SolverLimit included: too big to solve within the budget
            return None
        return dict(enumerate(float(v) for v in solution.values))

    return exact


# --- what a horizon is worth, per game -------------------------------------------------------


class _Tally:
    """One rollout's count, for the deciding seat, of what the game's unit measures."""

    __slots__ = ("done", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.done = False

    def see(self, event: Event) -> None:
        """Take one event of the rollout into the count; set ``done`` at the horizon."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Measure:
    """A game's unit and horizon: what :func:`analyze` counts, and until when."""

    #: What values count: ``tricks``, ``points``, ``chips``, ``games``.
    unit: str
    #: What one horizon is called (a deal, a round, a game): "loss per deal" is per this.
    span: str
    #: Event kinds that end a horizon (one per deal, round or game played).
    horizon: frozenset[str]
    #: A fresh count for ``seat`` from ``state`` (the decision's world, before the action).
    tally: Callable[[MatchState, int], _Tally]


class _Tricks(_Tally):
    """Tricks won by the seats of ``mine`` until an event of ``end``."""

    __slots__ = ("end", "mine")

    def __init__(self, mine: frozenset[int], end: str) -> None:
        super().__init__()
        self.mine = mine
        self.end = end

    def see(self, event: Event) -> None:
        if event.kind == "trick":
            if event.data["winner"] in self.mine:
                self.value += 1.0
        elif event.kind == self.end:
            self.done = True


def _side_of(state: MatchState, seat: int) -> frozenset[int]:
    for side in state.game.sides(state.config) or ():
        if seat in side:
            return frozenset(side)
    return frozenset((seat,))


class _FortyFive(_Tally):
    """The deal's points: the scoring side's for the seat's side, against it otherwise."""

    __slots__ = ("mine",)

    def __init__(self, state: MatchState, seat: int) -> None:
        super().__init__()
        # Sides are N+S / E+W (seats 0 and 2 against 1 and 3), or P1 / P2: seat % 2 either way.
        self.mine = side_names(state.config.players)[seat % 2]

    def see(self, event: Event) -> None:
        if event.kind == "deal_score":
            points = float(_number(event.data["points"]))
            self.value = points if event.data["side"] == self.mine else -points
            self.done = True


class _SpoilFive(_Tally):
    """Chips the seat gains when the deal is settled (the solver's unit for spoil five)."""

    __slots__ = ("seat", "stake")

    def __init__(self, state: MatchState, seat: int) -> None:
        super().__init__()
        self.seat = seat
        stakes = getattr(state, "stakes", None)
        self.stake = float(stakes[seat]) if isinstance(stakes, list) else 0.0

    def see(self, event: Event) -> None:
        if event.kind == "pool_won":
            chips = _number(event.data["chips"])
            bonus = _number(event.data["jinx_bonus"])
            if event.data["seat"] == self.seat:
                self.value = float(chips + bonus)
            else:
                self.value = -1.0 if bonus else 0.0
            self.done = True
        elif event.kind == "spoil":
            self.value = self.stake  # the pool carries over: the seat's stake is still in it
            self.done = True


class _Tennis(_Tally):
    """The game in play: 1 when the seat's side wins it, else 0."""

    __slots__ = ("side",)

    def __init__(self, seat: int) -> None:
        super().__init__()
        self.side = seat % 2  # P1 / A is side 0 (seats 0 and 2), P2 / B side 1

    def see(self, event: Event) -> None:
        if event.kind == "game":
            won = 0 if str(event.data["winner"]) in ("P1", "A") else 1
            self.value = 1.0 if won == self.side else 0.0
            self.done = True


def _number(value: object) -> int:
    if not isinstance(value, int):
        raise EngineError(f"expected a whole number in an event, got {value!r}")
    return value


#: Per game: the unit, the horizon and the count (the module's docstring says what each is).
MEASURES: dict[str, Measure] = {
    "whist": Measure(
        "tricks",
        "deal",
        frozenset({"deal_score"}),
        lambda state, seat: _Tricks(_side_of(state, seat), "deal_score"),
    ),
    "tennis_whist": Measure(
        "tricks",
        "round",
        frozenset({"round_end"}),
        lambda state, seat: _Tricks(frozenset((seat,)), "round_end"),
    ),
    "forty_five": Measure("points", "deal", frozenset({"deal_score"}), _FortyFive),
    "spoil_five": Measure(
        "chips",
        "deal",
        frozenset({"pool_won", "spoil"}),
        lambda state, seat: _SpoilFive(state, seat),
    ),
    "tennis": Measure("games", "game", frozenset({"game"}), lambda state, seat: _Tennis(seat)),
}


def measure_for(game_id: str) -> Measure:
    """The unit and horizon :func:`analyze` uses for ``game_id``; :class:`EngineError` if none."""
    try:
        return MEASURES[game_id]
    except KeyError:
        raise EngineError(
            f"no analysis for {game_id}: it knows {', '.join(sorted(MEASURES))}"
        ) from None


# --- the analysis ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActionValue:
    """One legal action's value over the worlds."""

    #: The action.
    action: Action
    #: Its mean value, in the game's units.
    mean: float
    #: The standard error of that mean over the worlds (0.0 with a single world).
    se: float
    #: Worlds it was valued in.
    n: int
    #: Its value in each world, in the order the worlds were drawn (the same for every action).
    samples: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Analysis:
    """What :func:`analyze` found at one decision."""

    #: The game's id.
    game: str
    #: The deciding seat.
    seat: int
    #: What the values count (:attr:`Measure.unit`).
    unit: str
    #: ``exact`` (every world solved) or ``rollout``.
    method: str
    #: The seed the worlds and rollouts were drawn from.
    seed: int
    #: Worlds drawn.
    worlds: int
    #: Rollouts per world and action (1 when exact).
    rollouts_per_world: int
    #: Every legal action's value, in the state's canonical order.
    values: tuple[ActionValue, ...]

    def best(self) -> ActionValue:
        """The action of the highest mean (the first in canonical order on a tie)."""
        return max(self.values, key=lambda v: v.mean)

    def value_of(self, action: Action | str) -> ActionValue:
        """One legal action's value (the action or its text)."""
        text = action if isinstance(action, str) else action.text
        for v in self.values:
            if v.action.text == text:
                return v
        raise ValueError(f"{text!r} is not a legal action here")

    def loss(self, action: Action | str) -> tuple[float, float]:
        """What ``action`` costs against the best, and the standard error of that difference
        taken world by world (paired: much smaller than either mean's)."""
        chosen, best = self.value_of(action), self.best()
        diffs = [b - c for b, c in zip(best.samples, chosen.samples, strict=True)]
        return max(0.0, best.mean - chosen.mean), _standard_error(diffs)


def _standard_error(xs: Sequence[float]) -> float:
    n = len(xs)
    if n < 2:
        return 0.0
    mean = sum(xs) / n
    return math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1) / n)


def analyze(
    state: MatchState,
    seat: int,
    *,
    worlds: int = 16,
    seed: int = 0,
    solve: Solve | None = None,
    rollout: Policy | None = None,
    rollouts_per_world: int = 1,
) -> Analysis:
    """The value of each legal action at ``seat``'s decision in ``state``, over ``worlds``
    worlds drawn from what ``seat`` knows; ``state`` is left unchanged.

    ``solve`` values a world exactly (:data:`Solve`); when it is not given, or declines any of
    the worlds, every world is valued by ``rollouts_per_world`` rollouts per action under the
    ``rollout`` policy (:func:`random_policy` by default). Raises ``ValueError`` when ``seat``
    is not the seat to move or a count is below 1, :class:`EngineError` for a game with no
    :data:`MEASURES` entry.
    """
    if state.to_move is None or state.to_move != seat:
        raise ValueError(f"seat {seat} is not to move (seat to move: {state.to_move})")
    if worlds < 1 or rollouts_per_world < 1:
        raise ValueError("worlds and rollouts_per_world must be at least 1")
    measure = measure_for(state.game.id)
    legal = state.legal_actions()
    rng = random.Random(seed)
    sampled = [state.determinize(seat, rng) for _ in range(worlds)]
    table = _solved(sampled, solve, len(legal)) if solve is not None else None
    method, per_world = "exact", 1
    if table is None:
        method, per_world = "rollout", rollouts_per_world
        make = (rollout or random_policy)(sampled[0])
        table = [_rollouts(world, seat, legal, measure, make, rng, per_world) for world in sampled]
    values = []
    for i, action in enumerate(legal):
        samples = tuple(row[i] for row in table)
        values.append(
            ActionValue(action, sum(samples) / worlds, _standard_error(samples), worlds, samples)
        )
    return Analysis(
        game=state.game.id,
        seat=seat,
        unit=measure.unit,
        method=method,
        seed=seed,
        worlds=worlds,
        rollouts_per_world=per_world,
        values=tuple(values),
    )


def _solved(sampled: Sequence[MatchState], solve: Solve, actions: int) -> list[list[float]] | None:
    """Every world's values by ``solve``, or ``None`` as soon as it declines one (then every
    world is rolled out, so one decision's values are all of one method)."""
    table = []
    for world in sampled:
        found = solve(world)
        if found is None:
            return None
        table.append([float(found[i]) for i in range(actions)])
    return table


def _rollouts(
    world: MatchState,
    seat: int,
    legal: Sequence[Action],
    measure: Measure,
    make: Callable[[], Playout],
    rng: random.Random,
    per_world: int,
) -> list[float]:
    """Each action's mean over ``per_world`` rollouts in ``world``; the k-th rollout of every
    action draws the same random numbers."""
    totals = [0.0] * len(legal)
    for _ in range(per_world):
        seed = rng.getrandbits(64)
        for i, action in enumerate(legal):
            twin = random.Random(seed)
            totals[i] += _rollout(world.clone(twin), seat, action, measure, make(), twin)
    return [t / per_world for t in totals]


def _rollout(
    state: MatchState,
    seat: int,
    action: Action,
    measure: Measure,
    playout: Playout,
    rng: random.Random,
) -> float:
    """Apply ``action``, then the playout's moves until the horizon; the seat's count there."""
    tally = measure.tally(state, seat)
    seen = len(state.events)
    playout.apply(state, action)
    for _ in range(MAX_STEPS):
        events = state.events
        while seen < len(events):
            tally.see(events[seen])
            seen += 1
            if tally.done:
                return tally.value
        if state.to_move is None:
            break
        playout.apply(state, playout.choose(state, rng))
    return tally.value
