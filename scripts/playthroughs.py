"""Write the golden playthroughs: a few seeded random matches of every game as text, one line per
decision (:func:`engine.testing.playthrough`), into ``tests/engine/playthroughs/``.

``tests/engine/test_playthroughs.py`` plays each file's match again and names the first line that
differs. Rewrite them (``make playthroughs``) only for a change of rules or of what the engine
shows, and say why in the commit; the diff shows what changed, decision by decision.

Usage: ``python scripts/playthroughs.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.options import OptionValue
from engine.testing import playthrough, playthrough_name

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "engine" / "playthroughs"
#: (game id, players, options) played, each with every seed of :data:`SEEDS`: every game, each
#: table size and seat control that plays differently.
CONFIGS: tuple[tuple[str, int, dict[str, OptionValue]], ...] = (
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


def cases() -> list[tuple[str, str, int, dict[str, OptionValue], int]]:
    """Every playthrough: (file name, game id, players, options, seed)."""
    return [
        (playthrough_name(g, n, opts, seed), g, n, opts, seed)
        for g, n, opts in CONFIGS
        for seed in SEEDS
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="directory of the text files")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    written = set()
    for name, game_id, players, options, seed in cases():
        lines = playthrough(game_id, players, options, seed)
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.add(name)
    for stale in sorted(p for p in out.glob("*.txt") if p.name not in written):
        stale.unlink()
        print(f"removed {stale}")
    print(f"wrote {len(written)} playthroughs to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
