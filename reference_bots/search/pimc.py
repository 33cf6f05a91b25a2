"""Perfect-information Monte Carlo with paired samples: every root action tried in the same
sampled worlds.

Each iteration samples one full state consistent with what the seat knows, then plays every
root action in a copy of it and rolls each out to the horizon with the same random numbers. The
actions are compared world by world, so the luck of the deal, which dwarfs the difference one
card makes, cancels from the comparison (common random numbers). The answer is the action with
the best mean; the bot keeps the rule-based move unless another beats it by more than twice the
standard error of their paired difference. A search whose best action already leads every
other by :data:`CLEAR_SIGMAS` standard errors stops before its budget: obvious decisions cost
little, and the time goes to the close ones.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cardarena import Action

from engine import MatchState
from reference_bots.search.rollout import Rollout


@dataclass(slots=True)
class Tally:
    """Per root action: values summed over worlds, and each world's value in order."""

    values: dict[str, list[float]] = field(default_factory=dict)

    def mean(self, text: str) -> float:
        v = self.values[text]
        return sum(v) / len(v)

    def better_by(self, a: str, b: str) -> tuple[float, float]:
        """The mean of ``a``'s value less ``b``'s, world by world, and its standard error."""
        diffs = [x - y for x, y in zip(self.values[a], self.values[b], strict=True)]
        n = len(diffs)
        mean = sum(diffs) / n
        if n < 2:
            return mean, math.inf
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        return mean, math.sqrt(var / n)


#: Worlds between checks whether the answer is already clear, and the fewest before the first.
CHECK_EVERY, MIN_WORLDS = 8, 16
#: The search stops early when its best action leads every other by this many standard errors.
CLEAR_SIGMAS = 3.0


def clear_winner(tally: Tally) -> bool:
    """Whether the best action's lead over every other is beyond doubt (paired differences)."""
    texts = list(tally.values)
    best = max(texts, key=tally.mean)
    for other in texts:
        if other != best:
            gain, error = tally.better_by(best, other)
            if gain <= CLEAR_SIGMAS * error:
                return False
    return True


def search(
    sample: Callable[[], MatchState],
    rollout: Rollout,
    rng: random.Random,
    more: Callable[[int], bool],
    legal: Sequence[Action],
) -> Tally:
    """Worlds while ``more(playouts done)`` and the best action is not yet clear; each world
    plays every action of ``legal``."""
    tally = Tally({a.text: [] for a in legal})
    seat_values = tally.values
    done = worlds = 0
    while more(done):
        if worlds >= MIN_WORLDS and worlds % CHECK_EVERY == 0 and clear_winner(tally):
            break
        worlds += 1
        world = sample()
        mover = world.to_move
        assert mover is not None
        seed = rng.getrandbits(64)
        for action in legal:
            # The same random numbers for every action: the rollouts differ only by the action.
            twin = random.Random(seed)
            state = world.clone(twin)
            sim = rollout.start()
            values = sim.step(state, state.find_action(action.text))
            if values is None:
                values = sim.play_out(state, twin)
            seat_values[action.text].append(values[mover])
            done += 1
    return tally
