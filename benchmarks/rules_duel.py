"""A rule-based strategy against its own earlier version, on duplicate deals, in process.

    python -m benchmarks.rules_duel spoil_five 300 --against HEAD~1 --option rounds=1
    python -m benchmarks.rules_duel forty_five 4000 --against HEAD~1 --option points_to_win=5

The working tree's ``reference_bots/rules`` plays one side of the table (a seat, or a
partnership) and the version at ``--against`` (any git revision) every other seat; each seed is
played once for every side, so the deal's luck cancels. The figure is the new side's match return
less the others' mean, with its standard error over seeds. ``--against random`` measures the
strategy against uniformly random play instead. This is how a change to a rules bot is judged
before the ladder is rerun (docs/bots.md).
"""

from __future__ import annotations

import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import engine
from benchmarks.common import duel_parser, game_options
from engine import OptionValue, get_game
from reference_bots.rules import Strategy, strategy_for

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "reference_bots"


def strategy_at(revision: str, game_id: str, workdir: Path) -> Strategy:
    """``game_id``'s rule-based strategy as it was at git ``revision``.

    The old package is unpacked into ``workdir`` and imported under its own name while the
    current one is set aside, so its modules import each other, not today's.
    """
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, f"{PACKAGE}/rules", f"{PACKAGE}/__init__.py"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise SystemExit(f"rules_duel: cannot read {revision!r}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(workdir)], input=archive.stdout, check=True)
    current = {k: m for k, m in sys.modules.items() if k.split(".")[0] == PACKAGE}
    for name in current:
        del sys.modules[name]
    sys.path.insert(0, str(workdir))
    try:
        old: Strategy = importlib.import_module(f"{PACKAGE}.rules.{game_id}").choose
    finally:
        sys.path.remove(str(workdir))
        for name in [k for k in sys.modules if k.split(".")[0] == PACKAGE]:
            del sys.modules[name]
        sys.modules.update(current)
    return old


def main() -> None:
    parser = duel_parser(__doc__)
    parser.add_argument("--against", default="HEAD", help="a git revision, or 'random'")
    args = parser.parse_args()
    options: dict[str, OptionValue] = dict(game_options(args.option))
    new = strategy_for(args.game)
    with tempfile.TemporaryDirectory() as workdir:
        old: Strategy = (
            (lambda obs, legal, rng: rng.randrange(len(legal)))
            if args.against == "random"
            else strategy_at(args.against, args.game, Path(workdir))
        )
        probe = engine.make(args.game, players=args.players, **options)
        sides = get_game(args.game).sides(probe.config) or [(s,) for s in range(probe.num_seats)]
        margins: list[float] = []
        started = time.perf_counter()
        for seed in range(args.start, args.start + args.seeds):
            values: list[float] = []
            for side in sides:
                state = engine.make(args.game, players=args.players, seed=seed, **options)
                rng = random.Random(seed)
                while (seat := state.to_move) is not None:
                    legal = state.legal_actions()
                    strategy = new if seat in side else old
                    state.apply(legal[strategy(state.observation(seat).to_dict(), legal, rng)])
                returns = state.returns()
                mine = statistics.mean(returns[s] for s in side)
                rest = statistics.mean(returns[s] for s in range(state.num_seats) if s not in side)
                values.append(mine - rest)
            margins.append(statistics.mean(values))
    error = statistics.stdev(margins) / len(margins) ** 0.5 if len(margins) > 1 else float("inf")
    print(
        f"{args.game}{f' {options}' if options else ''}, rules against {args.against}: "
        f"{statistics.mean(margins):+.3f} ± {error:.3f} in match returns over "
        f"{len(margins)} seeds × {len(sides)} seatings; {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
