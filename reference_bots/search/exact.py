"""PIMC with exact values: every sampled world solved double dummy (``engine.solver``).

Near the end of a deal the rollouts' careful-beginner policy errs where it matters most (which
card to keep for the last trick, when to duck); the exact solver does not, and there it is
cheap: a world with a few cards a hand left solves in well under a millisecond in C (whist,
tennis whist) and in a few in Python (forty-five, spoil five). So once the seat's hand is down to
:data:`HAND_CARDS` cards, each sampled world (the bot's own ``determinize``, as rollout PIMC
samples them) is solved exactly, and each legal action is valued by its mean over the worlds.

One method per decision: a world the solver declines (past :data:`NODES` nodes, or a decision
outside trick play) makes the whole decision go back to the rollouts, so the actions' values
are never a mix of the two. Values are the solver's unit divided by :data:`SCALE` (roughly the
rollouts' [-1, 1]; the constant offset between them cancels when actions are compared within a
world). Deterministic: the worlds come from the bot's generator, and the solver is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from cardarena import Action

from engine import MatchState
from engine.solver import SolverError, solve
from reference_bots.search.pimc import CHECK_EVERY, MIN_WORLDS, Tally, clear_winner

#: Per game: solve once the seat holds at most this many cards (a game absent is never solved).
HAND_CARDS: dict[str, int] = {"whist": 6, "tennis_whist": 6, "forty_five": 4, "spoil_five": 2}
#: The games solved by default: whist, where it measured better (docs/bots.md). Tennis whist,
#: forty-five and spoil five measured no better, on the ladder or on duplicate deals against the
#: rollout-only search, so they keep the rollouts.
GAMES = frozenset({"whist"})
#: Per game: the node budget of one world's solve; past it the decision is rolled out instead.
#: C searches about a million nodes a second, Python 20-60 thousand: a few ms a world.
NODES: dict[str, int] = {
    "whist": 20_000,
    "tennis_whist": 20_000,
    "forty_five": 2_000,
    "spoil_five": 400,
}
#: Per game: the solver's unit over this is about the rollouts' scale (a trick of whist is
#: worth 2/13 of a deal's share, forty-five's deal 10 points, spoil's pool a few chips).
SCALE: dict[str, float] = {"whist": 6.5, "tennis_whist": 6.5, "forty_five": 10.0, "spoil_five": 5.0}


def applies(game: str, observation: Mapping[str, Any], games: Collection[str] = GAMES) -> bool:
    """Whether this decision is small enough to solve: one of ``games``, few cards in hand."""
    limit = HAND_CARDS.get(game) if game in games else None
    hand = observation.get("hand")
    return limit is not None and isinstance(hand, list) and 0 < len(hand) <= limit


def search(
    game: str,
    sample: Callable[[], MatchState],
    more: Callable[[int], bool],
    legal: Sequence[Action],
    max_nodes: int | None = None,
) -> Tally | None:
    """Worlds while ``more(actions valued)`` and the best is not yet clear, each solved exactly;
    ``None`` when a world is beyond the solver (the caller rolls the decision out)."""
    nodes = NODES[game] if max_nodes is None else max_nodes
    scale = SCALE[game]
    tally = Tally({a.text: [] for a in legal})
    done = worlds = 0
    while more(done):
        if worlds >= MIN_WORLDS and worlds % CHECK_EVERY == 0 and clear_winner(tally):
            break
        worlds += 1
        try:
            solution = solve(sample(), max_nodes=nodes)
        except SolverError:  # SolverLimit included
            return None
        by_text = {a.text: v for a, v in zip(solution.actions, solution.values, strict=True)}
        for action in legal:
            tally.values[action.text].append(by_text[action.text] / scale)
        done += len(legal)
    return tally


__all__ = ["GAMES", "HAND_CARDS", "NODES", "SCALE", "applies", "search"]
