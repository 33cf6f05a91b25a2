"""Golden playthroughs: one digest per game configuration and seed of everything a random
playout shows (every legal action list, the mover's observation, every event, the result),
so that a change meant to be invisible (a faster engine) is proved so, and a change of rules
is noticed.

``python -m tests.engine.golden`` rewrites ``golden_playthroughs.json`` beside this file; do that
only for a change of rules or of what the engine shows, and say so in the commit.
``tests/engine/test_golden.py`` replays every entry and compares.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from engine import get_game

#: Where the digests live.
PATH = Path(__file__).with_name("golden_playthroughs.json")
#: (game id, players, options) played, each with every seed of :data:`SEEDS`.
CONFIGS: tuple[tuple[str, int, dict[str, Any]], ...] = (
    ("whist", 4, {}),
    ("tennis_whist", 2, {}),
    ("tennis_whist", 4, {}),
    ("spoil_five", 2, {}),
    ("spoil_five", 5, {}),
    ("forty_five", 2, {}),
    ("forty_five", 4, {}),
    ("tennis", 2, {}),
    ("tennis", 4, {}),
    ("tennis", 4, {"control": "players"}),
)
SEEDS = (1, 2)


def _line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def playthrough(game_id: str, players: int, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """Play one match with uniformly random choices drawn from ``random.Random(seed)``; the
    number of decisions and the SHA-256 of what was shown, in order."""
    game = get_game(game_id)
    state = game.new_match(game.configure(players, options), seed)
    rng = random.Random(seed)
    digest = hashlib.sha256()
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        digest.update(_line([seat, [a.text for a in legal], state.observation(seat).to_dict()]))
        state.apply(legal[rng.randrange(len(legal))])
    for event in state.events:
        digest.update(_line(event.to_dict()))
    result = state.result()
    assert result is not None
    digest.update(_line(result.to_dict()))
    return {
        "game": game_id,
        "players": players,
        "options": options,
        "seed": seed,
        "decisions": state.decisions,
        "sha256": digest.hexdigest(),
    }


def every_playthrough() -> list[dict[str, Any]]:
    """Every configuration with every seed."""
    return [playthrough(g, n, opts, seed) for g, n, opts in CONFIGS for seed in SEEDS]


def main() -> int:
    entries = every_playthrough()
    document = {
        "_generated_by": "python -m tests.engine.golden (tests/engine/golden.py); do not edit",
        "playthroughs": entries,
    }
    PATH.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {len(entries)} playthroughs to {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
