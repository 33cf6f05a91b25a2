"""The search bot's rollout policy as the engine's analyser takes it (``engine.analysis``).

:func:`search_policy` is an :data:`engine.analysis.Policy`: the careful beginner of
:mod:`.rollout` (cheapest winner, lowest loser, the rules bot's leads in whist; returning every
ball in tennis) plays every seat of a rollout, following the trick as it goes. The analyser
keeps its own horizon and units; only the moves come from here. A game the search does not know
gets uniformly random moves.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine import Action, MatchState
from engine.analysis import Playout, random_policy
from reference_bots.search.rollout import Rollout, Simulation, side_of_seats, supported


class SearchPlayout:
    """One rollout played by the search's policy (:class:`engine.analysis.Playout`)."""

    __slots__ = ("sim",)

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def apply(self, state: MatchState, action: Action) -> None:
        self.sim.step(state, action)  # follows the trick; the horizon's value is the engine's

    def choose(self, state: MatchState, rng: random.Random) -> Action:
        move: Action = self.sim.policy(state, rng)
        return move


def search_policy(world: MatchState) -> Callable[[], Playout]:
    """Fresh search playouts for the decision of ``world``'s seat to move (built once, from
    what that seat sees)."""
    seat = world.to_move
    if seat is None or not supported(world.game.id):
        return random_policy(world)
    rollout = Rollout(world.game.id, world.observation(seat).to_dict(), side_of_seats(world))
    return lambda: SearchPlayout(rollout.start())
