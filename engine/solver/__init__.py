"""An exact solver for a trick game's deal with every card known (double dummy).

``solve(state)`` gives the value of every legal action of the seat to move, in the game's own
units, searched to the end of the deal (:mod:`engine.solver.deals` says what each game's value
is; docs/engine.md, *Solving a deal*, the conventions). Pure and deterministic, like the rest of
the engine: the same state gives the same values and node count.

The state must show every card: a real match state, or one from ``state.determinize(seat, rng)``
for a seat's guess at the hidden ones. More than two sides (spoil five, tennis whist with three
or more players) are solved *paranoid*: the seat to move against all the others together, who
minimise its value. That makes every game a two-sided zero-sum search (alpha-beta prunes, and a
value is a guarantee: the seat gets at least this against any play), where max^n would need each
player's own utility, tie-breaks among indifferent players and could not prune deeply.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from engine.core import Action, MatchState
from engine.solver.deals import UNITS, TrickDeal, build
from engine.solver.search import INF, Search, SolverError, SolverLimit

try:  # the C search of whist and tennis whist (engine/solver/_native.c), where it is built
    import engine.solver._native as _native

    NATIVE = True
except ImportError:  # pragma: no cover - a build without a C compiler
    NATIVE = False


@dataclass(frozen=True, slots=True)
class Solution:
    """What :func:`solve` found: each legal action's value for the seat to move."""

    #: The game's id.
    game: str
    #: The seat to move, whose side the values are for.
    seat: int
    #: What the values count: ``tricks`` (whist, tennis_whist), ``points`` (forty_five) or
    #: ``chips`` (spoil_five).
    unit: str
    #: The legal actions, in the state's canonical order.
    actions: tuple[Action, ...]
    #: Each action's value, in the same order: the seat's side's best result from here when it
    #: plays that action and every seat plays perfectly after it.
    values: tuple[int, ...]
    #: Search nodes visited (a measure of the work; the same on every run).
    nodes: int

    @property
    def value(self) -> int:
        """The position's value: the best action's."""
        return max(self.values)

    def best(self) -> tuple[Action, ...]:
        """Every action of the best value, in canonical order."""
        top = self.value
        return tuple(a for a, v in zip(self.actions, self.values, strict=True) if v == top)

    def value_of(self, action: Action | str) -> int:
        """The value of one legal action (an :class:`Action` or its text, ``play:AS``)."""
        text = action if isinstance(action, str) else action.text
        for a, v in zip(self.actions, self.values, strict=True):
            if a.text == text:
                return v
        raise ValueError(f"{text!r} is not a legal action here")

    def loss(self, action: Action | str) -> int:
        """What ``action`` costs against the best: 0 for a best action, else positive."""
        return self.value - self.value_of(action)


def unit(game_id: str) -> str:
    """The unit of the values of ``game_id``'s solutions; :class:`SolverError` when unsolved."""
    try:
        return UNITS[game_id]
    except KeyError:
        raise SolverError(
            f"no solver for {game_id}: it solves {', '.join(sorted(UNITS))}"
        ) from None


def solvable(state: MatchState) -> str | None:
    """``None`` when :func:`solve` takes ``state``, else the one-line reason it would raise."""
    try:
        build(state)
    except SolverError as err:
        return str(err)
    return None


def solve(
    state: MatchState, *, max_nodes: int | None = None, native: bool | None = None
) -> Solution:
    """The value of every legal action of the seat to move, with every card known.

    ``state`` is left unchanged. ``max_nodes`` bounds the work: past it :class:`SolverLimit` is
    raised (a caller then estimates instead). Raises :class:`SolverError` for a position with
    nothing to solve: the match over, a game without a solver, or a decision that is no part of
    trick play (tennis whist's nomination of trumps, a dealer robbing a turned-up ace). Spoil's
    decisions inside trick play are solved as actions like the cards: the ace of trumps' holder
    announcing, robbing or staying silent, and claim or jinx after tricks 1-3.

    Whist and tennis whist run the C search (where :data:`NATIVE`: it is built) unless ``native``
    is False; ``native=True`` insists that it is built (:class:`SolverError` otherwise). Both give
    the same values; node counts differ a little. Spoil's games always search in Python.
    """
    deal = build(state)
    actions = state.legal_actions()
    if native and not NATIVE:
        raise SolverError("the solver's C search is not built here (engine/solver/_native.c)")
    if isinstance(deal, TrickDeal) and native is not False and NATIVE:
        return _solve_native(state, deal, actions, max_nodes)
    search = Search(deal, max_nodes)
    seat = deal.to_move()
    choice = deal.decision()
    values: list[int] = []
    guess = 0
    if choice is not None:
        if len(choice[1]) != len(actions):
            raise AssertionError(f"solver options {len(choice[1])} != legal actions {len(actions)}")
        for i in range(len(actions)):
            guess = search.exact(partial(search.option, choice, i), guess)
            values.append(guess)
    else:
        by_card: dict[int, int] = {}
        runs = {run[0]: run for run in deal.runs(seat)}
        for top in deal.order(seat, list(runs)):
            guess = search.exact(partial(search.after, top), guess)
            by_card.update(dict.fromkeys(runs[top], guess))
        if len(by_card) != len(actions):
            raise AssertionError(f"solver plays {sorted(by_card)} != legal {actions}")
        values = [by_card[_card(a)] for a in actions]
    return Solution(
        game=state.game.id,
        seat=seat,
        unit=UNITS[state.game.id],
        actions=actions,
        values=tuple(values),
        nodes=search.nodes,
    )


def _solve_native(
    state: MatchState, deal: TrickDeal, actions: tuple[Action, ...], max_nodes: int | None
) -> Solution:
    limit = max_nodes if max_nodes is not None else 1 << 62
    found = _native.solve(
        deal.hands,
        deal.nxt,
        [int(m) for m in deal.maxside],
        deal.trump,
        deal.trick_cards,
        deal.trick_seats,
        deal.leader,
        limit,
    )
    if found is None:
        raise SolverLimit(f"the search took more than {limit} nodes")
    pairs, nodes = found
    by_card = dict(pairs)
    if len(by_card) != len(actions):
        raise AssertionError(f"solver plays {sorted(by_card)} != legal {actions}")
    return Solution(
        game=state.game.id,
        seat=deal.to_move(),
        unit=UNITS[state.game.id],
        actions=actions,
        values=tuple(by_card[_card(a)] for a in actions),
        nodes=nodes,
    )


def _card(action: Action) -> int:
    # The trick games' plays are actions 0..51 of their spaces: the index is the card.
    if action.kind != "play" or not 0 <= action.index < 52:
        raise AssertionError(f"not a play: {action}")
    return action.index


__all__ = ["INF", "NATIVE", "Solution", "SolverError", "SolverLimit", "solvable", "solve", "unit"]
