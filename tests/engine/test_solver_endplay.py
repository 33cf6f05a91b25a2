"""Whist's solver values against endplay (DDS, the bridge double-dummy solver, in C++).

Whist's card play is bridge's with a fixed trump and partnerships N-S and E-W: the tricks the
side to move takes from here with each legal card must be DDS's. endplay is in the dev extra,
which `make test` installs: where it is missing the module fails to import, never skips.
"""

from __future__ import annotations

import random

import endplay  # noqa: F401  (the dev extra's: missing, this fails rather than skips)
import pytest

import engine
from benchmarks.solver_bench import endplay_values
from engine.solver import solve


@pytest.mark.parametrize("seed", range(12))
def test_whist_values_are_dds_values(seed: int) -> None:
    # Random positions with 5 to 7 cards a hand left, at a trick start or inside a trick.
    state = engine.make("whist", players=4, seed=seed)
    rng = random.Random(seed)
    for _ in range(24 + seed % 9):
        state.apply(rng.choice(state.legal_actions()))
    sol = solve(state)
    theirs = endplay_values(state)
    assert theirs == {a.text: v for a, v in zip(sol.actions, sol.values, strict=True)}
