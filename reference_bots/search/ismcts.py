"""Single-observer information-set Monte Carlo tree search (Cowling, Powley & Whitehouse 2012).

One tree for the deciding seat's information set. Each iteration:

1. **sample** a full state consistent with what the seat knows (a determinization);
2. **select** down the tree with UCB1, among the actions legal *in this sample* only: a child's
   availability counts the iterations in which it could have been chosen, and stands in for its
   parent's visits in the exploration term, so rarely possible moves are not over-explored;
3. **expand** one untried action, then **roll out** to the horizon (:mod:`.rollout`);
4. **back up** the values: each node keeps the total for the seat that moved into it, so every
   seat plays to its own interest in the tree (partners share a side's value).

Actions are matched by their text, the same in every sample (``play:QS``). The answer is the
root's most visited action.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from engine import MatchState
from reference_bots.search.rollout import Rollout, Values

#: UCB1's exploration constant, for values in [-1, 1].
EXPLORATION = 0.3


class Node:
    """One action's node: how often it was tried, could have been, and what it earned."""

    __slots__ = ("available", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[str, Node] = {}
        self.visits = 0
        self.available = 0
        self.total = 0.0  # summed values for the seat that chose this node's action


def search(
    sample: Callable[[], MatchState],
    rollout: Rollout,
    rng: random.Random,
    more: Callable[[int], bool],
    exploration: float = EXPLORATION,
) -> dict[str, int]:
    """Run iterations while ``more(iterations done)``; the root's visits by action text."""
    root = Node()
    done = 0
    while more(done):
        state = sample()
        sim = rollout.start()
        node = root
        path: list[tuple[Node, int]] = []
        values: Values | None = None
        while values is None and state.to_move is not None:
            mover = state.to_move
            legal = state.legal_actions()
            children = node.children
            untried = [a for a in legal if a.text not in children]
            for a in legal:
                child = children.get(a.text)
                if child is not None:
                    child.available += 1
            if untried:
                action = untried[rng.randrange(len(untried))]
                node = children[action.text] = Node()
                node.available = 1
                path.append((node, mover))
                values = sim.step(state, action)
                if values is None:
                    values = sim.play_out(state, rng)
                break
            best, best_score = legal[0], -math.inf
            for a in legal:
                child = children[a.text]
                score = child.total / child.visits + exploration * math.sqrt(
                    math.log(child.available) / child.visits
                )
                if score > best_score:
                    best, best_score = a, score
            node = children[best.text]
            path.append((node, mover))
            values = sim.step(state, best)
        if values is None:  # the sample's match was over at the root: nothing to learn
            values = list(state.returns())
        for visited, mover in path:
            visited.visits += 1
            visited.total += values[mover]
        done += 1
    return {text: child.visits for text, child in root.children.items()}
