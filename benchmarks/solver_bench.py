"""The exact solver's speed (engine.solver): solves per second per game, whist beside endplay.

A solve is :func:`engine.solver.solve` on one position: the value of every legal action of the
seat to move. Positions are the first decision of a deal's trick play in seeded random matches
(a full deal), and for whist also after four tricks (eight cards left), where the pure-Python
search is quick enough to time many. A full whist deal that needs more than ``max_nodes`` search
nodes counts as over budget (the row says how many did). endplay (python bindings of DDS, Bo
Haglund's bridge double-dummy solver, in C++) solves the same whist positions, all its cards'
values (``solve_board``), when it is installed (the dev extra): whist's play is bridge's with a
fixed trump.
"""

from __future__ import annotations

import random
import time
from typing import Any

import engine
from engine import MatchState
from engine.cards import CARD_TEXT
from engine.solver import NATIVE, SolverLimit, solvable, solve

#: (row label, game, players, tricks played before the position, C search). Whist and tennis
#: whist search in C where it is built (engine/solver/_native.c), spoil's games in Python; the
#: Python rows of whist time the reference search on the same positions.
SUBJECTS = (
    ("whist, full deal (C)", "whist", 4, 0, True),
    ("whist, 8 cards left (C)", "whist", 4, 4, True),
    ("whist, 8 cards left (Python)", "whist", 4, 4, False),
    ("tennis_whist 4p, round 1, 8 cards (C)", "tennis_whist", 4, 0, True),
    ("forty_five 4p, full deal", "forty_five", 4, 0, False),
    ("forty_five 2p, full deal", "forty_five", 2, 0, False),
    ("spoil_five 5p, full deal", "spoil_five", 5, 0, False),
)


def position(game: str, players: int, seed: int, tricks: int) -> MatchState:
    """The first solvable position of a seeded random match after ``tricks`` tricks."""
    state = engine.make(game, players=players, seed=seed)
    rng = random.Random(seed)
    while True:
        done = len(state.finished_tricks)  # type: ignore[attr-defined]
        if done >= tricks and not state.trick_cards and solvable(state) is None:  # type: ignore[attr-defined]
            return state
        state.apply(rng.choice(state.legal_actions()))


def endplay_values(state: MatchState) -> dict[str, int] | None:
    """endplay's tricks for the side to move per legal card (``play:`` text), or ``None`` when
    endplay is not installed. Seats 0..3 are N, E, S, W in both; suits map by letter."""
    try:
        from endplay.dds import solve_board
        from endplay.types import Deal, Denom, Player
    except ImportError:
        return None
    hands = []
    for seat in range(4):
        held = state.hands[seat]  # type: ignore[attr-defined]
        hands.append(
            ".".join(
                "".join(
                    CARD_TEXT[c][0] for c in range(s * 13 + 12, s * 13 - 1, -1) if held >> c & 1
                )
                for s in (3, 2, 1, 0)  # PBN lists spades, hearts, diamonds, clubs
            )
        )
    deal = Deal("N:" + " ".join(hands))
    deal.first = Player(state.trick_leader)  # type: ignore[attr-defined]
    deal.trump = Denom(3 - state.trump)  # type: ignore[attr-defined]
    # The trick in progress: endplay takes the played cards from no hand (ours hold them no more).
    for c in state.trick_cards:  # type: ignore[attr-defined]
        hands_before = deal.curplayer
        deal.play(CARD_TEXT[c][1] + CARD_TEXT[c][0], from_hand=False)
        assert deal.curplayer != hands_before
    out = {}
    for card, tricks in solve_board(deal):
        text = str(card)  # "♠A"
        suit = "SHDC"["♠♥♦♣".index(text[0])]
        out[f"play:{text[1:].replace('10', 'T')}{suit}"] = int(tricks)
    return out


def run_solver(deals: int, max_nodes: int) -> dict[str, Any]:
    """Solves per second for each subject over ``deals`` seeded deals, and endplay's on whist."""
    rows: dict[str, Any] = {}
    for label, game, players, tricks, native in SUBJECTS:
        if native and not NATIVE:
            rows[label] = {"missing": "engine/solver/_native.c is not built"}
            continue
        positions = [position(game, players, seed, tricks) for seed in range(deals)]
        # The Python search visits some 20-60 thousand nodes a second, C about a million.
        budget = max_nodes if native else max_nodes // 40
        solved = over = nodes = 0
        seconds = 0.0
        agree = compared = 0
        ep_seconds = 0.0
        for state in positions:
            t0 = time.process_time()
            try:
                sol = solve(state, max_nodes=budget, native=native)
            except SolverLimit:
                over += 1
                seconds += time.process_time() - t0
                sol = None
            else:
                seconds += time.process_time() - t0
                solved += 1
                nodes += sol.nodes
            if game == "whist" and native:
                t0 = time.process_time()
                theirs = endplay_values(state)
                ep_seconds += time.process_time() - t0
                if theirs is not None and sol is not None:
                    compared += 1
                    agree += all(
                        theirs[a.text] == v for a, v in zip(sol.actions, sol.values, strict=True)
                    )
        row: dict[str, Any] = {
            "positions": len(positions),
            "solved": solved,
            "over_budget": over,
            "max_nodes": budget,
            "solves_per_s": solved / seconds if solved and seconds else None,
            "nodes_per_solve": nodes / solved if solved else None,
            "nodes_per_s": nodes / seconds if seconds else None,
        }
        if game == "whist" and native and ep_seconds:
            row["endplay_solves_per_s"] = len(positions) / ep_seconds
            row["endplay_agrees"] = f"{agree}/{compared}"
        rows[label] = row
    return {"subjects": rows}
